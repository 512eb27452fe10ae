"""``dcx.evidence.rebasing``: how a prepare run accounts for what changed (SPEC §8.2), unit by unit.

A real workspace (initialised, one local-file source over ``docs/``, the fixed key), real refs
minted with its key, and a real ``AuthorityReader`` over its files; recall results are built
as the runner builds them. Oracles:
- expected records written by hand from SPEC §8.1/§8.2 (what ``--auto-rebase``, ``--rebase`` and
  ``--baseline`` put in the evidence; when the receipt is ``material_change``,
  ``no_material_change`` or ``incomplete``);
- revisions computed here with blake3 over the file bytes (SPEC §5.3), not with dcx's helper;
- properties: a rebase over nothing that changed changes nothing; the auto account does not
  depend on the order of the changes; citing a change by ``{source_id, path}`` is the same as
  citing its ref; every ref a record cites is listed in ``source_revisions`` (SPEC §8.1).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import blake3
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dcx.core.errors import ExitCode, InvalidInput, Refused
from dcx.evidence import rebasing
from dcx.evidence.assembler import AuthorityReader, Change, EvidenceDraft
from dcx.evidence.recall import RecallRun
from dcx.ops.prepare import authority_reader
from dcx.providers.base import RetrievalItem
from dcx.sources.base import ScanTelemetry
from dcx.sources.plane import SourceScan
from dcx.state.keys import load_key
from dcx.state.refmap import RefMinter
from tests.support.fuzz import examples
from tests.support.recall import answer, request
from tests.support.sources import binding_block, configure, plane, source_block

NOW = "2026-11-29T18:00:00Z"
SID = "source:docs"
RUNBOOK = (
    "# Runbook\n\nRoll back the TTL change when origin p99 stays above 400 ms for ten minutes.\n"
    "Then purge the catalog cache and page the on-call owner.\n"
)
CLAIM = "Roll back the TTL change when origin p99 stays above 400 ms for ten minutes."


class Goal:
    """The workspace under test and the run's ref minter."""

    def __init__(self, root: Path) -> None:
        (root / "docs").mkdir()
        (root / "docs" / "runbook.md").write_text(RUNBOOK)
        (root / "docs" / "notes.md").write_text("# Notes\n\nNothing here yet.\n")
        configure(
            root, binding_block() + source_block(SID, '{ path = "docs", include = ["**/*.md"] }')
        )
        self.root = root
        self.ws, self.profile, self.registry, _ = plane(root)
        self.minter = RefMinter(self.ws, load_key(self.ws))

    def change(
        self,
        path: str,
        *,
        change: str = "modified",
        kind: str = "text",
        read: str | None = "verified",
        source_id: str = SID,
        revision: str | None = None,
    ) -> Change:
        data = (
            (self.root / "docs" / path).read_bytes()
            if (self.root / "docs" / path).exists()
            else b""
        )
        rev = revision or ("deleted" if change == "deleted" else blake3.blake3(data).hexdigest())
        content = data.decode() if read == "verified" else None
        return Change(
            source_id,
            path,
            rev,
            change,
            kind,
            self.minter.change_ref(source_id, path),
            self.minter.revision_ref(source_id, path, rev),
            read,
            content,
            NOW,
        )

    def reader(self, changes: list[Change] = ()) -> AuthorityReader:  # type: ignore[assignment]
        self.minter.flush()  # refs a previous run minted are revealable (demotion looks them up)
        return authority_reader(self.ws, self.profile, self.registry, self.minter, list(changes))

    def recall(self, *items: RetrievalItem) -> RecallRun:
        req = request()
        refs = tuple(self.minter.provider_ref("bm25", item.resource_ref) for item in items)
        return RecallRun(req, answer(req, items), refs)

    def bm25_item(self, path: str, content: str, *, revision: str | None = None) -> RetrievalItem:
        rev = revision or blake3.blake3((self.root / "docs" / path).read_bytes()).hexdigest()
        return RetrievalItem(f"bm25:{SID}/{rev}/0/{path}", "The rollback threshold", content, 1.0)


@pytest.fixture
def goal(fresh_ws: Path) -> Goal:
    return Goal(fresh_ws)


def draft() -> EvidenceDraft:
    return EvidenceDraft(NOW, {SID: "current"})


