"""dcx gate and dcx review end to end (SPEC §10, issue 14): every disposition, every refusal.

A prepared and proposed example decision is built once per module (index, an
authority edit after indexing, ``prepare --auto-rebase`` with recall,
``propose``) and copied per test. Every refusal is exit 1 with its reason
code and leaves every file of the workspace byte-for-byte as it was (lock
files aside); every settlement advances the cursor exactly as the pending
companion proposed, and a second review of the same gate replays.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import Runner
from tests.support.cycle import QUERY, QUERY_SUMMARY, D, stale_runbook
from tests.support.workspace import copy_example, cursor_bytes, packets

OWNER = "storefront-platform-lead"
FULLWIDTH = "\uff41\uff47\uff45\uff4e\uff54\uff0d\uff41"  # agent-a in full-width forms
HOST_LOG = "host/rollout-event-log.jsonl"


def set_commit_table(root: Path, **values: Any) -> None:
    """Rewrite the profile's [commit] table (the example's profile ends with it)."""
    profile = root / ".decision-context/profile.toml"
    head = profile.read_text().split("\n[commit]")[0]
    body = "".join(f"{k} = {json.dumps(v)}\n" for k, v in values.items())
    profile.write_text(f"{head}\n[commit]\n{body}")


@pytest.fixture(scope="module")
def _proposed(tmp_path_factory) -> Path:
    root = copy_example(tmp_path_factory.mktemp("review-template") / "example")
    set_commit_table(root, allow_self_confirmation=False, external_event_logs=[HOST_LOG])
    dcx = Runner(root, {"HOME": str(root.parent)})
    dcx("index")
    stale_runbook(root)
    dcx(
        "prepare",
        "--decision-id",
        D,
        "--auto-rebase",
        "--query",
        QUERY,
        "--query-summary",
        QUERY_SUMMARY,
    )
    dcx("propose", "--decision-id", D, "--from", str(root / "proposal.json"))
    return root


@pytest.fixture
def ws(_proposed: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "example"
    shutil.copytree(_proposed, dest, symlinks=True)
    return dest


def cli(root: Path, *args: str) -> tuple[int, dict[str, Any]]:
    result = Runner(root)(*args, "--format", "json", ok=False)
    return result.exit_code, json.loads(result.stdout)


def gate(root: Path, flag: str = "--approve", *extra: str) -> dict[str, Any]:
    code, doc = cli(
        root,
        "gate",
        "--decision-id",
        D,
        flag,
        "--by",
        OWNER,
        "--summary",
        "Keep the 90 s TTL",
        *extra,
    )
    assert code == 0, doc
    return doc["data"]["event"]


def review(root: Path, *args: str) -> tuple[int, dict[str, Any]]:
    return cli(root, "review", "--decision-id", D, *args)


def state(root: Path) -> dict[str, bytes]:
    """Every file of the workspace but lock files: what "nothing written" compares."""
    dc = root / ".decision-context"
    return {
        str(p.relative_to(dc)): p.read_bytes()
        for p in sorted(dc.rglob("*"))
        if p.is_file() and not p.name.endswith(".lock")
    }


def refused(root: Path, code: str, *args: str) -> dict[str, Any]:
    before = state(root)
    exit_code, doc = review(root, *args)
    assert exit_code == 1, doc
    assert doc["error"]["code"] == code, doc
    assert state(root) == before
    return doc


def pending_cursors(root: Path) -> dict[str, str]:
    [path] = (root / ".decision-context/private/pending").glob("*.json")
    return json.loads(path.read_text())["proposed_cursors"]


def events_of(root: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line)
        for line in (root / ".decision-context/events.jsonl").read_text().splitlines()
    ]


def append_raw(root: Path, event: dict[str, Any]) -> None:
    with (root / ".decision-context/events.jsonl").open("a") as handle:
        handle.write(json.dumps(event, sort_keys=True) + "\n")


def loopx_id(event: dict[str, Any]) -> str:
    """The LoopX rule, written here from SPEC §8.5: SHA-256 of sorted-key JSON minus event_id, 16 hex."""
    body = {k: v for k, v in event.items() if k != "event_id"}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:16]


def status_row(root: Path) -> dict[str, Any]:
    code, doc = cli(root, "status")
    assert code == 0
    return next(r for r in doc["data"]["workspace"]["decisions"] if r["decision_id"] == D)


# -- the gate --------------------------------------------------------------------------------------


def test_gate_event_has_the_loopx_user_gate_shape(ws: Path) -> None:
    proposal = packets(ws, "proposal")[0]
    approve = gate(ws)
    assert approve["event_kind"] == "todo_complete" and approve["status"] == "done"
    assert approve["details"] == {
        "task_class": "user_gate",
        "decision_outcome": "approve",
        "actor_ref": OWNER,
        "decision_scope": f"direction:action:{proposal['packet_ref']}",
    }
    assert approve["todo_id"] == f"gate-{D}" and approve["causality"] == {"decision_id": D}
    assert approve["artifact_refs"] == sorted(
        [proposal["evidence_packet_ref"], proposal["packet_ref"]]
    )
    defer = gate(ws, "--defer", "--todo-id", "owner-review-1")
    assert (defer["event_kind"], defer["status"], defer["todo_id"]) == (
        "todo_update",
        "deferred",
        "owner-review-1",
    )
    assert "decision_outcome" not in defer["details"]
    # the same gate again is returned, not appended
    code, again = cli(
        ws, "gate", "--decision-id", D, "--approve", "--by", OWNER, "--summary", "Keep the 90 s TTL"
    )
    assert code == 0 and again["data"]["appended"] is False and again["data"]["event"] == approve
    assert len(events_of(ws)) == 2


@pytest.mark.parametrize(
    "by,code",
    [
        ("agent-a", "self_confirmation_not_allowed"),
        ("Agent_A", "self_confirmation_not_allowed"),
        ("AGENT.A", "self_confirmation_not_allowed"),
        ("agenta", "self_confirmation_not_allowed"),
        ("agent a", "invalid_token"),  # --by is a public token: refused before
        (FULLWIDTH, "invalid_token"),
    ],
)
def test_gate_refuses_the_acting_agent_under_the_normalised_comparison(
    ws: Path, by: str, code: str
) -> None:
    before = state(ws)
    exit_code, doc = cli(
        ws, "gate", "--decision-id", D, "--approve", "--by", by, "--summary", "Self approval"
    )
    assert exit_code == 2 and doc["error"]["code"] == code, doc
    assert state(ws) == before
    if code == "self_confirmation_not_allowed":  # the profile's switch lets it through
        set_commit_table(ws, allow_self_confirmation=True, external_event_logs=[HOST_LOG])
        assert (
            cli(
                ws,
                "gate",
                "--decision-id",
                D,
                "--approve",
                "--by",
                by,
                "--summary",
                "Self approval",
            )[0]
            == 0
        )


def test_normalised_actor_comparison() -> None:
    from dcx.names import actor_key as normalise_actor
    from dcx.names import same_actor

    assert normalise_actor(FULLWIDTH) == normalise_actor("Agent_A") == "agenta"
    assert same_actor("Owner.Maria", "owner-maria") and same_actor("ﬀ-lead", "FF lead")
    assert (
        not same_actor("owner-maria", "owner-marie")
        and not same_actor(None, "x")
        and not same_actor("", "")
    )


def test_gate_without_a_proposal_or_with_a_foreign_one_is_refused(ws: Path) -> None:
    code, doc = cli(
        ws, "gate", "--decision-id", "other", "--approve", "--by", OWNER, "--summary", "x"
    )
    assert code == 1 and doc["error"]["code"] == "proposal_missing"
    code, doc = cli(
        ws,
        "gate",
        "--decision-id",
        D,
        "--reject",
        "--by",
        OWNER,
        "--summary",
        "x",
        "--proposal",
        "decision-proposal-" + "0" * 32,
    )
    assert code == 1 and doc["error"]["code"] == "proposal_not_in_decision"
    code, doc = cli(
        ws, "gate", "--decision-id", D, "--approve", "--reject", "--by", OWNER, "--summary", "x"
    )
    assert code == 2


# -- the dispositions ------------------------------------------------------------------------------


def test_approve_settles_commits_and_leaves_an_outcome_due(ws: Path) -> None:
    proposal = packets(ws, "proposal")[0]
    proposed = pending_cursors(ws)
    event = gate(ws)
    dry_before = state(ws)
    code, dry = review(ws, "--gate-event", event["event_id"], "--dry-run")
    assert code == 0 and dry["data"]["dry_run"] is True and state(ws) == dry_before
    code, doc = review(ws, "--gate-event", event["event_id"])
    assert code == 0, doc
    data = doc["data"]
    # the dry run printed exactly what was then written
    assert (dry["data"]["review"], dry["data"]["event"], dry["data"]["commit"]) == (
        data["review"],
        data["event"],
        data["commit"],
    )
    rev = data["review"]
    assert (rev["disposition"], rev["actor_ref"], rev["reason_code"]) == (
        "approve",
        OWNER,
        "owner_approved",
    )
    assert (
        rev["proposal_packet_ref"],
        rev["gate_todo_id"],
        rev["source_event_id"],
        rev["recorded_at"],
    ) == (proposal["packet_ref"], f"gate-{D}", event["event_id"], event["recorded_at"])
    assert (
        rev["outcome_observation_required"] and rev["authority_confirmed"] and not rev["quiet_noop"]
    )
    validation = data["event"]
    assert validation["event_kind"] == "validation" and validation["causality"] == {
        "decision_id": D,
        "caused_by": event["event_id"],
    }
    assert validation["details"] == {
        "capability": "decision_context",
        "disposition": "approve",
        "quiet_noop": False,
    }
    assert validation["artifact_refs"] == sorted(
        [rev["evidence_packet_ref"], rev["packet_ref"], proposal["packet_ref"]]
    )
    receipt = data["commit"]
    assert receipt["status"] == "committed" and receipt["review_packet_ref"] == rev["packet_ref"]
    assert "outcome_packet_ref" not in receipt and receipt["event_id"] == validation["event_id"]
    assert json.loads(cursor_bytes(ws))["cursors"] == proposed
    assert status_row(ws)["next_step"] == "outcome" and status_row(ws)["outcome_due"] is True
    # a second review of the same gate replays, even with other words, and writes nothing
    before = state(ws)
    code, again = review(ws, "--gate-event", event["event_id"], "--summary", "Approved once more")
    assert code == 0 and again["data"]["replayed"] is True and again["data"]["commit"] == receipt
    assert again["data"]["review"] == rev and again["warnings"]
    assert state(ws) == before
    # an observed outcome clears "outcome due"
    observed = json.loads((ws / "outcome.json").read_text())
    observed["observed_outcomes"] = [
        {
            "outcome_id": "p99-day-one",
            "summary": "Origin p99 held on day one",
            "evidence_ref": rev["evidence_packet_ref"],
            "status": "pending",
            "observed_at": "2026-11-30T18:00:00Z",
        }
    ]
    (ws / "observed.json").write_text(json.dumps(observed))
    assert cli(ws, "outcome", "--decision-id", D, "--from", str(ws / "observed.json"))[0] == 0
    assert status_row(ws)["outcome_due"] is False and status_row(ws)["next_step"] == "feedback"
    code, fb = cli(ws, "feedback", "--decision-id", D)
    assert code == 0 and fb["data"]["feedback"]["review_packet_ref"] == rev["packet_ref"]
    assert cli(ws, "verify")[0] == 0


@pytest.mark.parametrize("flag,disposition", [("--reject", "reject"), ("--defer", "defer")])
def test_reject_and_defer_still_consume_the_material(ws: Path, flag: str, disposition: str) -> None:
    proposed = pending_cursors(ws)
    event = gate(ws, flag)
    code, doc = review(
        ws, "--gate-event", event["event_id"], "--reason-code", f"owner_{disposition}_budget"
    )
    assert code == 0, doc
    rev = doc["data"]["review"]
    assert rev["disposition"] == disposition and rev["reason_code"] == f"owner_{disposition}_budget"
    assert rev["outcome_observation_required"] is False and doc["data"]["outcome_due"] is False
    assert json.loads(cursor_bytes(ws))["cursors"] == proposed  # the cursor advanced all the same
    row = status_row(ws)
    assert row["next_step"] is None and row["settlement"] == disposition and not row["outcome_due"]
    code, fb = cli(ws, "feedback", "--decision-id", D)
    assert (
        code == 1
        and fb["error"]["code"] == "outcome_missing"
        and disposition in fb["error"]["message"]
    )


def test_no_change_is_quiet_and_needs_semantic_proof(ws: Path) -> None:
    # this assembly changed material: the quiet path is refused
    refused(ws, "no_change_without_semantic_proof", "--no-change")
    event = gate(ws)
    assert review(ws, "--gate-event", event["event_id"])[0] == 0
    settled = cursor_bytes(ws)
    # nothing changed since: a new prepare says no_material_change, and the quiet path settles it
    Runner(ws)("prepare", "--decision-id", D, "--auto-rebase")
    before = state(ws)
    code, dry = review(ws, "--no-change", "--dry-run")
    assert code == 0 and state(ws) == before
    code, doc = review(ws, "--no-change")
    assert code == 0, doc
    rev = doc["data"]["review"]
    assert (
        rev["disposition"] == "no_change"
        and rev["quiet_noop"] is True
        and rev["actor_ref"] == "agent-a"
    )
    assert not {"proposal_packet_ref", "gate_todo_id", "source_event_id"} & set(rev)
    assert not rev["authority_confirmation_required"] and not rev["authority_confirmed"]
    assert doc["data"]["event"]["causality"] == {"decision_id": D}
    assert doc["data"]["event"]["details"]["quiet_noop"] is True
    assert dry["data"]["review"] == rev and doc["data"]["commit"]["status"] == "replayed"
    assert "proposal_packet_ref" not in doc["data"]["commit"]
    assert cursor_bytes(ws) == settled
    code, again = review(ws, "--no-change")
    assert code == 0 and again["data"]["replayed"] is True
    assert status_row(ws)["outcome_due"] is True  # the earlier approve still waits for its outcome
    assert cli(ws, "verify")[0] == 0


# -- the refusals ----------------------------------------------------------------------------------


def test_gate_event_missing(ws: Path) -> None:
    refused(ws, "gate_event_missing", "--gate-event", "dcx-event-" + "0" * 32)


def test_gate_event_duplicated_with_another_body(ws: Path) -> None:
    event = gate(ws)
    append_raw(ws, {**event, "summary": "Quietly rewritten"})
    refused(ws, "gate_event_conflict", "--gate-event", event["event_id"])


def test_gate_event_whose_id_does_not_recompute(ws: Path) -> None:
    event = gate(ws)
    lines = events_of(ws)
    (ws / ".decision-context/events.jsonl").write_text(
        "".join(
            json.dumps(
                {**e, "summary": "Edited after the fact"}
                if e["event_id"] == event["event_id"]
                else e,
                sort_keys=True,
            )
            + "\n"
            for e in lines
        )
    )
    refused(ws, "gate_event_id_mismatch", "--gate-event", event["event_id"])


def _forged(ws: Path, **changes: Any) -> str:
    """The dcx gate event with fields changed and its id recomputed (a well-formed event that says something else)."""
    from dcx.state.events import dcx_event_id

    event = json.loads(json.dumps(gate(ws)))
    for key, value in changes.items():
        if key == "details":
            event["details"] = value
        else:
            event[key] = value
    event["event_id"] = dcx_event_id(event)
    append_raw(ws, event)
    return event["event_id"]


def test_gate_event_of_another_decision(ws: Path) -> None:
    refused(
        ws,
        "gate_decision_mismatch",
        "--gate-event",
        _forged(ws, causality={"decision_id": "another-decision"}),
    )


def test_gate_event_scoped_to_a_proposal_of_no_decision(ws: Path) -> None:
    details = {
        **gate(ws)["details"],
        "decision_scope": "direction:action:decision-proposal-" + "1" * 32,
    }
    refused(
        ws,
        "gate_decision_mismatch",
        "--gate-event",
        _forged(ws, details=details, summary="other scope"),
    )


def test_gate_event_without_a_disposition(ws: Path) -> None:
    details = {k: v for k, v in gate(ws)["details"].items() if k != "decision_outcome"}
    refused(
        ws,
        "gate_without_disposition",
        "--gate-event",
        _forged(ws, details=details, summary="no verdict"),
    )
    odd = {**details, "decision_outcome": "cancel"}
    refused(
        ws,
        "gate_without_disposition",
        "--gate-event",
        _forged(ws, details=odd, summary="cancelled"),
    )


def test_an_event_that_is_not_a_user_gate(ws: Path) -> None:
    details = {**gate(ws)["details"], "task_class": "user_action"}
    refused(
        ws, "gate_not_user_gate", "--gate-event", _forged(ws, details=details, summary="a reminder")
    )


def test_gate_of_an_older_proposal(ws: Path) -> None:
    event = gate(ws)
    proposal = json.loads((ws / "proposal.json").read_text())
    proposal["recommended_decision"]["confidence"] = 0.6
    (ws / "proposal2.json").write_text(json.dumps(proposal))
    assert cli(ws, "propose", "--decision-id", D, "--from", str(ws / "proposal2.json"))[0] == 0
    refused(ws, "proposal_not_latest", "--gate-event", event["event_id"])


def test_gate_whose_proposal_is_not_on_the_latest_evidence(ws: Path) -> None:
    event = gate(ws)
    with (ws / "docs" / "runbook-ttl-rollback.md").open("a") as handle:
        handle.write("\nA later note: the drill moved to Tuesdays.\n")
    Runner(ws)("prepare", "--decision-id", D, "--auto-rebase")
    refused(ws, "evidence_not_latest", "--gate-event", event["event_id"])


def test_gate_decided_by_the_acting_agent_in_a_host_log(ws: Path) -> None:
    """A LoopX host's gate names no actor_ref: its agent_id decided; here that is the reviewing agent."""
    details = {k: v for k, v in gate(ws)["details"].items() if k != "actor_ref"}
    refused(
        ws,
        "self_confirmation_not_allowed",
        "--gate-event",
        _forged(ws, details=details, summary="self"),
    )


