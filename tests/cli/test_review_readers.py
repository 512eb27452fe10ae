"""Every reader knows `review` (SPEC §10, issue 14): show, log, status, verify, audit, diff, feedback.

On the example after the gated story (``tests.support.cycle.run_review_cycle``):
prepare → propose → gate (approve) → review (commits) → outcome with an
observed outcome → feedback. Fixed clock and key, so the snapshots are
reproducible; JSON snapshots are also validated against docs/schemas by
tests/test_schemas.py.
"""

from __future__ import annotations

import json

from dcx.packets import KINDS
from tests.support.cli import Runner
from tests.support.cycle import D
from tests.support.workspace import packet_files


def test_the_gated_story_stores_every_kind_once(reviewed) -> None:
    root, _ = reviewed
    files = packet_files(root)
    kinds = [path.parent.name for path in files.values()]
    assert sorted(kinds) == sorted(KINDS)


def test_show_review_for_people_and_as_stored_bytes(reviewed, snapshot, snapshot_json) -> None:
    root, refs = reviewed
    dcx = Runner(root)
    text = dcx("show", refs["review"]).stdout
    assert refs["review"] in text.splitlines()[0] and "approve" in text and "{'" not in text
    assert text == snapshot(name="review_text")
    raw = dcx("show", refs["review"][:24], "--format", "json").stdout
    assert (
        raw.encode()
        == (root / ".decision-context/packets/review" / f"{refs['review']}.json").read_bytes()
    )
    assert json.loads(raw) == snapshot_json(name="review_json")
    commit = dcx("show", refs["commit"]).stdout
    assert "settled by review" in commit and commit == snapshot(name="commit_text")


def test_log_and_status_show_the_settlement(reviewed, snapshot, snapshot_json) -> None:
    root, refs = reviewed
    dcx = Runner(root)
    log = dcx.json("log")["data"]["decisions"][0]
    kinds = [link["kind"] for link in log["chain"]]
    assert kinds == [
        "assembly",
        "evidence",
        "proposal",
        "event",
        "review",
        "event",
        "commit",
        "outcome",
        "feedback",
    ]
    assert (
        log["settlement"] == "approve" and log["outcome_due"] is False and log["next_step"] is None
    )
    gate_row = log["chain"][3]
    assert gate_row["ref"] == refs["gate"] and gate_row["status"].startswith(
        "gate approve by storefront-platform-lead"
    )
    assert dcx("log").stdout == snapshot(name="log_text")
    assert log == snapshot_json(name="log_json")
    status = dcx.json("status")["data"]["workspace"]["decisions"]
    assert status == [
        {
            "decision_id": D,
            "last_observed_at": status[0]["last_observed_at"],
            "next_step": None,
            "next_hint": None,
            "settlement": "approve",
            "outcome_due": False,
            "abandoned": False,
        }
    ]
    assert "done (approve)" in dcx("status").stdout


def test_outcome_due_until_an_observed_outcome(reviewed) -> None:
    """Drop the observed outcome and feedback from the index: the decision is outcome due again."""
    root, _ = reviewed
    index = root / ".decision-context/decisions" / f"{D}.jsonl"
    kept = [
        line
        for line in index.read_text().splitlines()
        if json.loads(line)["kind"] not in ("outcome", "feedback")
    ]
    index.write_text("\n".join(kept) + "\n")
    dcx = Runner(root)
    row = dcx.json("status")["data"]["workspace"]["decisions"][0]
    assert row["outcome_due"] is True and row["next_step"] == "outcome"
    assert "dcx outcome (outcome due)" in dcx("status").stdout
    assert "outcome due" in dcx("log").stdout.splitlines()[0]


def test_verify_checks_the_review_and_its_event_binding(reviewed) -> None:
    root, refs = reviewed
    dcx = Runner(root)
    assert dcx.json("verify")["data"]["problems"] == []
    # a review rewritten with a recomputed ref that breaks its disposition's rules
    from dcx.core.canonical import packet_ref, pretty_bytes

    path = root / ".decision-context/packets/review" / f"{refs['review']}.json"
    forged = json.loads(path.read_text())
    forged["quiet_noop"] = True
    forged["packet_ref"] = packet_ref("decision-review", forged, "packet_ref")
    target = path.with_name(f"{forged['packet_ref']}.json")
    target.write_bytes(pretty_bytes(forged))
    problems = dcx("verify", "--format", "json", ok=False)
    found = json.loads(problems.stdout)["data"]["problems"]
    assert problems.exit_code == 1
    assert any("quiet_noop must be false" in p["problem"] for p in found), found
    target.unlink()
    # the gate event edited in place: its id no longer recomputes, and the review no longer matches it
    events = root / ".decision-context/events.jsonl"
    lines = events.read_text().splitlines()
    edited = [
        json.dumps({**json.loads(line), "status": "deferred"}, sort_keys=True)
        if json.loads(line)["event_id"] == refs["gate"]
        else line
        for line in lines
    ]
    events.write_text("\n".join(edited) + "\n")
    found = json.loads(dcx("verify", "--format", "json", ok=False).stdout)["data"]["problems"]
    assert any(
        "does not recompute" in p["problem"] and p.get("ref") == refs["review"] for p in found
    ), found


def test_verify_flags_a_validation_event_that_contradicts_its_review(reviewed) -> None:
    root, refs = reviewed
    from dcx.state.events import dcx_event_id

    events = root / ".decision-context/events.jsonl"
    event = next(
        json.loads(line)
        for line in events.read_text().splitlines()
        if json.loads(line)["event_id"] == refs["event"]
    )
    event["details"]["disposition"] = "reject"
    event["summary"] = "Review settled: rejected by the gate"
    event["event_id"] = dcx_event_id(event)
    with events.open("a") as handle:
        handle.write(json.dumps(event, sort_keys=True) + "\n")
    found = json.loads(Runner(root)("verify", "--format", "json", ok=False).stdout)["data"][
        "problems"
    ]
    assert any("does not match review" in p["problem"] for p in found), found


def test_audit_and_diff_know_review(reviewed, snapshot_json) -> None:
    root, refs = reviewed
    dcx = Runner(root)
    assert dcx("audit").exit_code == 0
    # a second settlement of the same decision: nothing changed since, so the quiet path
    dcx("prepare", "--decision-id", D, "--auto-rebase")
    quiet = dcx.json("review", "--decision-id", D, "--no-change")["data"]["review"]["packet_ref"]
    diff = dcx.json("diff", refs["review"], quiet)["data"]
    assert diff["kind"] == "review"
    changed = {c["path"]: c["change"] for c in diff["changes"]}
    assert changed["disposition"] == "changed" and changed["proposal_packet_ref"] == "removed"
    assert diff["changes"] == snapshot_json(name="diff_approve_no_change")
    assert dcx("audit").exit_code == 0 and dcx("verify").exit_code == 0


def test_feedback_names_the_approve(reviewed) -> None:
    root, refs = reviewed
    packet = json.loads(
        (root / ".decision-context/packets/feedback" / f"{refs['feedback']}.json").read_text()
    )
    assert packet["review_packet_ref"] == refs["review"]
    assert packet["outcome_packet_ref"] == refs["outcome"]
