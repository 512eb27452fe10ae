"""Issue 11 §3: `writeback --artifact` naming another decision's packet is refused at writeback."""

from __future__ import annotations

from pathlib import Path

from tests.support.cycle import OUTCOME, PROPOSAL, seed_evidence, write_json

D = "ttl-2026-12"


def _record(dcx, root: Path, decision_id: str) -> None:
    seed_evidence(root, decision_id)
    for verb, body in (("propose", PROPOSAL), ("outcome", OUTCOME)):
        path = write_json(root / f"{verb}-{decision_id}.json", body)
        assert (
            dcx("-C", str(root), verb, "--decision-id", decision_id, "--from", str(path)).exit_code
            == 0
        )


def test_artifact_of_another_decision_is_refused_before_appending(dcx, example: Path) -> None:
    _record(dcx, example, D)
    _record(dcx, example, "other")
    from dcx.core.workspace import Workspace
    from dcx.state import decisions

    ws = Workspace(example)
    own = [decisions.latest(ws, D, kind) for kind in ("evidence", "proposal")]
    foreign = decisions.latest(ws, "other", "outcome")
    events = example / ".decision-context" / "events.jsonl"
    before = events.read_bytes() if events.exists() else b""
    args = [
        "-C",
        str(example),
        "writeback",
        "--decision-id",
        D,
        "--kind",
        "validation",
        "--summary",
        "kept",
    ]
    for ref in (*own, foreign):
        args += ["--artifact", ref]
    result = dcx(*args, "--format", "json")
    assert result.exit_code == 2, result.stdout
    error = result.json()["error"]
    assert error["code"] == "artifact_wrong_decision" and foreign in error["message"]
    assert "other" in error["message"] and error["hint"]
    assert (events.read_bytes() if events.exists() else b"") == before
    # its own packets are fine
    ok = dcx(
        "-C",
        str(example),
        "writeback",
        "--decision-id",
        D,
        "--kind",
        "validation",
        "--summary",
        "kept",
        *[x for ref in [*own, decisions.latest(ws, D, "outcome")] for x in ("--artifact", ref)],
    )
    assert ok.exit_code == 0, ok.stderr
