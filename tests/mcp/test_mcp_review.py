"""A gated decision through the `gate` and `review` tools, judged against the same decision run by the CLI.

Oracle: a differential comparison. prepare (auto_rebase), propose, a person's
approve gate and the review that settles it run once through the SDK's stdio
client against the real `dcx mcp` process and once through the CLI, on two
copies of the example with the fixed clock and key: every public packet, the
event log, the decision index and the committed cursors must be
byte-identical. The MCP run also makes refused calls first (self-gating,
both settlement paths, an event log outside the root, review before any
gate) and settles twice, then abandons the decision twice: the comparison would catch anything a refusal or
the replay wrote. The receipt itself is checked against SPEC §10's rules
(approve by the gate's person binds the gate event, the proposal and the
evidence; an observed outcome is due).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import Runner
from tests.support.cycle import QUERY, QUERY_SUMMARY, D, stale_runbook
from tests.support.mcp import connect, data, error, run
from tests.support.workspace import copy_example

PERSON = "owner-maria"
SUMMARY = "Keep the 90 s TTL"
GIVEN_UP = "Superseded by the CDN migration"


def _files(root: Path) -> dict[str, bytes]:
    dc = root / ".decision-context"
    picked = [
        *dc.glob("packets/*/*.json"),
        *dc.glob("decisions/*.jsonl"),
        dc / "events.jsonl",
        *dc.glob("private/cursors*"),
        *dc.glob("private/cursors/*.json"),
    ]
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(picked) if p.is_file()}


def _mcp_run(root: Path, errlog) -> dict:
    out: dict = {"refused": {}}

    async def main():
        async with connect(root, errlog=errlog) as c:
            data(await c.call_tool("index", {}))
            stale_runbook(root)
            out["prepare"] = data(
                await c.call_tool(
                    "prepare",
                    {
                        "decision_id": D,
                        "auto_rebase": True,
                        "query": QUERY,
                        "query_summary": QUERY_SUMMARY,
                    },
                )
            )
            out["propose"] = data(
                await c.call_tool(
                    "propose",
                    {
                        "decision_id": D,
                        "proposal": json.loads((root / "proposal.json").read_text()),
                    },
                )
            )
            refused = out["refused"]
            refused["self_gate"] = error(
                await c.call_tool(
                    "gate",
                    {
                        "decision_id": D,
                        "disposition": "approve",
                        "by": "Agent_A",
                        "summary": SUMMARY,
                    },
                )
            )
            refused["bad_disposition"] = error(
                await c.call_tool(
                    "gate",
                    {"decision_id": D, "disposition": "maybe", "by": PERSON, "summary": SUMMARY},
                )
            )
            refused["no_gate_yet"] = error(
                await c.call_tool(
                    "review", {"decision_id": D, "gate_event": "dcx-event-" + "0" * 32}
                )
            )
            gate = data(
                await c.call_tool(
                    "gate",
                    {"decision_id": D, "disposition": "approve", "by": PERSON, "summary": SUMMARY},
                )
            )
            out["gate"] = gate
            out["gate_again"] = data(
                await c.call_tool(
                    "gate",
                    {"decision_id": D, "disposition": "approve", "by": PERSON, "summary": SUMMARY},
                )
            )
            event_id = gate["event"]["event_id"]
            refused["both_paths"] = error(
                await c.call_tool(
                    "review", {"decision_id": D, "gate_event": event_id, "no_change": True}
                )
            )
            refused["log_outside"] = error(
                await c.call_tool(
                    "review",
                    {"decision_id": D, "gate_event": event_id, "event_log": "../events.jsonl"},
                )
            )
            refused["quiet_without_proof"] = error(
                await c.call_tool("review", {"decision_id": D, "no_change": True})
            )
            out["dry_run"] = data(
                await c.call_tool(
                    "review", {"decision_id": D, "gate_event": event_id, "dry_run": True}
                )
            )
            out["review"] = data(
                await c.call_tool("review", {"decision_id": D, "gate_event": event_id})
            )
            out["replay"] = data(
                await c.call_tool("review", {"decision_id": D, "gate_event": event_id})
            )
            out["log"] = data(await c.call_tool("log", {"decision_id": D}))
            out["verify"] = data(await c.call_tool("verify", {}))
            out["abandon"] = data(
                await c.call_tool("abandon", {"decision_id": D, "summary": GIVEN_UP})
            )
            out["abandon_again"] = data(
                await c.call_tool("abandon", {"decision_id": D, "summary": GIVEN_UP})
            )
            out["abandoned_log"] = data(await c.call_tool("log", {"decision_id": D}))

    run(main)
    return out


def _cli_run(root: Path) -> None:
    dcx = Runner(root)
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
    gate = dcx.json("gate", "--decision-id", D, "--approve", "--by", PERSON, "--summary", SUMMARY)
    dcx("review", "--decision-id", D, "--gate-event", gate["data"]["event"]["event_id"])
    dcx("abandon", "--decision-id", D, "--summary", GIVEN_UP)


@pytest.fixture(scope="module")
def settled(tmp_path_factory):
    base = tmp_path_factory.mktemp("mcp-review")
    mcp_root, cli_root = copy_example(base / "mcp"), copy_example(base / "cli")
    errlog = base / "server-stderr.txt"
    with errlog.open("w") as handle:
        out = _mcp_run(mcp_root, handle)
    _cli_run(cli_root)
    return out, mcp_root, cli_root, errlog.read_text()


def test_the_settled_decision_is_byte_identical_to_the_cli_run(settled) -> None:
    _, mcp_root, cli_root, stderr = settled
    mine, theirs = _files(mcp_root), _files(cli_root)
    assert sorted(mine) == sorted(theirs)
    assert [name for name in mine if mine[name] != theirs[name]] == []
    assert any(name.startswith(".decision-context/packets/review/") for name in mine)
    assert stderr == ""


def test_the_review_receipt_binds_the_persons_gate(settled) -> None:
    out = settled[0]
    gate, rev = out["gate"]["event"], out["review"]["review"]
    proposal_ref = out["propose"]["proposal"]["packet_ref"]
    assert out["gate"]["appended"] is True and out["gate_again"]["appended"] is False
    assert out["gate_again"]["event"] == gate
    assert gate["details"] == {
        "task_class": "user_gate",
        "decision_scope": f"direction:action:{proposal_ref}",
        "actor_ref": PERSON,
        "decision_outcome": "approve",
    }
    assert rev["disposition"] == "approve" and rev["actor_ref"] == PERSON
    assert rev["source_event_id"] == gate["event_id"] and rev["proposal_packet_ref"] == proposal_ref
    assert rev["evidence_packet_ref"] == out["prepare"]["summary"]["evidence_packet_ref"]
    assert rev["reason_code"] == "owner_approved" and rev["summary"] == SUMMARY
    assert rev["authority_confirmed"] is True and rev["quiet_noop"] is False
    assert rev["outcome_observation_required"] is True and out["review"]["outcome_due"] is True
    receipt = out["review"]["commit"]
    assert receipt["review_packet_ref"] == rev["packet_ref"]
    assert receipt["event_id"] == out["review"]["event"]["event_id"]
    assert out["review"]["event"]["event_kind"] == "validation"
    assert any(row["result"] == "advanced" for row in receipt["sources"])
    assert out["review"]["replayed"] is False and out["review"]["dry_run"] is False
    # the dry run previewed exactly this settlement, and wrote nothing (the byte comparison spans it)
    assert out["dry_run"]["dry_run"] is True and out["dry_run"]["review"] == rev
    assert out["verify"]["problems"] == []


def test_a_second_review_replays_the_settlement(settled) -> None:
    out = settled[0]
    assert out["replay"]["replayed"] is True
    assert out["replay"]["review"] == out["review"]["review"]
    assert out["replay"]["commit"]["receipt_ref"] == out["review"]["commit"]["receipt_ref"]
    assert out["replay"]["event"] == out["review"]["event"]
    row = out["log"]["decisions"][0]  # settled by approve: the observed outcome is what is left
    assert (row["settlement"], row["next_step"], row["outcome_due"], row["abandoned"]) == (
        "approve",
        "outcome",
        True,
        False,
    )


@pytest.mark.parametrize(
    ("case", "code", "field", "exit_code"),
    [
        ("self_gate", "self_confirmation_not_allowed", "by", 2),  # Agent_A is agent-a (dcx.names)
        (
            "bad_disposition",
            "invalid_field",
            "disposition",
            2,
        ),  # the server's own check, before any op
        ("no_gate_yet", "gate_event_missing", None, 1),
        ("both_paths", "invalid_input", "gate_event", 2),  # named as the tool calls it
        ("log_outside", "path_outside_root", "event_log", 2),
        ("quiet_without_proof", "no_change_without_semantic_proof", None, 1),
    ],
)
def test_refused_calls_are_tool_errors_that_write_nothing(
    settled, case, code, field, exit_code
) -> None:
    got = settled[0]["refused"][case]
    assert (got["code"], got.get("field"), got["exit_code"]) == (code, field, exit_code), got
    assert got["message"] and "\n" not in got["message"]


def test_abandon_appends_once_and_the_decision_stops_asking(settled) -> None:
    out = settled[0]
    event = out["abandon"]["event"]
    assert out["abandon"]["appended"] is True and out["abandon_again"]["appended"] is False
    assert out["abandon_again"]["event"] == event
    assert event["event_kind"] == "abandon" and event["causality"]["decision_id"] == D
    assert out["review"]["commit"]["receipt_ref"] in event["artifact_refs"]
    assert out["propose"]["proposal"]["packet_ref"] in event["artifact_refs"]
    row = out["abandoned_log"]["decisions"][0]
    assert (row["abandoned"], row["next_step"], row["outcome_due"]) == (True, None, False)
