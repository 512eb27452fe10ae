"""Seen in tests/reliability/test_crash_commit.py: a commit killed while it appended its own
signed statement left statements.jsonl torn; the next commit finished the job but could not
sign it (`torn_log` warning) and `dcx verify` then failed until a manual --repair. The
statement log's next append now sets the fragment aside, as `verify --repair` does."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli import run_dcx


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