def test_legacy_chain_is_refused_when_review_is_required(ws: Path) -> None:
    set_commit_table(ws, external_event_logs=[HOST_LOG], require_review=True)
    # the profile digest is part of the pending companion: prepare again under the new profile
    Runner(ws)("prepare", "--decision-id", D, "--auto-rebase")
    assert cli(ws, "propose", "--decision-id", D, "--from", str(ws / "proposal.json"))[0] == 0
    assert status_row(ws)["next_step"] == "gate"
    assert cli(ws, "outcome", "--decision-id", D, "--from", str(ws / "outcome.json"))[0] == 0
    code, wb = cli(
        ws, "writeback", "--decision-id", D, "--kind", "validation", "--summary", "TTL kept"
    )
    before = state(ws)
    code, doc = cli(ws, "commit", "--decision-id", D, "--event-id", wb["data"]["event"]["event_id"])
    assert code == 1 and doc["error"]["code"] == "review_required"
    assert state(ws) == before
    # the review chain still settles it
    assert review(ws, "--gate-event", gate(ws)["event_id"])[0] == 0


def test_a_second_gate_on_a_settled_assembly_is_refused(ws: Path) -> None:
    assert review(ws, "--gate-event", gate(ws)["event_id"])[0] == 0
    refused(ws, "already_settled", "--gate-event", gate(ws, "--reject")["event_id"])


