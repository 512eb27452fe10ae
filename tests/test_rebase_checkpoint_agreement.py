"""The rebase receipt and the cursor checkpoint tell one story (SPEC §8.2).

prepare states twice whether a run accounted for every changed item: once in the semantic
rebase receipt (``uncited_change_count``, ``status``) and once per source in the checkpoint
(``preserve/rebase_incomplete`` when "an item neither cited by a fact or claim nor in a
conflict"). The receipt is computed by ``dcx.evidence.rebasing`` from the draft, the checkpoint by
``dcx.evidence.checkpoints`` from the stored evidence; this test builds random auto and agent accounts
over random changes and checks the two never disagree, and that the rows SPEC derives by hand
follow: a completed scan whose every required read verified is ready exactly when the receipt
cites all of its changes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dcx.evidence import rebasing
from dcx.evidence.assembler import Change, EvidenceDraft
from dcx.evidence.checkpoints import derive_rows
from dcx.state.keys import load_key
from dcx.state.refmap import RefMinter
from tests.support.fuzz import examples
from tests.support.sources import binding_block, configure, plane, source_block

NOW = "2026-11-29T18:00:00Z"
SOURCES = ("source:a", "source:b")


@pytest.fixture
def run(fresh_ws: Path):
    body = binding_block() + "".join(source_block(sid, f'"{sid[-1]}"') for sid in SOURCES)
    for sid in SOURCES:
        (fresh_ws / sid[-1]).mkdir()
    configure(fresh_ws, body)
    ws, _, _, _ = plane(fresh_ws)
    return RefMinter(ws, load_key(ws), record=False)


def _change(minter: RefMinter, sid: str, n: int, read: str | None) -> Change:
    kind = {"binary": "binary", "oversize": "oversize", "deleted": "deleted"}.get(
        read or "", "text"
    )
    revision = "deleted" if kind == "deleted" else f"{n:064x}"
    return Change(
        sid,
        f"f{n}.md",
        revision,
        "deleted" if kind == "deleted" else "modified",
        kind,
        minter.change_ref(sid, f"f{n}.md"),
        minter.revision_ref(sid, f"f{n}.md", revision),
        read,
        "text" if read == "verified" else None,
        NOW,
    )


def _scan_receipt(n: int, sid: str, changes: list[Change]) -> dict[str, Any]:
    """What prepare stores for a completed scan of ``sid`` (SPEC §5.4), from its changes."""
    return {
        "source_id": sid,
        "receipt_ref": f"decision-source-scan-{n:032x}",
        "status": "completed",
        "cursor_before_ref": f"source-cursor-{n:032x}",
        "cursor_after_ref": f"source-cursor-{n + 8:032x}",
        "changes": [
            {
                "change_ref": c.change_ref,
                "revision_ref": c.revision_ref,
                "observed_at": NOW,
                "content_kind": c.content_kind,
                "exact_read_verified": c.read_status == "verified",
            }
            for c in changes
            if c.source_id == sid
        ],
    }


@settings(max_examples=examples(60))
@given(
    picks=st.lists(
        st.tuples(
            st.sampled_from(SOURCES),
            st.sampled_from(("verified", "binary", "oversize", "deleted", "failed")),
        ),
        max_size=8,
    ),
    mode=st.sampled_from(("auto", "agent")),
    cite=st.data(),
)
def test_receipt_and_checkpoint_agree_on_what_is_accounted_for(run, picks, mode, cite) -> None:
    minter = run
    changes = [_change(minter, sid, n, read) for n, (sid, read) in enumerate(picks)]
    draft = EvidenceDraft(NOW, {})
    reader = None  # no recall and no earlier claims: neither account reads authority
    body: dict[str, Any] | None = None
    if mode == "auto":
        rebasing.auto(draft, changes, dict.fromkeys(SOURCES, "always"), reader, None, {}, minter)
    else:  # the agent cites a random subset, as facts or in one conflict
        chosen = [c for c in changes if cite.draw(st.booleans())]
        facts = [c for c in chosen if cite.draw(st.booleans())]
        body = {
            "changed_facts": [
                {"fact_id": f"fact-{i}", "summary": "A change", "change_ref": c.change_ref}
                for i, c in enumerate(facts)
            ]
        }
        in_conflict = [c.change_ref for c in chosen if c not in facts]
        if in_conflict:
            body["conflicts"] = [
                {
                    "conflict_id": "c1",
                    "summary": "They disagree",
                    "change_refs": in_conflict,
                    "conflict_rule": "canonical_revision_wins",
                    "status": "open",
                }
            ]
        rebasing.agent(draft, body, changes, reader, None, minter)
    values = rebasing.receipt_values(mode, body, changes, draft, NOW, None)
    receipts = [_scan_receipt(i, sid, changes) for i, sid in enumerate(SOURCES)]
    manifest = {sid: {"exact_read_policy": "always", "scan_mode": "incremental"} for sid in SOURCES}
    rows = {
        row["source_id"]: row for row in derive_rows(receipts, manifest, draft.records(), values)
    }

    cited = set(values["cited_change_refs"])
    assert values["uncited_change_count"] == len({c.change_ref for c in changes} - cited)
    for sid in SOURCES:
        mine = [c for c in changes if c.source_id == sid]
        transient = any(c.read_status == "failed" for c in mine)
        all_cited = all(c.change_ref in cited for c in mine)
        row = rows[sid]
        if transient:
            assert (row["disposition"], row["reason_code"]) == ("preserve", "exact_read_incomplete")
        elif all_cited:
            assert (row["disposition"], row["reason_code"]) == (
                "ready_after_writeback",
                "validated_rebase",
            )
        else:
            assert (row["disposition"], row["reason_code"]) == ("preserve", "rebase_incomplete")
    # the receipt is material_change only if no source is held back for want of a citation
    if values["status"] == "material_change":
        assert all(row["reason_code"] != "rebase_incomplete" for row in rows.values())
    if any(row["reason_code"] == "rebase_incomplete" for row in rows.values()):
        assert values["status"] == "incomplete"
