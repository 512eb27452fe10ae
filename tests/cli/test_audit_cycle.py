"""`dcx audit` after a full cycle: clean as dcx wrote it; each planted leak found, never printed."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.cli import run_dcx
from tests.support.workspace import packet_files

# A sentence of the example's own authority text (docs/load-test-90s-ttl.md, indexed and exact-read).
SOURCE_LINE = (
    "One peak hour of production traffic was replayed against staging with the edge TTL set to 90 s"
)


def test_full_cycle_is_clean(dcx, cycled: Path) -> None:
    result = dcx("-C", str(cycled), "audit", "--format", "json")
    assert result.exit_code == 0, result.json()["data"]["findings"]
    data = result.json()["data"]
    assert data["findings"] == []
    assert data["files_scanned"] >= 16  # 13 packets, the decision index, events, workspace.toml, …
    assert (
        data["private_values_known"] > 3
    )  # the root, the key, a cursor, the refs behind opaque refs
    text = run_dcx("-C", str(cycled), "audit")
    assert text.exit_code == 0 and text.stdout.startswith("clean")


def _plant(root: Path, value: str) -> Path:
    path = next(p for ref, p in packet_files(root).items() if ref.startswith("decision-outcome-"))
    os.chmod(path, 0o644)
    body = json.loads(path.read_text())
    body["accepted_decision"]["summary"] = value
    path.write_text(json.dumps(body, indent=2, sort_keys=True) + "\n")
    return path


@pytest.mark.parametrize(
    ("planted", "problem"),
    [
        ("notes in {root}/docs/runbook-ttl-rollback.md", "goal root path"),
        (f"as the runbook says: {SOURCE_LINE}", "a run of 12+ words of source text"),
        (
            "replay with Authorization: Bearer 9f8e7d6c5b4a39281706f5e4",
            "unsafe text (bearer token)",
        ),
        ("approved by ttl-owner@storefront.example", "unsafe text (email)"),
    ],
    ids=["path", "source-sentence", "bearer-token", "email"],
)
def test_a_hand_edited_packet_is_caught(dcx, cycled: Path, planted: str, problem: str) -> None:
    value = planted.format(root=cycled.resolve())
    path = _plant(cycled, value)
    result = dcx("-C", str(cycled), "audit", "--format", "json")
    assert result.exit_code == 1
    findings = result.json()["data"]["findings"]
    assert {
        "file": f".decision-context/packets/outcome/{path.name}",
        "field": "accepted_decision.summary",
        "problem": problem,
    } in findings
    assert value not in result.stdout
    text = dcx("-C", str(cycled), "audit")
    assert (
        text.exit_code == 1 and path.name in text.stdout and value not in text.stdout + text.stderr
    )