def receipt(mode: str, changes: list[Change], d: EvidenceDraft, body: dict[str, Any] | None = None):
    return rebasing.receipt_values(mode, body, changes, d, NOW, None)


def cited_everywhere(records: dict[str, list[dict[str, Any]]]) -> None:
    """SPEC §8.1: every ref any record cites appears in source_revisions."""
    listed = {row["source_ref"] for row in records["source_revisions"]}
    for key in ("changed_facts", "recalled_claims", "stale_or_rejected_claims"):
        for record in records[key]:
            if "source_ref" in record:
                assert record["source_ref"] in listed, (key, record)
    for conflict in records["conflicts"]:
        assert set(conflict["source_refs"]) <= listed


# -- receipt_values: the status of the account (hand table from SPEC §8.2) ----------------------------


def _facts(d: EvidenceDraft, *changes: Change) -> EvidenceDraft:
    for c in changes:
        d.fact("fact-" + c.path, "s", c, generic=True)
    return d


def test_receipt_status_by_hand(goal: Goal) -> None:
    a, b = goal.change("runbook.md"), goal.change("notes.md")
    full = receipt("auto", [a, b], _facts(draft(), a, b))
    assert (full["status"], full["uncited_change_count"], full["changed_item_count"]) == (
        "material_change",
        0,
        2,
    )
    assert full["cited_change_refs"] == sorted([a.change_ref, b.change_ref])
    assert full["changed_fact_count"] == 2 and full["mode"] == "auto" and full["observed_at"] == NOW
    half = receipt("auto", [a, b], _facts(draft(), a))
    assert (half["status"], half["uncited_change_count"], half["cited_change_refs"]) == (
        "incomplete",
        1,
        [a.change_ref],
    )
    nothing = receipt("auto", [], draft())
    assert (nothing["status"], nothing["changed_item_count"], nothing["uncited_change_count"]) == (
        "no_material_change",
        0,
        0,
    )
    # the agent's semantic no change absorbs everything, cited or not
    semantic = receipt("agent", [a, b], draft(), {"semantic_no_change": True})
    assert (
        semantic["status"],
        semantic["uncited_change_count"],
        semantic["semantic_no_change"],
    ) == ("no_material_change", 0, True)
    # a preview cites nothing and is incomplete whenever something changed
    assert receipt("none", [a], draft())["status"] == "incomplete"
    assert (
        receipt("none", [a], _facts(draft(), a))["status"] == "incomplete"
    )  # whatever the draft cites
    assert receipt("none", [], draft())["status"] == "no_material_change"
    # a baseline absorbs every item of the sources it adopts
    baseline = receipt("baseline", [a, b], draft())
    assert (baseline["status"], baseline["uncited_change_count"]) == ("material_change", 0)


def test_receipt_counts_every_kind_of_citation(goal: Goal) -> None:
    a, b, c, d_ = (goal.change(p) for p in ("runbook.md", "notes.md", "x.md", "y.md"))
    d = draft()
    authority = goal.reader().read(SID, "runbook.md")
    assert authority is not None
    d.accept(
        "claim-1", "s", "provider-" + "1" * 32, authority, changed=True
    )  # cites a via its authority
    d.reject(
        "claim-2",
        "s",
        "stale_authority_revision",
        source_ref=b.change_ref,
        source_revision=b.revision_ref,
    )
    d.reject("claim-3", "s", "unverifiable_recall")  # cites nothing
    d.reject("claim-1", "s", "stale_authority_revision")  # also accepted: counted once, as accepted
    d.conflicts["conflict-1"] = {
        "conflict_id": "conflict-1",
        "summary": "s",
        "source_refs": [c.change_ref],
        "conflict_rule": "r",
        "status": "open",
    }
    d.demoted = 2
    got = rebasing.receipt_values("agent", {}, [a, b, c, d_], d, NOW, "digest-x")
    assert got["cited_change_refs"] == sorted([a.change_ref, b.change_ref, c.change_ref])
    assert (got["uncited_change_count"], got["status"]) == (1, "incomplete")
    assert (
        got["recalled_claim_count"],
        got["stale_or_rejected_claim_count"],
        got["conflict_count"],
    ) == (1, 2, 1)
    assert (got["demoted_claim_count"], got["input_digest"], got["changed_fact_count"]) == (
        2,
        "digest-x",
        0,
    )


