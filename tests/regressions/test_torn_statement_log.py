"""Seen in tests/reliability/test_crash_commit.py: a commit killed while it appended its own
signed statement left statements.jsonl torn; the next commit finished the job but could not
sign it (`torn_log` warning) and `dcx verify` then failed until a manual --repair. The
statement log's next append now sets the fragment aside, as `verify --repair` does.

Seen again there with the random kills paced to the load: when the kill tore the commit's
statement after its receipt was stored, the next commit was a replay, wrote nothing, stated
nothing, and left the fragment (verify exit 1) and an unsigned receipt. A replay now states the
receipt again when no whole statement names it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli import run_dcx
from tests.support.cycle import run_cycle


def _prepare(root: Path, decision: str):
    return run_dcx("-C", str(root), "prepare", "--decision-id", decision, "--auto-rebase",
                   "--format", "json")  # fmt: skip


def test_a_torn_statement_line_is_set_aside_by_the_next_signed_command(example: Path) -> None:
    assert run_dcx("-C", str(example), "index").exit_code == 0
    assert _prepare(example, "first").exit_code == 0
    log = example / ".decision-context" / "statements.jsonl"
    whole = log.read_bytes()
    fragment = b'{"agent_id": "agent-a", "command": "commit", "goal'  # a kill mid-write
    log.write_bytes(whole + fragment)

    second = _prepare(example, "second")
    assert second.exit_code == 0, second.stderr
    assert not any("statement not written" in w for w in second.json()["warnings"])
    data = log.read_bytes()
    assert data.startswith(whole) and data.endswith(b"\n") and fragment not in data
    added = [json.loads(line) for line in data[len(whole) :].splitlines()]
    assert [s["command"] for s in added] == ["prepare"]
    aside = list((example / ".decision-context" / "private" / "log").glob("torn-statements-*"))
    assert [p.read_bytes() for p in aside] == [fragment]
    verify = run_dcx("-C", str(example), "verify", "--format", "json")
    assert verify.exit_code == 0, verify.stdout[-600:]


def test_a_replayed_commit_states_the_receipt_whose_statement_a_kill_tore(example: Path) -> None:
    refs = run_cycle(example, "torn", edit_authority=False)
    log = example / ".decision-context" / "statements.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    (commit_line,) = [ln for ln in lines if json.loads(ln)["command"] == "commit"]
    assert refs["commit"] in json.loads(commit_line)["products"]
    fragment = commit_line[: len(commit_line) // 2]  # the commit's statement, cut by a kill
    log.write_bytes(b"".join(ln for ln in lines if ln != commit_line) + fragment)
    assert run_dcx("-C", str(example), "verify", "--format", "json").exit_code == 1

    again = run_dcx("-C", str(example), "commit", "--decision-id", "torn",
                    "--event-id", refs["event"], "--format", "json")  # fmt: skip
    assert again.exit_code == 0, again.stdout[-600:]
    assert again.json()["data"]["replayed"] is True
    stated = [json.loads(ln) for ln in log.read_bytes().splitlines()]
    assert [s["command"] for s in stated][-1] == "commit"
    assert refs["commit"] in stated[-1]["products"]
    aside = list((example / ".decision-context" / "private" / "log").glob("torn-statements-*"))
    assert [p.read_bytes() for p in aside] == [fragment]
    strict = run_dcx("-C", str(example), "verify", "--require-signatures", "--format", "json")
    assert strict.exit_code == 0, strict.stdout[-600:]

    third = run_dcx("-C", str(example), "commit", "--decision-id", "torn",
                    "--event-id", refs["event"], "--format", "json")  # fmt: skip
    assert third.exit_code == 0 and third.json()["data"]["replayed"] is True
    assert len(log.read_bytes().splitlines()) == len(stated), "a stated receipt is not stated again"
