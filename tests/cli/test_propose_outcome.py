from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cycle import OUTCOME, PROPOSAL, seed_evidence, verified_outcome, write_json

D = "ttl-2026-12"


@pytest.fixture
def seeded(example: Path) -> tuple[Path, str]:
    return example, seed_evidence(example, D)


def _propose(dcx, root: Path, body, *extra: str):
    path = write_json(root / "proposal-in.json", body)
    return dcx(
        "-C",
        str(root),
        "propose",
        "--decision-id",
        D,
        "--from",
        str(path),
        "--format",
        "json",
        *extra,
    )


def test_propose_binds_latest_evidence(dcx, seeded, snapshot_json) -> None:
    root, evidence_ref = seeded
    result = _propose(dcx, root, PROPOSAL)
    assert result.exit_code == 0, result.stdout + result.stderr
    packet = result.json()["data"]["proposal"]
    assert packet["evidence_packet_ref"] == evidence_ref
    assert packet["authority_confirmation_required"] is True
    assert packet["proposed_by"] == "agent-a"
    assert packet == snapshot_json
    index = (root / ".decision-context" / "decisions" / f"{D}.jsonl").read_text().splitlines()
    assert [json.loads(line)["kind"] for line in index] == ["evidence", "proposal"]


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda b: b.update(objective_scores=[]), "objective_scores"),
        (lambda b: b.update(surprise=1), "surprise"),
        (
            lambda b: b["recommended_decision"].update(summary="see /home/alice/notes"),
            "recommended_decision.summary",
        ),
        (
            lambda b: b["recommended_decision"].update(confidence=1.5),
            "recommended_decision.confidence",
        ),
        (
            lambda b: b["alternatives"][0].update(tradeoff="mail bob@example.com"),
            "alternatives[0].tradeoff",
        ),
        (lambda b: b.update(review_at="next week"), "review_at"),
        (
            lambda b: b["objective_scores"].append(dict(b["objective_scores"][0])),
            "objective_scores[2].objective_id",
        ),
    ],
)
def test_bad_proposal_is_exit_2_naming_the_field(dcx, seeded, mutate, field) -> None:
    root, _ = seeded
    body = json.loads(json.dumps(PROPOSAL))
    mutate(body)
    before = sorted(p.name for p in (root / ".decision-context" / "packets").rglob("*.json"))
    result = _propose(dcx, root, body)
    assert result.exit_code == 2, result.stdout
    message = result.json()["error"]["message"]
    assert message.startswith("proposal-in.json: ") and field in message
    assert "/home/alice" not in result.stdout and "bob@example.com" not in result.stdout
    assert (
        sorted(p.name for p in (root / ".decision-context" / "packets").rglob("*.json")) == before
    )


def test_propose_invalid_json_names_file_and_line(dcx, seeded) -> None:
    root, _ = seeded
    (root / "broken.json").write_text('{\n "objective_scores": [,\n}')
    result = dcx(
        "-C", str(root), "propose", "--decision-id", D, "--from", str(root / "broken.json")
    )
    assert result.exit_code == 2
    assert "broken.json: invalid JSON at line 2" in result.stderr


def test_propose_without_evidence_is_refused(dcx, example: Path) -> None:
    path = write_json(example / "p.json", PROPOSAL)
    result = dcx("-C", str(example), "propose", "--decision-id", "other", "--from", str(path))
    assert result.exit_code == 1 and "dcx prepare" in result.stderr


def test_propose_rejects_stale_explicit_evidence(dcx, seeded) -> None:
    root, first = seeded
    seed_evidence(root, D, observed_at="2026-11-29T19:00:00Z")
    result = _propose(dcx, root, {**PROPOSAL, "evidence_packet_ref": first})
    assert result.exit_code == 1 and result.json()["error"]["code"] == "evidence_not_latest"


def test_propose_from_stdin(dcx, seeded) -> None:
    root, _ = seeded
    result = dcx(
        "-C", str(root), "propose", "--decision-id", D, "--from", "-", input=json.dumps(PROPOSAL)
    )
    assert result.exit_code == 0 and "keep-90s-ttl" in result.stdout


def _outcome(dcx, root: Path, body, *extra: str):
    path = write_json(root / "outcome-in.json", body)
    return dcx(
        "-C",
        str(root),
        "outcome",
        "--decision-id",
        D,
        "--from",
        str(path),
        "--format",
        "json",
        *extra,
    )


def test_outcome_is_append_only_and_links_proposal(dcx, seeded, snapshot_json) -> None:
    root, evidence_ref = seeded
    proposal_ref = _propose(dcx, root, PROPOSAL).json()["data"]["proposal"]["packet_ref"]
    pending = _outcome(dcx, root, OUTCOME)
    assert pending.exit_code == 0, pending.stdout
    first = pending.json()["data"]["outcome"]
    assert (
        first["proposal_packet_ref"] == proposal_ref
        and first["evidence_packet_ref"] == evidence_ref
    )
    assert first["reward_memory_candidate_eligible"] is False
    assert first == snapshot_json
    verified = _outcome(
        dcx, root, verified_outcome(evidence_ref), "--observed-at", "2026-12-06T18:00:00Z"
    )
    second = verified.json()["data"]["outcome"]
    assert second["reward_memory_candidate_eligible"] is True
    assert second["packet_ref"] != first["packet_ref"]
    outcomes = list((root / ".decision-context" / "packets" / "outcome").glob("*.json"))
    assert len(outcomes) == 2  # the pending receipt was not rewritten


def test_verified_without_verified_outcome_is_exit_2(dcx, seeded) -> None:
    root, _ = seeded
    _propose(dcx, root, PROPOSAL)
    result = _outcome(dcx, root, {**OUTCOME, "verification_status": "verified"})
    assert result.exit_code == 2 and result.json()["error"]["field"] == "verification_status"


def test_self_confirmation_refused_by_default(dcx, seeded) -> None:
    root, _ = seeded
    _propose(dcx, root, PROPOSAL)
    body = json.loads(json.dumps(OUTCOME))
    body["accepted_decision"]["accepted_by"] = "agent-a"
    result = _outcome(dcx, root, body)
    assert (
        result.exit_code == 2 and result.json()["error"]["code"] == "self_confirmation_not_allowed"
    )


@pytest.mark.parametrize(
    "spelling", ["AGENT-A", "agent_a", "agent-a.", "Agent.A", "agenta", "AGENT__A"]
)
def test_self_confirmation_is_judged_after_normalising_the_name(dcx, seeded, spelling: str) -> None:
    """Issue 12: NFKC, case folding and removing - _ . and spaces before comparing."""
    root, _ = seeded
    _propose(dcx, root, PROPOSAL)
    body = json.loads(json.dumps(OUTCOME))
    body["accepted_decision"]["accepted_by"] = spelling
    result = _outcome(dcx, root, body)
    assert (
        result.exit_code == 2 and result.json()["error"]["code"] == "self_confirmation_not_allowed"
    )


def test_outcome_option_must_be_proposed(dcx, seeded) -> None:
    root, _ = seeded
    _propose(dcx, root, PROPOSAL)
    body = json.loads(json.dumps(OUTCOME))
    body["accepted_decision"]["option_id"] = "something-else"
    assert _outcome(dcx, root, body).json()["error"]["field"] == "accepted_decision.option_id"