# -- auto -------------------------------------------------------------------------------------------


def test_auto_turns_each_read_or_terminal_change_into_a_generic_fact(goal: Goal) -> None:
    (goal.root / "docs" / "gone.md").write_text("x")
    changes = [
        goal.change("runbook.md"),
        goal.change("new.md", change="added", read="verified"),
        goal.change("gone.md", change="deleted", kind="deleted", read="deleted"),
        goal.change("logo.md", kind="binary", read="binary"),
        goal.change("huge.md", kind="oversize", read="oversize"),
        goal.change("notes.md", read="failed"),  # a transient read failure: no fact
        goal.change("other.md", read=None),  # not read: no fact
    ]
    d = draft()
    rebasing.auto(d, changes, {SID: "always"}, goal.reader(changes), None, {}, goal.minter)
    summaries = {f["source_ref"]: f["summary"] for f in d.facts.values()}
    assert summaries == {
        changes[0].change_ref: "Modified file in source:docs",
        changes[1].change_ref: "Added file in source:docs",
        changes[2].change_ref: "Deleted file in source:docs",
        changes[3].change_ref: "Changed binary file in source:docs",
        changes[4].change_ref: "Changed file over the read limit in source:docs",
    }
    records = d.records()
    assert all(
        f["generic"] is True and f["observed_at"] == NOW and f["freshness"] == "current"
        for f in records["changed_facts"]
    )
    assert {f["source_ref"]: f["source_revision"] for f in records["changed_facts"]} == {
        c.change_ref: c.revision_ref for c in changes[:5]
    }
    assert all(row["changed"] for row in records["source_revisions"])
    cited_everywhere(records)
    got = receipt("auto", changes, d)
    assert (got["status"], got["uncited_change_count"], got["changed_fact_count"]) == (
        "incomplete",
        2,
        5,
    )


def test_auto_absorbs_nothing_of_a_never_read_source(goal: Goal) -> None:
    changes = [
        goal.change("runbook.md", read=None),
        goal.change("gone.md", change="deleted", kind="deleted", read=None),
    ]
    d = draft()
    rebasing.auto(d, changes, {SID: "never"}, goal.reader(changes), None, {}, goal.minter)
    assert d.facts == {} and receipt("auto", changes, d)["status"] == "incomplete"


READS = ("verified", "binary", "oversize", "deleted", "failed", None)


@settings(max_examples=examples(60))
@given(
    picks=st.lists(
        st.tuples(
            st.sampled_from(("added", "modified", "deleted")),
            st.sampled_from(READS),
            st.sampled_from(("always", "material_change", "never")),
        ),
        min_size=0,
        max_size=8,
    ),
    order=st.randoms(use_true_random=False),
)
def test_auto_accounts_by_the_spec_rule_in_any_order(goal: Goal, picks, order) -> None:
    """SPEC §8.2: "each exact-read changed item, and each terminal one (binary, oversize, deleted),
    becomes a changed fact"; a source whose policy is never reads nothing, so absorbs nothing.
    The account is the same whatever order the scans listed the changes in."""
    changes, policies, expected = [], {}, set()
    for n, (kind, read, policy) in enumerate(picks):
        sid = f"source:s{n}"
        content_kind = {"binary": "binary", "oversize": "oversize"}.get(read or "", "text")
        if kind == "deleted":
            content_kind = "deleted"
        c = goal.change(
            f"f{n}.md",
            change=kind,
            kind=content_kind,
            read=read,
            source_id=sid,
            revision=f"{n:064x}",
        )
        changes.append(c)
        policies[sid] = policy
        terminal = content_kind in ("binary", "oversize", "deleted") or read in (
            "binary",
            "oversize",
            "deleted",
        )
        if policy != "never" and (read == "verified" or terminal):
            expected.add(c.change_ref)
    reader = goal.reader(changes)
    first = draft()
    rebasing.auto(first, changes, policies, reader, None, {}, goal.minter)
    assert {f["source_ref"] for f in first.facts.values()} == expected
    shuffled = list(changes)
    order.shuffle(shuffled)
    second = draft()
    rebasing.auto(second, shuffled, policies, reader, None, {}, goal.minter)
    key = lambda rows: sorted(rows, key=lambda r: sorted(r.items()))  # noqa: E731
    for name, rows in first.records().items():
        assert key(rows) == key(second.records()[name]), name
    status = receipt("auto", changes, first)["status"]
    assert status == (
        "no_material_change"
        if not changes
        else "material_change"
        if len(expected) == len(changes)
        else "incomplete"
    )