def test_review_loses_the_cursor_to_another_decision(ws: Path) -> None:
    """Two decisions prepared from the same committed state: the second settlement is cursor_moved."""
    dcx = Runner(ws)
    with (ws / "docs" / "runbook-ttl-rollback.md").open("a") as handle:
        handle.write(
            "\nA later note: the drill moved to Tuesdays.\n"
        )  # the rival proposes another cursor
    dcx("prepare", "--decision-id", "rival", "--auto-rebase")
    dcx("propose", "--decision-id", "rival", "--from", str(ws / "proposal.json"))
    code, doc = cli(
        ws, "gate", "--decision-id", "rival", "--approve", "--by", OWNER, "--summary", "Rival"
    )
    assert code == 0
    rival_gate = doc["data"]["event"]["event_id"]
    assert review(ws, "--gate-event", gate(ws)["event_id"])[0] == 0
    before = state(ws)
    code, doc = cli(ws, "review", "--decision-id", "rival", "--gate-event", rival_gate)
    assert code == 1 and doc["error"]["code"] == "cursor_moved", doc
    assert {k: v for k, v in state(ws).items()} == before


def test_commit_of_a_review_event_checks_the_gate_binding(ws: Path) -> None:
    """`dcx commit` of a validation event whose review no longer matches its gate is refused."""
    event = gate(ws)
    code, dry = review(ws, "--gate-event", event["event_id"], "--dry-run")
    assert code == 0
    # write the settlement's receipt and event by hand, then break the gate it cites
    from dcx.core.workspace import Workspace
    from dcx.packets import review as review_packet
    from dcx.state import decisions
    from dcx.state.store import Store

    w = Workspace(ws)
    rev = dry["data"]["review"]
    Store(w).put_built(review_packet.SPEC, rev)
    decisions.append(w, D, "review", rev["packet_ref"], rev["recorded_at"])
    append_raw(ws, dry["data"]["event"])
    lines = [e for e in events_of(ws) if e["event_id"] != event["event_id"]]
    (ws / ".decision-context/events.jsonl").write_text(
        "".join(json.dumps(e, sort_keys=True) + "\n" for e in lines)
    )
    before = state(ws)
    code, doc = cli(
        ws, "commit", "--decision-id", D, "--event-id", dry["data"]["event"]["event_id"]
    )
    assert code == 1 and doc["error"]["code"] == "gate_event_missing"
    assert state(ws) == before
    append_raw(ws, event)  # the gate is back: the same commit now goes through
    code, doc = cli(
        ws, "commit", "--decision-id", D, "--event-id", dry["data"]["event"]["event_id"]
    )
    assert code == 0 and doc["data"]["receipt"] == dry["data"]["commit"]


