"""A second, independent MCP server as authority: ``dcx mcp`` of another goal (SPEC §14, §15.1).

Goal A reads goal B's decisions (``dcx://decisions/<id>``, each the chain of B's public
packets) through B's own ``dcx mcp`` process. The oracles are B's files (which decisions it
holds) and B's command line (``dcx log --format json``), never the adapter.
"""

from __future__ import annotations

import json
from pathlib import Path

from dcx.core.clock import FixedClock
from dcx.sources.plane import exact_read_scan, read_complete, scan_source
from tests.support.cli import DCX_EXE, run_dcx
from tests.support.cycle import seed_evidence
from tests.support.sources import binding_block, configure, plane, source_block
from tests.support.workspace import FIXED_NOW

CLOCK = FixedClock(FIXED_NOW)
SID = "source:goal-b"
PREFIX = "dcx://decisions/"


def register(root: Path, other: Path) -> None:
    locator = (
        "{ command = "
        + json.dumps([DCX_EXE, "-C", str(other), "mcp"])
        + ", env = { DCX_NOW = "
        + json.dumps(FIXED_NOW)
        + " }, uri_prefix = "
        + json.dumps(PREFIX)
        + " }"
    )
    configure(root, binding_block("goals", "mcp") + source_block(SID, locator, provider_id="goals"))


def decisions_of(other: Path) -> list[str]:
    folder = other / ".decision-context" / "decisions"
    return sorted(PREFIX + p.stem for p in folder.glob("*.jsonl"))


def log_row(other: Path, decision_id: str) -> dict:
    result = run_dcx("-C", str(other), "log", "--decision-id", decision_id, "--format", "json")
    assert result.exit_code == 0, result.stderr
    return result.json()["data"]["decisions"][0]


def scan(root: Path, cursor: str | None = None):
    _ws, _profile, registry, providers = plane(root)
    return scan_source(
        providers, registry.source(SID), cursor_before=cursor, clock=CLOCK
    ), providers


def test_another_goals_dcx_mcp_is_an_authority_source(fresh_ws, cycled):
    register(fresh_ws, cycled)
    first, providers = scan(fresh_ws)
    assert first.status == "completed", first.reason_code
    assert [(i.resource_ref, i.change) for i in first.items] == [
        (uri, "added") for uri in decisions_of(cycled)
    ]
    reads = exact_read_scan(providers, first, clock=CLOCK)
    assert read_complete(first, reads)
    for uri, read in reads.items():
        assert json.loads(read.content) == log_row(cycled, uri[len(PREFIX) :])

    # goal B moves on: a new decision, and one more packet in an existing decision's chain
    [existing] = [uri[len(PREFIX) :] for uri in decisions_of(cycled)][:1]
    seed_evidence(cycled, "rollout-2027", observed_at="2026-12-02T09:00:00Z")
    seed_evidence(cycled, existing, observed_at="2026-12-03T09:00:00Z")
    second, _ = scan(fresh_ws, first.cursor_after)
    assert sorted((i.resource_ref, i.change) for i in second.items) == sorted(
        [(PREFIX + "rollout-2027", "added"), (PREFIX + existing, "modified")]
    )
    third, _ = scan(fresh_ws, second.cursor_after)
    assert third.status == "no_change"
