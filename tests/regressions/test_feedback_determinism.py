"""Issue 11 §3: `dcx feedback` with the same inputs gives the same packet, at any time."""

from __future__ import annotations

from pathlib import Path


def _feedback(dcx, root: Path, when: str):
    result = dcx(
        "-C",
        str(root),
        "feedback",
        "--decision-id",
        "ttl-2026-12",
        "--observed-at",
        when,
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.stderr
    return result.json()["data"]


def test_same_inputs_give_the_same_feedback_packet(dcx, cycled: Path) -> None:
    folder = cycled / ".decision-context" / "packets" / "feedback"
    index = cycled / ".decision-context" / "decisions" / "ttl-2026-12.jsonl"
    before = sorted(p.name for p in folder.iterdir())
    lines = index.read_text().count("\n")
    first = _feedback(dcx, cycled, "2026-12-24T09:00:00Z")
    second = _feedback(dcx, cycled, "2027-01-02T10:00:00Z")
    assert first["feedback"] == second["feedback"]
    assert (
        first["recorded"] is False and second["recorded"] is False
    )  # the cycle already recorded it
    assert sorted(p.name for p in folder.iterdir()) == before
    assert index.read_text().count("\n") == lines
    text = dcx("-C", str(cycled), "feedback", "--decision-id", "ttl-2026-12")
    assert "already recorded" in text.stdout


def test_new_inputs_give_a_new_feedback_packet(dcx, cycled: Path) -> None:
    before = _feedback(dcx, cycled, "2026-12-24T09:00:00Z")["feedback"]["feedback_ref"]
    import json

    outcome = json.loads((cycled / "outcome.json").read_text())
    outcome["invalidated_assumptions"] = [
        {
            "assumption_id": "ttl-safe",
            "summary": "A longer TTL was safe",
            "evidence_ref": "load-test-7",
            "invalidated_at": "2026-12-01T00:00:00Z",
        }
    ]
    (cycled / "outcome2.json").write_text(json.dumps(outcome))
    assert (
        dcx(
            "-C",
            str(cycled),
            "outcome",
            "--decision-id",
            "ttl-2026-12",
            "--from",
            str(cycled / "outcome2.json"),
        ).exit_code
        == 0
    )
    after = _feedback(dcx, cycled, "2026-12-24T09:00:00Z")
    assert after["recorded"] is True and after["feedback"]["feedback_ref"] != before