# -- a LoopX host's gate event ---------------------------------------------------------------------

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "loopx" / "user-gate-approve.jsonl"


def test_the_loopx_fixture_is_a_loopx_gate_event_read_unchanged() -> None:
    from dcx.state import events, gates

    [line] = FIXTURE.read_text().splitlines()
    event = json.loads(line)
    assert event["event_id"] == loopx_id(event)  # the LoopX id rule, computed here
    assert events.id_recomputes(event)
    assert gates.is_user_gate(event) and gates.disposition_of(event) == "approve"
    assert gates.scoped_proposal(event).startswith("decision-proposal-")
    assert set(event["boundary"]) >= {
        "raw_task_text_recorded",
        "credential_values_recorded",
    }  # LoopX's own flags


def test_review_settles_the_loopx_host_gate_event_unchanged(ws: Path) -> None:
    """The fixture's bytes go, unchanged, into the host log the profile lists; review reads them as they are."""
    raw = FIXTURE.read_bytes()
    event = json.loads(raw)
    proposal = packets(ws, "proposal")[0]
    assert event["details"]["decision_scope"] == f"direction:action:{proposal['packet_ref']}", (
        "the example's proposal ref moved: regenerate the fixture (fixtures/README.md)"
    )
    (ws / "host").mkdir()
    (ws / HOST_LOG).write_bytes(raw)
    (ws / "elsewhere.jsonl").write_bytes(raw)
    refused(
        ws,
        "event_log_not_allowed",
        "--gate-event",
        event["event_id"],
        "--event-log",
        str(ws / "elsewhere.jsonl"),
    )
    # the host gate names no actor_ref: its agent_id decided, or --by says who
    code, doc = review(
        ws,
        "--gate-event",
        event["event_id"],
        "--event-log",
        str(ws / HOST_LOG),
        "--by",
        OWNER,
        "--dry-run",
    )
    assert code == 0 and doc["data"]["review"]["actor_ref"] == OWNER
    code, doc = review(ws, "--gate-event", event["event_id"], "--event-log", str(ws / HOST_LOG))
    assert code == 0, doc
    rev = doc["data"]["review"]
    assert (rev["disposition"], rev["actor_ref"], rev["source_event_id"], rev["gate_todo_id"]) == (
        "approve",
        event["agent_id"],
        event["event_id"],
        event["todo_id"],
    )
    assert rev["recorded_at"] == event["recorded_at"] and rev["summary"] == event["summary"]
    assert (ws / HOST_LOG).read_bytes() == raw  # read, never rewritten
    assert doc["data"]["commit"]["status"] == "committed"
    code, verify = cli(ws, "verify")
    assert code == 0 and verify["data"]["unchecked_gate_events"] == []
    # on a host without that log the binding cannot be checked: a warning, not a failure
    (ws / HOST_LOG).unlink()
    code, verify = cli(ws, "verify")
    assert (
        code == 0
        and verify["data"]["unchecked_gate_events"] == [event["event_id"]]
        and verify["warnings"]
    )


