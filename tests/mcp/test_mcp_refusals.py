"""Every refusal class over `dcx mcp` is a tool error with the CLI's code, hint and exit code.

One server, one workspace, in order: a refused protocol step (1), invalid
input (2: flags, public safety, a path outside the goal root), the activation
gate (3: disabled profile, agent not enabled), a busy lock (4, after the
call's wait, never a hang), a result the CLI exits non-zero on (verify), and
resource reads that are not one record. Oracle for the codes: the CLI run
on the same state gives the same error object (tests below run both).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.support.cli import Runner
from tests.support.cycle import PROPOSAL
from tests.support.mcp import connect, data, error, run
from tests.support.workspace import copy_example

D = "ttl-refusals"
PROFILE = Path(".decision-context/profile.toml")


def _cases(root: Path) -> dict:
    out: dict = {}
    profile = (root / PROFILE).read_text()
    dc = root / ".decision-context"

    async def main():
        from dcx.core.fsutil import file_lock

        async with connect(root, "--agent-id", "agent-a") as c:

            async def call(case, name, arguments):
                out[case] = await c.call_tool(name, arguments)

            await call("evidence_missing", "propose", {"decision_id": D, "proposal": PROPOSAL})
            (root / PROFILE).write_text(profile.replace("enabled = true", "enabled = false"))
            for name, arguments in (
                ("prepare", {"decision_id": D, "auto_rebase": True}),
                ("scan", {}),
                ("index", {}),
                ("recall", {"scope": "", "query": "q", "query_summary": "s"}),
            ):
                await call(f"disabled_{name}", name, arguments)
            await call("disabled_log_still_reads", "log", {})
            (root / PROFILE).write_text(profile.replace('["agent-a"]', '["agent-b"]'))
            await call("agent_not_enabled", "prepare", {"decision_id": D, "auto_rebase": True})
            (root / PROFILE).write_text(profile)
            await call("scan_when_active_again", "scan", {})
            await call(
                "flags_exclusive",
                "prepare",
                {"decision_id": D, "auto_rebase": True, "baseline": True},
            )
            await call(
                "unknown_source",
                "prepare",
                {"decision_id": D, "auto_rebase": True, "sources": ["nope"]},
            )
            rebase = json.loads((root / "rebase.json").read_text())
            out["agent_rebase"] = await c.call_tool(
                "prepare", {"decision_id": "ttl-agent", "rebase": rebase}
            )
            await call(
                "semantic_no_change_with_records",
                "prepare",
                {
                    "decision_id": "ttl-agent",
                    "rebase": {
                        "semantic_no_change": True,
                        "changed_facts": rebase["changed_facts"][:1],
                    },
                },
            )
            prepared = data(await c.call_tool("prepare", {"decision_id": D, "auto_rebase": True}))
            evidence = prepared["summary"]["evidence_packet_ref"]
            index_before = (dc / "decisions" / f"{D}.jsonl").read_bytes()
            unsafe = {
                **PROPOSAL,
                "recommended_decision": {
                    **PROPOSAL["recommended_decision"],
                    "summary": "ask ttl-owner@storefront.example first",
                },
            }
            await call("unsafe_public_text", "propose", {"decision_id": D, "proposal": unsafe})
            out["index_unchanged"] = (dc / "decisions" / f"{D}.jsonl").read_bytes() == index_before
            await call(
                "path_outside_root",
                "commit",
                {"decision_id": D, "event_id": "e1", "event_log": "../elsewhere/events.jsonl"},
            )
            await call(
                "absolute_path_outside_root",
                "commit",
                {"decision_id": D, "event_id": "e1", "event_log": "/etc/passwd"},
            )
            await call(
                "event_missing", "commit", {"decision_id": D, "event_id": "dcx-event-" + "0" * 32}
            )
            events_before = (dc / "events.jsonl").read_bytes()
            with file_lock(dc / "events.jsonl", wait=1):
                started = time.monotonic()
                await call(
                    "lock_busy",
                    "writeback",
                    {
                        "decision_id": D,
                        "kind": "validation",
                        "summary": "held",
                        "artifacts": [evidence],
                        "wait": 0.3,
                    },
                )
                out["lock_busy_seconds"] = time.monotonic() - started
            out["events_unchanged"] = (dc / "events.jsonl").read_bytes() == events_before
            out["after_release"] = await c.call_tool(
                "writeback",
                {
                    "decision_id": D,
                    "kind": "validation",
                    "summary": "held",
                    "artifacts": [evidence],
                    "wait": 0.3,
                },
            )
            await call("ref_not_found", "show", {"ref": "decision-proposal-ffff"})
            for case, uri in (
                ("decision_not_found", "dcx://decisions/nope"),
                ("invalid_ref", "dcx://packets/..%2F..%2Fetc%2Fpasswd"),
                ("invalid_uri", "file:///etc/passwd"),
            ):
                try:
                    await c.read_resource(uri)
                    out[f"resource_{case}"] = None
                except Exception as exc:
                    out[f"resource_{case}"] = exc
            packet = next((dc / "packets" / "evidence").glob("*.json"))
            packet.chmod(0o644)
            packet.write_text(packet.read_text().replace('"public_safe"', '"tampered"'))
            await call("verify_failed", "verify", {})

    run(main)
    return out


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    root = copy_example(tmp_path_factory.mktemp("mcp-refusals") / "example")
    return _cases(root), root


@pytest.mark.parametrize(
    ("case", "code", "exit_code"),
    [
        ("evidence_missing", "evidence_missing", 1),
        ("event_missing", "event_missing", 1),
        ("flags_exclusive", "flags_exclusive", 2),
        ("semantic_no_change_with_records", "semantic_no_change_with_records", 2),
        ("unknown_source", "unknown_source", 2),
        ("unsafe_public_text", "unsafe_public_text", 2),
        ("path_outside_root", "path_outside_root", 2),
        ("absolute_path_outside_root", "path_outside_root", 2),
        ("ref_not_found", "ref_not_found", 2),
        ("disabled_prepare", "disabled", 3),
        ("disabled_scan", "disabled", 3),
        ("disabled_index", "disabled", 3),
        ("disabled_recall", "disabled", 3),
        ("agent_not_enabled", "agent_not_enabled", 3),
        ("lock_busy", "lock_busy", 4),
        ("verify_failed", "verify_failed", 1),
    ],
)
def test_refusal_is_a_tool_error_with_the_cli_code(cases, case, code, exit_code) -> None:
    out, root = cases
    err = error(out[case])
    assert (err["code"], err["exit_code"]) == (code, exit_code), err
    assert str(root.resolve()) not in out[case].content[0].text  # never an absolute path


def test_refusals_snapshot(cases, snapshot_json) -> None:
    out = cases[0]
    shown = {
        case: error(result)
        for case, result in sorted(out.items())
        if hasattr(result, "is_error") and result.is_error and case != "verify_failed"
    }
    assert shown == snapshot_json


def test_refusals_write_nothing_and_locks_do_not_hang(cases) -> None:
    out = cases[0]
    assert out["index_unchanged"] and out["events_unchanged"]
    assert out["lock_busy_seconds"] < 5
    assert error(out["lock_busy"])["hint"]
    assert not out["after_release"].is_error


def test_an_inline_rebase_is_the_agent_mode(cases) -> None:
    summary = data(cases[0]["agent_rebase"])["summary"]
    assert summary["mode"] == "agent" and summary["facts"] == 5 and not summary["preview"]


def test_commands_without_the_gate_still_answer(cases) -> None:
    assert "decisions" in data(cases[0]["disabled_log_still_reads"])
    receipts = data(cases[0]["scan_when_active_again"])[
        "receipts"
    ]  # the gate reads the profile per call
    assert receipts and all(
        r["schema_version"] == "decision_source_scan_receipt_v0" for r in receipts
    )


def test_a_non_zero_result_carries_its_data(cases) -> None:
    err = error(cases[0]["verify_failed"])
    assert err["data"]["problems"] and err["data"]["problems"][0]["file"].startswith(
        ".decision-context/packets/"
    )


def test_resource_reads_that_are_not_one_record(cases) -> None:
    out = cases[0]
    for case, code in (
        ("decision_not_found", "decision_not_found"),
        ("invalid_ref", "ref_not_found"),
        ("invalid_uri", "invalid_uri"),
    ):
        exc = out[f"resource_{case}"]
        assert exc is not None, case
        assert exc.error.data["code"] == code, (case, exc.error)


def test_the_cli_refuses_the_same_way(tmp_path: Path) -> None:
    """Oracle for the mapping: the CLI's JSON error for the same call is the tool error minus exit_code."""
    root = copy_example(tmp_path / "example")
    cli = Runner(root)
    (root / "proposal-in.json").write_text(json.dumps(PROPOSAL))
    result = cli(
        "propose",
        "--decision-id",
        D,
        "--from",
        str(root / "proposal-in.json"),
        "--format",
        "json",
        ok=False,
    )
    cli_error = json.loads(result.stdout)["error"]

    async def main():
        async with connect(root) as c:
            return error(await c.call_tool("propose", {"decision_id": D, "proposal": PROPOSAL}))

    tool_error = run(main)
    assert result.exit_code == tool_error.pop("exit_code") == 1
    assert tool_error == cli_error


def test_errors_name_the_tools_arguments_never_the_cli_flags(cases) -> None:
    """An agent calls `prepare` with `baseline`, not `--baseline`: the error's field and message
    say the argument it passed (hints may still name a command for a person to run)."""
    out = cases[0]
    err = error(out["flags_exclusive"])
    assert err["field"] == "baseline"
    assert err["message"] == "auto_rebase and baseline cannot be combined"
    for case, result in out.items():
        if hasattr(result, "is_error") and result.is_error:
            shown = error(result)
            assert not str(shown.get("field") or "").startswith("--"), (case, shown)
            assert "--decision-id" not in shown["message"], (case, shown)
