"""Issue 11 §3: a new event on an already committed assembly says so, instead of "prepare again here"."""

from __future__ import annotations

from pathlib import Path

from tests.support.cycle import D, prepared, through_writeback


def test_second_event_on_a_committed_assembly_says_it_is_committed(dcx, example: Path) -> None:
    prepared(dcx, example)
    first = through_writeback(dcx, example)
    done = dcx(
        "-C", str(example), "commit", "--decision-id", D, "--event-id", first, "--format", "json"
    )
    assert done.exit_code == 0
    receipt = done.json()["data"]["receipt"]["receipt_ref"]
    second = dcx(
        "-C",
        str(example),
        "writeback",
        "--decision-id",
        D,
        "--kind",
        "todo_add",
        "--summary",
        "watch the p99 for a month",
        "--format",
        "json",
    ).json()["data"]["event"]["event_id"]
    result = dcx(
        "-C", str(example), "commit", "--decision-id", D, "--event-id", second, "--format", "json"
    )
    assert result.exit_code == 1
    error = result.json()["error"]
    assert error["code"] == "already_committed"
    assert receipt[:30] in error["message"] and first[:18] in error["message"]
    assert "on this machine" not in error["hint"] and "prepare" in error["hint"]
    # the first event still replays
    again = dcx(
        "-C", str(example), "commit", "--decision-id", D, "--event-id", first, "--format", "json"
    )
    assert again.exit_code == 0 and again.json()["data"]["replayed"] is True