def test_a_rebase_over_nothing_that_changed_changes_nothing(goal: Goal) -> None:
    """No change since the committed cursor and earlier claims still true: no fact, no claim moved,
    nothing demoted, and the receipt says no_material_change."""
    previous = {"claim-old": _previous_claim(goal, "runbook.md")}
    for mode in ("auto", "agent"):
        d = draft()
        if mode == "auto":
            rebasing.auto(d, [], {SID: "always"}, goal.reader(), None, previous, goal.minter)
        else:
            rebasing.agent(d, {}, [], goal.reader(), None, goal.minter)
        assert (d.facts, d.claims, d.stale, d.conflicts, d.revisions, d.demoted) == (
            {},
            {},
            {},
            {},
            {},
            0,
        ), mode
        got = receipt(mode, [], d)
        assert (got["status"], got["changed_item_count"], got["cited_change_refs"]) == (
            "no_material_change",
            0,
            [],
        )


# -- recall judged by authority (auto) --------------------------------------------------------------


def test_auto_accepts_recall_the_current_authority_confirms(goal: Goal) -> None:
    run = goal.recall(goal.bm25_item("runbook.md", CLAIM))
    d = draft()
    rebasing.auto(d, [], {SID: "always"}, goal.reader(), run, {}, goal.minter)
    (claim,) = d.records()["recalled_claims"]
    revision = blake3.blake3(RUNBOOK.encode()).hexdigest()
    assert claim["provider_ref"] == run.provider_refs[0] and claim["exact_read_verified"] is True
    assert claim["source_ref"] == goal.minter.change_ref(SID, "runbook.md")
    assert claim["source_revision"] == goal.minter.revision_ref(SID, "runbook.md", revision)
    (row,) = d.records()["source_revisions"]
    assert row["changed"] is False  # read only to verify: the file did not change (SPEC §8.1)
    assert receipt("auto", [], d)["status"] == "no_material_change"


def test_auto_marks_recall_stale_when_the_authority_moved_away(goal: Goal) -> None:
    old = blake3.blake3(RUNBOOK.encode()).hexdigest()
    (goal.root / "docs" / "runbook.md").write_text(RUNBOOK.replace("400 ms", "350 ms"))
    changes = [goal.change("runbook.md")]
    run = goal.recall(goal.bm25_item("runbook.md", CLAIM, revision=old))
    d = draft()
    rebasing.auto(d, changes, {SID: "always"}, goal.reader(changes), run, {}, goal.minter)
    records = d.records()
    (stale,) = records["stale_or_rejected_claims"]
    assert stale["reason_code"] == "stale_authority_revision" and records["recalled_claims"] == []
    assert (
        stale["source_ref"] == changes[0].change_ref
        and stale["source_revision"] == changes[0].revision_ref
    )
    assert [f["source_ref"] for f in records["changed_facts"]] == [changes[0].change_ref]
    cited_everywhere(records)
    assert receipt("auto", changes, d)["status"] == "material_change"


@pytest.mark.parametrize(
    ("resource_ref", "content", "reason"),
    [
        ("obelisk:session-1/turn-4", CLAIM, "conversation_not_authority"),
        ("host-session:codex:thread-a", CLAIM, "conversation_not_authority"),
        (
            f"bm25:{SID}/{'0' * 64}/0/runbook.md",
            "too short",
            "unverifiable_recall",
        ),  # < 40 non-blank chars
        (
            f"bm25:{SID}/{'0' * 64}/0/missing.md",
            CLAIM,
            "unverifiable_recall",
        ),  # no authority to read
        (
            f"bm25:source:elsewhere/{'0' * 64}/0/runbook.md",
            CLAIM,
            "unverifiable_recall",
        ),  # no such source
    ],
)
def test_auto_rejects_what_no_authority_can_confirm(
    goal: Goal, resource_ref: str, content: str, reason: str
) -> None:
    run = goal.recall(RetrievalItem(resource_ref, "a summary", content, 1.0))
    d = draft()
    rebasing.auto(d, [], {SID: "always"}, goal.reader(), run, {}, goal.minter)
    (stale,) = d.records()["stale_or_rejected_claims"]
    assert stale["reason_code"] == reason and d.claims == {}
    assert "source_ref" not in stale


