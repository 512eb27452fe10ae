from __future__ import annotations

from pathlib import Path

from tests.support.cycle import OUTCOME, PROPOSAL, seed_evidence, write_json

D = "ttl-2026-12"


def _cycle(dcx, root: Path, decision: str, at: str) -> None:
    seed_evidence(root, decision, observed_at=at)
    for verb, body in (("propose", PROPOSAL), ("outcome", OUTCOME)):
        path = write_json(root / f"{verb}.json", body)
        assert (
            dcx(
                "-C",
                str(root),
                verb,
                "--decision-id",
                decision,
                "--from",
                str(path),
                "--observed-at",
                at,
            ).exit_code
            == 0
        )
    dcx(
        "-C",
        str(root),
        "writeback",
        "--decision-id",
        decision,
        "--kind",
        "validation",
        "--summary",
        "kept",
        "--observed-at",
        at,
    )


def test_log_lists_decisions_newest_first_with_chains(dcx, example: Path, snapshot_json) -> None:
    _cycle(dcx, example, "older", "2026-11-28T10:00:00Z")
    _cycle(dcx, example, D, "2026-11-29T10:00:00Z")
    result = dcx("-C", str(example), "log", "--format", "json")
    assert result.exit_code == 0
    rows = result.json()["data"]["decisions"]
    assert [r["decision_id"] for r in rows] == [D, "older"]
    assert [link["kind"] for link in rows[0]["chain"]] == [
        "evidence",
        "proposal",
        "outcome",
        "event",
    ]
    assert rows[0]["next_step"] == "prepare"  # this test seeded evidence without an assembly
    assert result.json() == snapshot_json
    limited = dcx("-C", str(example), "log", "--limit", "1", "--format", "json").json()["data"][
        "decisions"
    ]
    assert [r["decision_id"] for r in limited] == [D]
    text = dcx("-C", str(example), "log")
    assert (
        text.exit_code == 0
        and "* ttl-2026-12" in text.stdout
        and "recommends keep-90s-ttl" in text.stdout
    )


def test_diff_matches_records_by_id(dcx, example: Path) -> None:
    _cycle(dcx, example, D, "2026-11-29T10:00:00Z")
    changed = dict(
        PROPOSAL, recommended_decision=dict(PROPOSAL["recommended_decision"], confidence=0.6)
    )
    changed["objective_scores"] = list(reversed(PROPOSAL["objective_scores"]))
    second = dcx(
        "-C",
        str(example),
        "propose",
        "--decision-id",
        D,
        "--from",
        str(write_json(example / "p2.json", changed)),
        "--format",
        "json",
    ).json()["data"]["proposal"]
    first = dcx("-C", str(example), "log", "--format", "json").json()["data"]["decisions"][0][
        "chain"
    ][1]["ref"]
    result = dcx("-C", str(example), "diff", first, second["packet_ref"], "--format", "json")
    assert result.exit_code == 0
    paths = {c["path"]: c for c in result.json()["data"]["changes"]}
    assert paths["recommended_decision.confidence"] == {
        "path": "recommended_decision.confidence",
        "change": "changed",
        "old": 0.8,
        "new": 0.6,
    }
    assert not any(p.startswith("objective_scores") for p in paths)  # reordering is not a change
    mismatch = dcx("-C", str(example), "diff", first, second["evidence_packet_ref"])
    assert mismatch.exit_code == 2
