"""Issue 11 §3: `prepare --baseline` adopts every item of a source (SPEC §8.2), not max_changes of them."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cycle import D, through_writeback

SOURCES = Path(".decision-context") / "sources.toml"


def _cap(root: Path, max_changes: int) -> None:
    registry = root / SOURCES
    registry.write_text(
        registry.read_text().replace(
            'conflict_rule = "canonical_revision_wins"',
            f'conflict_rule = "canonical_revision_wins"\nmax_changes = {max_changes}',
        )
    )


def test_baseline_adopts_more_than_max_changes_and_a_rescan_is_clean(dcx, example: Path) -> None:
    _cap(example, 2)
    for n in range(12):
        (example / "docs" / f"note-{n:02}.md").write_text(f"# Note {n}\n\nBody of note {n}.\n")
    total = len(list((example / "docs").glob("*.md")))
    result = dcx(
        "-C", str(example), "prepare", "--decision-id", D, "--baseline", "--format", "json"
    )
    assert result.exit_code == 0, result.stdout + result.stderr
    asm = result.json()["data"]["assembly"]
    assert [(r["disposition"], r["reason_code"]) for r in asm["checkpoint"]["rows"]] == [
        ("ready_after_writeback", "baseline_adopted")
    ]
    receipt = asm["scan_receipts"][0]
    assert receipt["changed_count"] == 2 and receipt["telemetry"]["result_cap_applied"] is False
    assert receipt["telemetry"]["adopted_unlisted_count"] == total - 2
    event_id = through_writeback(dcx, example)
    assert (
        dcx("-C", str(example), "commit", "--decision-id", D, "--event-id", event_id).exit_code == 0
    )
    scan = dcx("-C", str(example), "scan", "--format", "json").json()["data"]["receipts"][0]
    assert (scan["status"], scan["changed_count"]) == ("no_change", 0)


def test_a_normal_capped_scan_still_leaves_the_rest_for_later(dcx, example: Path) -> None:
    _cap(example, 2)
    scan = dcx("-C", str(example), "scan", "--format", "json").json()["data"]["receipts"][0]
    assert scan["changed_count"] == 2 and scan["telemetry"]["result_cap_applied"] is True
    assert "adopted_unlisted_count" not in scan["telemetry"]
    assert json.dumps(
        scan
    )  # the receipt stays the same shape as before for every non-baseline scan