def test_a_gate_whose_artifacts_name_another_chain(ws: Path) -> None:
    event = gate(ws)
    refs = [*event["artifact_refs"], "decision-proposal-" + "2" * 32]
    refused(
        ws,
        "gate_proposal_mismatch",
        "--gate-event",
        _forged(ws, artifact_refs=sorted(refs), summary="odd refs"),
    )


def test_by_may_not_contradict_the_gate_s_own_actor(ws: Path) -> None:
    refused(ws, "gate_actor_mismatch", "--gate-event", gate(ws)["event_id"], "--by", "someone-else")
    # the same actor written another way is the same actor
    code, doc = review(
        ws, "--gate-event", gate(ws)["event_id"], "--by", "Storefront_Platform.Lead", "--dry-run"
    )
    assert code == 0 and doc["data"]["review"]["actor_ref"] == OWNER


def test_a_gate_summary_the_receipt_cannot_hold(ws: Path) -> None:
    long = "Keep the 90 s TTL " + "and watch origin latency closely " * 8
    code, doc = cli(
        ws, "gate", "--decision-id", D, "--approve", "--by", OWNER, "--summary", long.strip()[:300]
    )
    assert code == 0
    before = state(ws)
    code, err = review(ws, "--gate-event", doc["data"]["event"]["event_id"])
    assert code == 2 and err["error"]["code"] == "unsafe_summary" and state(ws) == before
    code, ok = review(
        ws, "--gate-event", doc["data"]["event"]["event_id"], "--summary", "Keep the 90 s TTL"
    )
    assert code == 0 and ok["data"]["review"]["summary"] == "Keep the 90 s TTL"


def test_a_dry_run_after_settlement_writes_nothing_either(ws: Path) -> None:
    event = gate(ws)
    assert review(ws, "--gate-event", event["event_id"])[0] == 0
    before = state(ws)
    code, doc = review(ws, "--gate-event", event["event_id"], "--dry-run")
    assert code == 0 and doc["data"]["replayed"] is True and doc["data"]["dry_run"] is True
    assert state(ws) == before


def test_flags_that_do_not_fit(ws: Path) -> None:
    for args in ([], ["--no-change", "--gate-event", "x"], ["--no-change", "--by", OWNER]):
        code, doc = review(ws, *args)
        assert code == 2, (args, doc)
    code, doc = review(ws, "--gate-event", gate(ws)["event_id"], "--reason-code", "not a token")
    assert code == 2 and doc["error"]["field"] == "--reason-code"