# -- demote_moved: earlier accepted claims whose authority moved ----------------------------------


def _previous_claim(goal: Goal, path: str) -> dict[str, Any]:
    revision = blake3.blake3((goal.root / "docs" / path).read_bytes()).hexdigest()
    return {
        "claim_id": "claim-old",
        "summary": "The rollback threshold",
        "provider_ref": "provider-" + "9" * 32,
        "source_ref": goal.minter.change_ref(SID, path),
        "source_revision": goal.minter.revision_ref(SID, path, revision),
    }


def test_an_earlier_claim_is_demoted_when_its_file_changed_or_went(goal: Goal) -> None:
    kept = _previous_claim(goal, "notes.md")
    edited = {**_previous_claim(goal, "runbook.md"), "claim_id": "claim-edited"}
    (goal.root / "docs" / "gone.md").write_text("soon gone\n")
    gone = {**_previous_claim(goal, "gone.md"), "claim_id": "claim-gone"}
    reader = goal.reader()
    (goal.root / "docs" / "runbook.md").write_text(RUNBOOK + "\nA new line.\n")
    (goal.root / "docs" / "gone.md").unlink()
    d = draft()
    rebasing.demote_moved(
        d, {"claim-old": kept, "claim-edited": edited, "claim-gone": gone}, reader
    )
    assert d.demoted == 2 and set(d.stale) == {"claim-edited", "claim-gone"}
    now = blake3.blake3((RUNBOOK + "\nA new line.\n").encode()).hexdigest()
    assert d.stale["claim-edited"] == {
        "claim_id": "claim-edited",
        "summary": "The rollback threshold",
        "provider_ref": edited["provider_ref"],
        "observed_at": NOW,
        "reason_code": "stale_authority_revision",
        "source_ref": edited["source_ref"],
        "source_revision": goal.minter.revision_ref(SID, "runbook.md", now),
    }
    # a file that can no longer be read keeps the revision the claim was accepted at, listed as stale
    assert d.stale["claim-gone"]["source_revision"] == gone["source_revision"]
    rows = {row["source_ref"]: row for row in d.records()["source_revisions"]}
    assert (
        rows[gone["source_ref"]]["freshness"] == "stale"
        and rows[gone["source_ref"]]["changed"] is False
    )
    cited_everywhere(d.records())


def test_demotion_leaves_claims_this_run_already_judged(goal: Goal) -> None:
    previous = {**_previous_claim(goal, "runbook.md"), "claim_id": "claim-x"}
    (goal.root / "docs" / "runbook.md").write_text("moved\n")
    d = draft()
    d.reject("claim-x", "judged again this run", "unverifiable_recall")
    rebasing.demote_moved(d, {"claim-x": previous}, goal.reader())
    assert d.demoted == 0 and d.stale["claim-x"]["summary"] == "judged again this run"


# -- agent ------------------------------------------------------------------------------------------


