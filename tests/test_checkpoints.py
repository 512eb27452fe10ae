"""``dcx.evidence.checkpoints``: the cursor checkpoint rule of SPEC §8.2, as a pure function.

Oracles, none taken from the module itself:
- a hand table: one receipt per rule, its disposition read off SPEC §8.2 and the
  rule table of docs/decision-cycle.md (rules 0 and 4b are dcx's documented additions);
- a reference model written here from that table (``spec_rule``), checked against
  ``disposition`` on random receipts;
- properties SPEC implies: the verdict of a source depends on the *set* of its changes
  and of the cited refs (not their order, nor which kind of record cites a ref), more
  citations never make a source less ready, each row depends only on its own receipt,
  and the rows fit the published JSON Schema of ``decision_cursor_checkpoint_v0``.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from dcx.evidence.checkpoints import (
    cited_change_refs,
    derive_rows,
    disposition,
    read_incomplete,
    read_required,
)
from tests.support.workspace import REPO

READY, PRESERVE = "ready_after_writeback", "preserve"
CURSOR = "source-cursor-" + "c" * 32


def change(n: int, *, kind: str = "text", verified: bool = True) -> dict[str, Any]:
    return {
        "change_ref": f"source-change-{n:032x}",
        "revision_ref": f"source-revision-{n:032x}",
        "observed_at": "2026-11-29T18:00:00Z",
        "content_kind": kind,
        "exact_read_verified": verified,
    }


def receipt(
    *changes: dict[str, Any], status: str = "completed", after: str | None = CURSOR
) -> dict[str, Any]:
    return {"status": status, "cursor_after_ref": after, "changes": list(changes)}


def decide(
    rec: dict[str, Any],
    policy: str = "always",
    *,
    semantic: bool = False,
    baseline: bool = False,
    cited: set[str] | frozenset[str] = frozenset(),
    snapshot: bool = False,
) -> tuple[str, str]:
    return disposition(
        rec,
        policy,
        semantic_no_change=semantic,
        baseline=baseline,
        cited=set(cited),
        snapshot=snapshot,
    )


C1, C2 = change(1), change(2)
BOTH = {C1["change_ref"], C2["change_ref"]}

# (receipt, policy, flags, expected): one line per rule of SPEC §8.2, first rule that applies
TABLE = [
    # 0: a snapshot source is never committed, even when everything else would be ready
    (
        receipt(C1),
        "always",
        {"snapshot": True, "cited": BOTH},
        (PRESERVE, "snapshot_not_committed"),
    ),
    # 1: no cursor_after (also when the scan says no_change)
    (receipt(C1, after=None), "always", {"cited": BOTH}, (PRESERVE, "cursor_after_missing")),
    (receipt(status="no_change", after=None), "always", {}, (PRESERVE, "cursor_after_missing")),
    # 2: nothing new: ready whatever the policy, citations or flags
    (receipt(status="no_change"), "never", {}, (READY, "no_change")),
    (receipt(status="no_change"), "always", {"semantic": True}, (READY, "no_change")),
    # 3: failed / unavailable scans keep the cursor
    (receipt(status="failed"), "always", {"cited": BOTH}, (PRESERVE, "scan_incomplete")),
    (receipt(status="unavailable"), "always", {"baseline": True}, (PRESERVE, "scan_incomplete")),
    # 4: policy never: not even a baseline absorbs it (SPEC §4: only semantic_no_change would,
    # and rule 4 comes first: dcx keeps the documented order)
    (receipt(C1), "never", {"cited": BOTH}, (PRESERVE, "exact_read_disabled")),
    (receipt(C1), "never", {"baseline": True}, (PRESERVE, "exact_read_disabled")),
    (receipt(C1), "never", {"semantic": True}, (PRESERVE, "exact_read_disabled")),
    # 4b: a baseline adopts the source whole, unread items and all
    (receipt(change(1, verified=False)), "always", {"baseline": True}, (READY, "baseline_adopted")),
    # 5: a required read that neither verified nor reached a terminal outcome
    (
        receipt(C1, change(2, verified=False)),
        "always",
        {"cited": BOTH},
        (PRESERVE, "exact_read_incomplete"),
    ),
    (
        receipt(change(2, verified=False)),
        "material_change",
        {"semantic": True},
        (PRESERVE, "exact_read_incomplete"),
    ),
    # ... terminal outcomes are absorbable (SPEC §5.3): binary, oversize, deleted
    (
        receipt(
            change(1, kind="binary", verified=False), change(2, kind="oversize", verified=False)
        ),
        "always",
        {"cited": BOTH},
        (READY, "validated_rebase"),
    ),
    (
        receipt(change(1, kind="deleted", verified=False)),
        "always",
        {"cited": {C1["change_ref"]}},
        (READY, "validated_rebase"),
    ),
    # ... material_change skips reads of deletions (SPEC §4)
    (
        receipt(change(1, kind="deleted", verified=False)),
        "material_change",
        {"cited": {C1["change_ref"]}},
        (READY, "validated_rebase"),
    ),
    # 6: the agent's semantic no change absorbs every (read) item, cited or not
    (receipt(C1, C2), "always", {"semantic": True}, (READY, "semantic_no_change")),
    # 7: one changed item nobody cites
    (receipt(C1, C2), "always", {"cited": {C1["change_ref"]}}, (PRESERVE, "rebase_incomplete")),
    (receipt(C1), "always", {}, (PRESERVE, "rebase_incomplete")),
    # 8: every item cited
    (receipt(C1, C2), "always", {"cited": BOTH}, (READY, "validated_rebase")),
    (
        receipt(C1),
        "material_change",
        {"cited": BOTH | {"source-change-" + "f" * 32}},
        (READY, "validated_rebase"),
    ),
    # a completed scan with no items at all: nothing is uncited
    (receipt(), "always", {}, (READY, "validated_rebase")),
]


@pytest.mark.parametrize(("rec", "policy", "flags", "expected"), TABLE)
def test_each_rule_of_the_spec_table(rec, policy, flags, expected) -> None:
    assert decide(rec, policy, **flags) == expected


def test_read_required_and_incomplete_by_policy() -> None:
    """SPEC §4/§5.3: always reads every change, material_change every change but deletions, never none;
    a required read is incomplete unless it verified or ended in a terminal outcome."""
    text, deleted = change(1, verified=False), change(2, kind="deleted", verified=False)
    assert [read_required(p, text) for p in ("always", "material_change", "never")] == [
        True,
        True,
        False,
    ]
    assert [read_required(p, deleted) for p in ("always", "material_change", "never")] == [
        True,
        False,
        False,
    ]
    assert read_incomplete("always", text) and read_incomplete("material_change", text)
    assert not read_incomplete("never", text)
    for kind in ("binary", "oversize", "deleted"):
        assert not read_incomplete("always", change(3, kind=kind, verified=False)), kind
    assert not read_incomplete("always", change(4, verified=True))


# -- a reference model from the rule table, against random receipts --------------------------------

POLICIES = ("always", "material_change", "never")
STATUSES = ("completed", "no_change", "failed", "unavailable")
KINDS = ("text", "binary", "oversize", "deleted")


def spec_rule(
    rec: dict[str, Any],
    policy: str,
    semantic: bool,
    baseline: bool,
    cited: set[str],
    snapshot: bool,
) -> tuple[str, str]:
    """docs/decision-cycle.md's table, read top to bottom (written here, not imported)."""

    def needs_read(c: dict[str, Any]) -> bool:
        return policy == "always" or (
            policy == "material_change" and c["content_kind"] != "deleted"
        )

    def transient(c: dict[str, Any]) -> bool:
        return (
            needs_read(c)
            and not c["exact_read_verified"]
            and c["content_kind"] not in ("binary", "oversize", "deleted")
        )

    rules = [
        (snapshot, (PRESERVE, "snapshot_not_committed")),
        (not rec.get("cursor_after_ref"), (PRESERVE, "cursor_after_missing")),
        (rec["status"] == "no_change", (READY, "no_change")),
        (rec["status"] != "completed", (PRESERVE, "scan_incomplete")),
        (policy == "never", (PRESERVE, "exact_read_disabled")),
        (baseline, (READY, "baseline_adopted")),
        (any(transient(c) for c in rec["changes"]), (PRESERVE, "exact_read_incomplete")),
        (semantic, (READY, "semantic_no_change")),
        (not {c["change_ref"] for c in rec["changes"]} <= cited, (PRESERVE, "rebase_incomplete")),
    ]
    return next((outcome for applies, outcome in rules if applies), (READY, "validated_rebase"))


