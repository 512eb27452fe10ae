from __future__ import annotations

import json
from pathlib import Path

import pytest

from dcx.state.events import id_recomputes, loopx_event_id
from tests.support import oracles
from tests.support.cycle import OUTCOME, PROPOSAL, seed_evidence, write_json

D = "ttl-2026-12"


@pytest.fixture
def recorded(dcx, example: Path) -> Path:
    seed_evidence(example, D)
    dcx(
        "-C",
        str(example),
        "propose",
        "--decision-id",
        D,
        "--from",
        str(write_json(example / "p.json", PROPOSAL)),
    )
    dcx(
        "-C",
        str(example),
        "outcome",
        "--decision-id",
        D,
        "--from",
        str(write_json(example / "o.json", OUTCOME)),
    )
    return example


def _writeback(dcx, root: Path, *extra: str):
    return dcx(
        "-C",
        str(root),
        "writeback",
        "--decision-id",
        D,
        "--kind",
        "validation",
        "--summary",
        "TTL kept at 90 s",
        "--format",
        "json",
        *extra,
    )


def test_writeback_appends_one_event_with_default_artifacts(
    dcx, recorded: Path, snapshot_json
) -> None:
    result = _writeback(dcx, recorded)
    assert result.exit_code == 0, result.stdout
    data = result.json()["data"]
    event = data["event"]
    assert data["appended"] is True
    assert event["event_id"] == oracles.event_id(event) and id_recomputes(event)
    kinds = sorted(ref.rsplit("-", 1)[0] for ref in event["artifact_refs"])
    assert kinds == ["decision-evidence", "decision-outcome", "decision-proposal"]
    assert event["causality"] == {"decision_id": D}
    assert all(v is False for v in event["boundary"].values())
    assert event == snapshot_json
    lines = (recorded / ".decision-context" / "events.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in lines] == [event]


def test_writeback_is_idempotent(dcx, recorded: Path) -> None:
    first = _writeback(dcx, recorded).json()["data"]["event"]
    again = _writeback(dcx, recorded, "--observed-at", "2026-11-30T00:00:00Z").json()["data"]
    assert again["appended"] is False and again["event"] == first
    assert len((recorded / ".decision-context" / "events.jsonl").read_text().splitlines()) == 1


def test_same_id_different_body_is_refused(dcx, recorded: Path) -> None:
    from dcx.state.events import build_event

    first = _writeback(dcx, recorded).json()["data"]["event"]
    upcoming = build_event(
        goal_id=first["goal_id"],
        agent_id="agent-a",
        decision_id=D,
        kind="todo_add",
        summary="follow-up todo",
        artifact_refs=first["artifact_refs"],
        recorded_at="2026-11-30T00:00:00Z",
    )
    forged = {**upcoming, "summary": "a different body under the same id"}
    log = recorded / ".decision-context" / "events.jsonl"
    with log.open("a") as handle:
        handle.write(json.dumps(forged) + "\n")
    before = log.read_bytes()
    result = dcx(
        "-C",
        str(recorded),
        "writeback",
        "--decision-id",
        D,
        "--kind",
        "todo_add",
        "--summary",
        "follow-up todo",
        "--observed-at",
        "2026-11-30T00:00:00Z",
    )
    assert result.exit_code == 1 and "different body" in result.stderr
    assert log.read_bytes() == before


def test_writeback_needs_the_chain(dcx, example: Path) -> None:
    seed_evidence(example, D)
    result = _writeback(dcx, example)
    assert result.exit_code == 1 and result.json()["error"]["code"] == "proposal_missing"


def test_writeback_rejects_unsafe_summary_and_bad_kind(dcx, recorded: Path) -> None:
    unsafe = dcx(
        "-C",
        str(recorded),
        "writeback",
        "--decision-id",
        D,
        "--kind",
        "validation",
        "--summary",
        "token=abc123",
    )
    assert unsafe.exit_code == 2 and "--summary" in unsafe.stderr and "abc123" not in unsafe.stderr
    kind = dcx(
        "-C", str(recorded), "writeback", "--decision-id", D, "--kind", "deploy", "--summary", "x"
    )
    assert kind.exit_code == 2 and "--kind" in kind.stderr


def test_explicit_artifacts_must_exist(dcx, recorded: Path) -> None:
    missing = _writeback(dcx, recorded, "--artifact", "decision-evidence-" + "f" * 32)
    assert missing.exit_code == 1 and missing.json()["error"]["code"] == "artifact_missing"
    malformed = _writeback(dcx, recorded, "--artifact", "not-a-ref")
    assert malformed.exit_code == 2


def test_loopx_event_ids_recompute() -> None:
    event = {"schema_version": "loopx_rollout_event_v0", "event_kind": "validation", "goal_id": "g"}
    event["event_id"] = loopx_event_id(event)
    assert len(event["event_id"]) == 16 and id_recomputes(event)
    assert not id_recomputes({**event, "goal_id": "h"})