def test_agent_facts_cite_by_ref_or_by_path_alike(goal: Goal) -> None:
    changes = [goal.change("runbook.md"), goal.change("notes.md")]
    by_ref = {
        "changed_facts": [
            {
                "fact_id": "threshold",
                "summary": "The rollback threshold is 400 ms",
                "change_ref": changes[0].change_ref,
                "revision_ref": changes[0].revision_ref,
            },
            {"fact_id": "notes", "summary": "Notes started", "change_ref": changes[1].change_ref},
        ]
    }
    by_path = {
        "changed_facts": [
            {
                "fact_id": "threshold",
                "summary": "The rollback threshold is 400 ms",
                "change_ref": {"source_id": SID, "path": "runbook.md"},
                "revision_ref": changes[0].revision_ref,
            },
            {
                "fact_id": "notes",
                "summary": "Notes started",
                "change_ref": {"source_id": SID, "path": "notes.md"},
            },
        ]
    }
    drafts = []
    for body in (by_ref, by_path):
        d = draft()
        rebasing.agent(d, body, changes, goal.reader(changes), None, goal.minter)
        drafts.append(d.records())
    assert drafts[0] == drafts[1]
    facts = {f["fact_id"]: f for f in drafts[0]["changed_facts"]}
    assert facts["threshold"] == {
        "fact_id": "threshold",
        "summary": "The rollback threshold is 400 ms",
        "source_ref": changes[0].change_ref,
        "source_revision": changes[0].revision_ref,
        "observed_at": NOW,
        "freshness": "current",
    }  # not generic: the agent's words
    assert receipt("agent", changes, _from_records(drafts[0]))["status"] == "material_change"


def _from_records(records: dict[str, list[dict[str, Any]]]) -> EvidenceDraft:
    d = draft()
    d.facts = {f["fact_id"]: f for f in records["changed_facts"]}
    return d


UNSEEN = "source-change-" + "0" * 32


@pytest.mark.parametrize(
    "body",
    [
        lambda ref: {"changed_facts": [{"fact_id": "f", "summary": "s", "change_ref": UNSEEN}]},
        lambda ref: {
            "changed_facts": [
                {
                    "fact_id": "f",
                    "summary": "s",
                    "change_ref": {"source_id": SID, "path": "other.md"},
                }
            ]
        },
        lambda ref: {
            "changed_facts": [
                {
                    "fact_id": "f",
                    "summary": "s",
                    "change_ref": ref,
                    "revision_ref": "source-revision-" + "0" * 32,
                }
            ]
        },  # another revision
        lambda ref: {
            "stale_or_rejected_claims": [
                {
                    "claim_id": "c",
                    "summary": "s",
                    "reason_code": "outdated",
                    "change_ref": {"source_id": SID, "path": "other.md"},
                }
            ]
        },
        lambda ref: {
            "conflicts": [
                {
                    "conflict_id": "x",
                    "summary": "s",
                    "change_refs": [ref, UNSEEN],
                    "conflict_rule": "canonical_revision_wins",
                    "status": "open",
                }
            ]
        },
    ],
    ids=["fact-ref", "fact-path", "fact-revision", "stale-claim", "conflict"],
)
def test_agent_citing_what_this_run_did_not_see_is_refused(goal: Goal, body) -> None:
    changes = [goal.change("runbook.md")]
    with pytest.raises(Refused) as caught:
        rebasing.agent(
            draft(), body(changes[0].change_ref), changes, goal.reader(changes), None, goal.minter
        )
    assert caught.value.code == "rebase_refs_stale" and caught.value.exit_code == ExitCode.REFUSED
    assert "\n" not in caught.value.message


def test_agent_claims_stale_claims_and_conflicts(goal: Goal) -> None:
    changes = [goal.change("runbook.md"), goal.change("notes.md")]
    run = goal.recall(goal.bm25_item("runbook.md", CLAIM))
    body = {
        "recalled_claims": [
            {"claim_id": "kept", "summary": "The threshold", "provider_ref": run.provider_refs[0]},
            {
                "claim_id": "gone",
                "summary": "Recalled last time only",
                "provider_ref": "provider-" + "e" * 32,
            },
        ],
        "stale_or_rejected_claims": [
            {
                "claim_id": "old-note",
                "summary": "The notes said otherwise",
                "reason_code": "superseded",
                "change_ref": {"source_id": SID, "path": "notes.md"},
            },
            {"claim_id": "hearsay", "summary": "Someone said so", "reason_code": "not_authority"},
        ],
        "conflicts": [
            {
                "conflict_id": "c1",
                "summary": "Runbook and notes disagree",
                "change_refs": [
                    changes[1].change_ref,
                    {"source_id": SID, "path": "runbook.md"},
                    changes[1].change_ref,
                ],
                "conflict_rule": "canonical_revision_wins",
                "status": "open",
            }
        ],
    }
    d = draft()
    rebasing.agent(d, body, changes, goal.reader(changes), run, goal.minter)
    records = d.records()
    assert [c["claim_id"] for c in records["recalled_claims"]] == ["kept"]
    assert records["recalled_claims"][0]["source_ref"] == changes[0].change_ref
    stale = {c["claim_id"]: c for c in records["stale_or_rejected_claims"]}
    assert stale["gone"]["reason_code"] == "recall_not_reproduced" and d.demoted == 1
    assert (stale["old-note"]["source_ref"], stale["old-note"]["source_revision"]) == (
        changes[1].change_ref,
        changes[1].revision_ref,
    )
    assert stale["hearsay"] == {
        "claim_id": "hearsay",
        "summary": "Someone said so",
        "observed_at": NOW,
        "reason_code": "not_authority",
    }
    (conflict,) = records["conflicts"]
    assert conflict == {
        "conflict_id": "c1",
        "summary": "Runbook and notes disagree",
        "source_refs": sorted({changes[0].change_ref, changes[1].change_ref}),
        "conflict_rule": "canonical_revision_wins",
        "status": "open",
    }
    cited_everywhere(records)
    assert all(row["changed"] for row in records["source_revisions"])
    assert receipt("agent", changes, d, body)["status"] == "material_change"


