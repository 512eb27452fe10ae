"""`dcx log --decision-id` of a decision the workspace does not hold is exit 2 naming it (as
`dcx abandon` says), not "no decisions yet" with exit 0."""

from __future__ import annotations

from pathlib import Path

from tests.support.cycle import D, prepared


def test_log_of_an_unknown_decision_names_it(dcx, example: Path) -> None:
    prepared(dcx, example)
    out = dcx("-C", str(example), "log", "--decision-id", "nope", "--format", "json")
    assert out.exit_code == 2
    error = out.json()["error"]
    assert error["code"] == "unknown_decision" and "no decision nope" in error["message"]
    text = dcx("-C", str(example), "log", "--decision-id", "nope")
    assert text.exit_code == 2 and "no decision nope" in (text.stdout + text.stderr)
    assert "no decisions yet" not in (text.stdout + text.stderr).lower()
    known = dcx("-C", str(example), "log", "--decision-id", D, "--format", "json")
    assert known.exit_code == 0 and known.json()["data"]["decisions"][0]["decision_id"] == D
