"""A prepared example decision, built the way a user would (used by cycle tests)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

D = "ttl-2026-12"
QUERY = "when do we roll back the catalog cache TTL change origin p99 latency"
RUNBOOK = Path("docs") / "runbook-ttl-rollback.md"


def stale_runbook(root: Path) -> None:
    """The authority moves after indexing: the rollback threshold changes."""
    path = root / RUNBOOK
    path.write_text(path.read_text().replace("stays above 400 ms", "stays above 350 ms"))


def prepared(dcx, root: Path, *extra: str, query: bool = True) -> dict[str, Any]:
    assert dcx("-C", str(root), "index").exit_code == 0
    stale_runbook(root)
    args = ["-C", str(root), "prepare", "--decision-id", D, "--auto-rebase", "--format", "json", *extra]
    if query:
        args += ["--query", QUERY, "--query-summary", "TTL rollback criteria"]
    result = dcx(*args)
    assert result.exit_code == 0, result.stdout + result.stderr
    return result.json()["data"]


def through_writeback(dcx, root: Path) -> str:
    for verb, name in (("propose", "proposal.json"), ("outcome", "outcome.json")):
        result = dcx("-C", str(root), verb, "--decision-id", D, "--from", str(root / name))
        assert result.exit_code == 0, result.stderr
    event = dcx("-C", str(root), "writeback", "--decision-id", D, "--kind", "validation",
                "--summary", "TTL kept at 90 s", "--format", "json")
    return event.json()["data"]["event"]["event_id"]


def cursor_bytes(root: Path) -> bytes | None:
    path = root / ".decision-context" / "private" / "cursors" / "agent-a.json"  # the acting agent's (SPEC §16)
    return path.read_bytes() if path.exists() else None


def packets(root: Path, kind: str) -> list[dict[str, Any]]:
    folder = root / ".decision-context" / "packets" / kind
    return [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]