changes_st = st.lists(
    st.builds(change, st.integers(0, 40), kind=st.sampled_from(KINDS), verified=st.booleans()),
    max_size=6,
    unique_by=lambda c: c["change_ref"],
)
receipts_st = st.builds(
    lambda cs, status, after: receipt(*cs, status=status, after=after),
    changes_st,
    st.sampled_from(STATUSES),
    st.sampled_from([CURSOR, None]),
)
cited_st = st.sets(st.integers(0, 40).map(lambda n: f"source-change-{n:032x}"), max_size=30)


@given(
    rec=receipts_st,
    policy=st.sampled_from(POLICIES),
    semantic=st.booleans(),
    baseline=st.booleans(),
    cited=cited_st,
    snapshot=st.booleans(),
    data=st.data(),
)
def test_disposition_is_the_first_rule_that_applies(
    rec, policy, semantic, baseline, cited, snapshot, data
) -> None:
    expected = spec_rule(rec, policy, semantic, baseline, cited, snapshot)
    assert (
        decide(rec, policy, semantic=semantic, baseline=baseline, cited=cited, snapshot=snapshot)
        == expected
    )
    # order-independent: the verdict depends on the set of changes, not on the scan's order
    shuffled = {**rec, "changes": data.draw(st.permutations(rec["changes"]))}
    assert (
        decide(
            shuffled, policy, semantic=semantic, baseline=baseline, cited=cited, snapshot=snapshot
        )
        == expected
    )
    # more citations never make a source less ready; ready is final once every item is cited
    more = cited | {c["change_ref"] for c in rec["changes"]}
    if expected[0] == READY:
        assert (
            decide(
                rec, policy, semantic=semantic, baseline=baseline, cited=more, snapshot=snapshot
            )[0]
            == READY
        )
    if expected == (PRESERVE, "rebase_incomplete"):
        assert decide(
            rec, policy, semantic=semantic, baseline=baseline, cited=more, snapshot=snapshot
        ) == (READY, "validated_rebase")