def test_agent_claim_citing_another_change_than_its_authority_is_unverifiable(goal: Goal) -> None:
    changes = [goal.change("runbook.md"), goal.change("notes.md")]
    run = goal.recall(goal.bm25_item("runbook.md", CLAIM))
    body = {
        "recalled_claims": [
            {
                "claim_id": "c",
                "summary": "s",
                "provider_ref": run.provider_refs[0],
                "change_ref": changes[1].change_ref,
            }
        ]
    }
    d = draft()
    rebasing.agent(d, body, changes, goal.reader(changes), run, goal.minter)
    assert d.claims == {} and d.stale["c"]["reason_code"] == "unverifiable_recall"


def test_agent_refuses_one_claim_id_in_both_lists(goal: Goal) -> None:
    changes = [goal.change("runbook.md")]
    run = goal.recall(goal.bm25_item("runbook.md", CLAIM))
    body = {
        "recalled_claims": [
            {"claim_id": "c", "summary": "s", "provider_ref": run.provider_refs[0]}
        ],
        "stale_or_rejected_claims": [
            {"claim_id": "c", "summary": "s", "reason_code": "superseded"}
        ],
    }
    with pytest.raises(InvalidInput, match="appears twice"):
        rebasing.agent(draft(), body, changes, goal.reader(changes), run, goal.minter)


def test_resolve_citation(goal: Goal) -> None:
    ref = goal.minter.change_ref(SID, "runbook.md")
    assert rebasing.resolve_citation(ref, goal.minter) == ref
    assert rebasing.resolve_citation({"source_id": SID, "path": "runbook.md"}, goal.minter) == ref
    assert rebasing.resolve_citation({"source_id": SID, "path": "notes.md"}, goal.minter) != ref


# -- baseline ---------------------------------------------------------------------------------------


def _scan(goal: Goal, status: str, cursor_after: str | None) -> SourceScan:
    source = goal.registry.source(SID)
    assert source is not None
    return SourceScan(
        source, status, None, (), None, cursor_after, "1", NOW, 1000, 0, ScanTelemetry()
    )


def test_baseline_adopts_each_scanned_source_in_one_generic_fact(goal: Goal) -> None:
    d = draft()
    scans = [
        _scan(goal, "completed", "tree:" + "a" * 64),
        _scan(goal, "unavailable", None),
        _scan(goal, "failed", None),
    ]
    rebasing.baseline(d, scans, goal.minter)
    (fact,) = d.records()["changed_facts"]
    assert fact["summary"] == "Adopted the current state of source:docs" and fact["generic"] is True
    assert fact["source_ref"] == goal.minter.change_ref(SID, "")
    assert fact["source_revision"] == goal.minter.revision_ref(SID, "", "tree:" + "a" * 64)
    no_change = draft()
    rebasing.baseline(no_change, [_scan(goal, "no_change", "tree:" + "b" * 64)], goal.minter)
    assert (
        len(no_change.facts) == 1
    )  # an unchanged source is adopted too: the cursor it names is current
    assert receipt("baseline", [goal.change("runbook.md")], d)["status"] == "material_change"
