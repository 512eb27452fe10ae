"""Seen in `make demo` (the real clock, no DCX_NOW): verify refused every decision index,
"observed_at is not the time decision-source-scan-… was recorded" — prepare indexes its
parts at its own start, and the scan it runs is stamped a moment later. Tests fix the
clock, so only the demo saw it. An index time may be a scan's own or earlier; any other
kind's must be its packet's, and a later scan time is still refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import run_dcx


def test_verify_passes_after_a_prepare_on_the_real_clock(
    example: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DCX_NOW", raising=False)
    assert run_dcx("-C", str(example), "index").exit_code == 0
    prepared = run_dcx("-C", str(example), "prepare", "--decision-id", "d1", "--auto-rebase")
    assert prepared.exit_code == 0, prepared.stderr
    index = example / ".decision-context" / "decisions" / "d1.jsonl"
    lines = [json.loads(line) for line in index.read_text().splitlines()]
    scan = next(line for line in lines if line["kind"] == "scan")
    stored = json.loads(
        next((example / ".decision-context" / "packets").glob(f"*/{scan['ref']}.json")).read_text()
    )
    assert scan["observed_at"] <= stored["observed_at"]  # the control: the two times differ or tie
    verify = run_dcx("-C", str(example), "verify", "--format", "json")
    assert verify.exit_code == 0, verify.json()["data"]["problems"][:3]

    scan["observed_at"] = "2099-01-01T00:00:00Z"  # a later time would reorder: still refused
    index.write_text("".join(json.dumps(line, sort_keys=True) + "\n" for line in lines))
    assert run_dcx("-C", str(example), "verify", "--format", "json").exit_code == 1