# -- cited_change_refs and derive_rows --------------------------------------------------------------


def test_cited_refs_come_from_facts_claims_stale_claims_and_conflicts() -> None:
    evidence = {
        "changed_facts": [{"fact_id": "f", "source_ref": "r-fact"}],
        "recalled_claims": [{"claim_id": "c", "source_ref": "r-claim"}],
        "stale_or_rejected_claims": [{"claim_id": "s", "source_ref": "r-stale"}, {"claim_id": "t"}],
        "conflicts": [{"conflict_id": "x", "source_refs": ["r-x1", "r-x2"]}],
        "source_revisions": [{"source_ref": "r-only-read"}],  # read to verify, not a citation
    }
    assert cited_change_refs(evidence) == {"r-fact", "r-claim", "r-stale", "r-x1", "r-x2"}
    assert cited_change_refs({}) == set()


@given(
    refs=st.lists(st.integers(0, 20).map(lambda n: f"source-change-{n:032x}"), max_size=8),
    homes=st.data(),
)
def test_which_record_cites_a_ref_does_not_matter(refs, homes) -> None:
    """SPEC §8.2 rule 7: "cited by a fact or claim nor in a conflict": any kind of record counts."""
    evidence: dict[str, list[dict[str, Any]]] = {
        "changed_facts": [],
        "recalled_claims": [],
        "stale_or_rejected_claims": [],
        "conflicts": [],
    }
    for n, ref in enumerate(refs):
        home = homes.draw(st.sampled_from(sorted(evidence)))
        if home == "conflicts":
            evidence[home].append({"conflict_id": f"x{n}", "source_refs": [ref]})
        else:
            evidence[home].append({"id": n, "source_ref": ref})
    assert cited_change_refs(evidence) == set(refs)


def _source_rows(*specs: tuple[str, str, str]) -> dict[str, dict[str, Any]]:
    return {
        sid: {"source_id": sid, "exact_read_policy": policy, "scan_mode": mode}
        for sid, policy, mode in specs
    }


def _receipt_for(
    sid: str,
    n: int,
    *changes: dict[str, Any],
    status: str = "completed",
    after: str | None = CURSOR,
) -> dict[str, Any]:
    return {
        "source_id": sid,
        "receipt_ref": f"decision-source-scan-{n:032x}",
        "cursor_before_ref": f"source-cursor-{n:032x}",
        **receipt(*changes, status=status, after=after),
    }


ROW_SCHEMA = json.loads(
    (REPO / "docs/schemas/decision_cursor_checkpoint_v0.schema.json").read_text()
)["properties"]["rows"]["items"]


def test_derive_rows_by_hand() -> None:
    rows = _source_rows(
        ("docs", "always", "incremental"),
        ("notes", "never", "incremental"),
        ("feed", "always", "snapshot"),
        ("down", "always", "incremental"),
    )
    receipts = [
        _receipt_for("docs", 1, C1),
        _receipt_for("notes", 2, C2),
        _receipt_for("feed", 3, change(3)),
        _receipt_for("down", 4, status="unavailable", after=None),
    ]
    evidence = {"changed_facts": [{"source_ref": C1["change_ref"]}]}
    got = derive_rows(receipts, rows, evidence, {"mode": "auto", "semantic_no_change": False})
    assert got == [
        {
            "source_id": "docs",
            "scan_receipt_ref": receipts[0]["receipt_ref"],
            "cursor_before_ref": receipts[0]["cursor_before_ref"],
            "cursor_after_ref": CURSOR,
            "disposition": READY,
            "reason_code": "validated_rebase",
        },
        {
            "source_id": "notes",
            "scan_receipt_ref": receipts[1]["receipt_ref"],
            "cursor_before_ref": receipts[1]["cursor_before_ref"],
            "cursor_after_ref": CURSOR,
            "disposition": PRESERVE,
            "reason_code": "exact_read_disabled",
        },
        {
            "source_id": "feed",
            "scan_receipt_ref": receipts[2]["receipt_ref"],
            "cursor_before_ref": receipts[2]["cursor_before_ref"],
            "cursor_after_ref": CURSOR,
            "disposition": PRESERVE,
            "reason_code": "snapshot_not_committed",
        },
        # no cursor_after: the key is left out, not null (the schema allows no null)
        {
            "source_id": "down",
            "scan_receipt_ref": receipts[3]["receipt_ref"],
            "cursor_before_ref": receipts[3]["cursor_before_ref"],
            "disposition": PRESERVE,
            "reason_code": "cursor_after_missing",
        },
    ]
    for row in got:
        Draft202012Validator(ROW_SCHEMA).validate(row)
    # the rebase receipt's mode and semantic flag are what the rows read
    baseline = derive_rows(receipts[:1], rows, {}, {"mode": "baseline"})
    assert baseline[0]["reason_code"] == "baseline_adopted"
    semantic = derive_rows(receipts[:1], rows, {}, {"mode": "agent", "semantic_no_change": True})
    assert semantic[0]["reason_code"] == "semantic_no_change"
    preview = derive_rows(receipts[:1], rows, {}, {"mode": "none"})
    assert preview[0]["reason_code"] == "rebase_incomplete"


@given(data=st.data(), n=st.integers(1, 6))
def test_rows_follow_their_receipts_and_change_no_input(data, n) -> None:
    """Each row depends on its own receipt only: permuting the receipts permutes the rows; the
    inputs are left as they were (commit re-derives from the very packets prepare stored)."""
    rows = {
        f"s{i}": {
            "source_id": f"s{i}",
            "exact_read_policy": data.draw(st.sampled_from(POLICIES)),
            "scan_mode": data.draw(st.sampled_from(("incremental", "snapshot", "on_demand"))),
        }
        for i in range(n)
    }
    receipts = [
        _receipt_for(
            f"s{i}",
            i,
            *data.draw(changes_st),
            status=data.draw(st.sampled_from(STATUSES)),
            after=data.draw(st.sampled_from([CURSOR, None])),
        )
        for i in range(n)
    ]
    evidence = {"changed_facts": [{"source_ref": ref} for ref in sorted(data.draw(cited_st))]}
    rebase = {
        "mode": data.draw(st.sampled_from(("auto", "agent", "baseline", "none"))),
        "semantic_no_change": data.draw(st.booleans()),
    }
    before = copy.deepcopy((receipts, rows, evidence, rebase))
    got = derive_rows(receipts, rows, evidence, rebase)
    assert (receipts, rows, evidence, rebase) == before
    assert [r["source_id"] for r in got] == [r["source_id"] for r in receipts]
    for row in got:
        Draft202012Validator(ROW_SCHEMA).validate(row)
    order = data.draw(st.permutations(range(n)))
    again = derive_rows([receipts[i] for i in order], rows, evidence, rebase)
    assert again == [got[i] for i in order]
