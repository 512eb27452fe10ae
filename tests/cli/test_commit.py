"""dcx commit: every refusal writes nothing; a good commit advances, a second replays (issue 6)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.cycle import D, prepared, through_writeback
from tests.support.workspace import cursor_bytes, packets


@pytest.fixture
def ready(dcx, example: Path) -> tuple[Path, str]:
    prepared(dcx, example)
    return example, through_writeback(dcx, example)


def _commit(dcx, root: Path, event_id: str, *extra: str):
    return dcx(
        "-C",
        str(root),
        "commit",
        "--decision-id",
        D,
        "--event-id",
        event_id,
        "--format",
        "json",
        *extra,
    )


def test_good_commit_advances_then_replays(dcx, ready, snapshot_json) -> None:
    root, event_id = ready
    first = _commit(dcx, root, event_id)
    assert first.exit_code == 0, first.stdout
    receipt = first.json()["data"]["receipt"]
    assert receipt["status"] == "committed" and [s["result"] for s in receipt["sources"]] == [
        "advanced"
    ]
    cursors = json.loads(cursor_bytes(root))["cursors"]
    assert list(cursors) == ["source:authority:docs"] and cursors[
        "source:authority:docs"
    ].startswith("tree:")
    assert not list((root / ".decision-context" / "private" / "pending").glob("*.json"))
    assert {"receipt": receipt} == snapshot_json
    before = cursor_bytes(root)
    second = _commit(dcx, root, event_id)
    assert second.exit_code == 0 and second.json()["data"]["replayed"] is True
    assert second.json()["data"]["receipt"] == receipt and cursor_bytes(root) == before
    assert len(packets(root, "commit")) == 1
    rescan = dcx("-C", str(root), "scan", "--format", "json").json()
    assert rescan["data"]["receipts"][0]["status"] == "no_change"


def _refused(dcx, root: Path, event_id: str, code: str, *extra: str) -> None:
    before = cursor_bytes(root)
    receipts = packets(root, "commit")
    result = _commit(dcx, root, event_id, *extra)
    assert result.exit_code == 1, result.stdout
    assert result.json()["error"]["code"] == code
    assert cursor_bytes(root) == before
    assert packets(root, "commit") == receipts


def test_missing_event_is_refused(dcx, ready) -> None:
    root, _ = ready
    _refused(dcx, root, "dcx-event-" + "0" * 32, "event_missing")


def _append_event(root: Path, event: dict) -> str:
    from dcx.state.events import dcx_event_id

    event["event_id"] = dcx_event_id(event)
    with (root / ".decision-context" / "events.jsonl").open("a") as handle:
        handle.write(json.dumps(event, sort_keys=True) + "\n")
    return event["event_id"]


def _event(root: Path, event_id: str) -> dict:
    lines = (root / ".decision-context" / "events.jsonl").read_text().splitlines()
    return next(json.loads(line) for line in lines if json.loads(line)["event_id"] == event_id)


def test_event_lacking_an_artifact_is_refused(dcx, ready) -> None:
    root, event_id = ready
    event = _event(root, event_id)
    event["artifact_refs"] = [
        r for r in event["artifact_refs"] if not r.startswith("decision-outcome-")
    ]
    _refused(dcx, root, _append_event(root, event), "event_artifacts_invalid")


def test_event_for_another_decision_is_refused(dcx, ready) -> None:
    root, event_id = ready
    event = _event(root, event_id)
    event["causality"] = {"decision_id": "some-other-decision"}
    _refused(dcx, root, _append_event(root, event), "event_decision_mismatch")


def test_forged_event_id_is_refused(dcx, ready) -> None:
    root, event_id = ready
    event = _event(root, event_id)
    event["summary"] = "edited after the fact"
    with (root / ".decision-context" / "events.jsonl").open("a") as handle:
        handle.write(
            json.dumps({**event, "event_id": "dcx-event-" + "1" * 32}, sort_keys=True) + "\n"
        )
    _refused(dcx, root, "dcx-event-" + "1" * 32, "event_id_mismatch")


def test_profile_edited_after_prepare_is_refused(dcx, ready) -> None:
    root, event_id = ready
    profile = root / ".decision-context" / "profile.toml"
    profile.write_text(profile.read_text().replace("max_results = 2", "max_results = 3"))
    _refused(dcx, root, event_id, "profile_changed")


def test_comment_edit_of_the_profile_is_not_a_change(dcx, ready) -> None:
    root, event_id = ready
    profile = root / ".decision-context" / "profile.toml"
    profile.write_text("# a new comment\n" + profile.read_text())
    assert _commit(dcx, root, event_id).exit_code == 0


def test_cursor_moved_after_prepare_is_refused(dcx, ready) -> None:
    from tests.support.cycle import run_cycle

    root, event_id = ready
    runbook = root / "docs" / "runbook-ttl-rollback.md"
    runbook.write_text(runbook.read_text() + "\nA later edit.\n")
    run_cycle(
        root, "another-decision", edit_authority=False
    )  # its commit moves the acting agent's cursor
    _refused(dcx, root, event_id, "cursor_moved")


def test_a_hand_moved_cursor_is_unbacked_and_refused(dcx, ready) -> None:
    """A cursor no receipt names (edited by hand, or its receipt dropped by a force-push): commit refuses
    with the repair hint rather than absorb on top of it (SPEC §16 v4)."""
    from dcx.core.workspace import Workspace
    from dcx.state.cursors import write_cursors

    root, event_id = ready
    write_cursors(
        Workspace(root), {"source:authority:docs": "tree:" + "f" * 64}, "agent-a"
    )  # the acting agent's
    _refused(dcx, root, event_id, "cursor_unbacked")


def test_tampered_packet_is_refused(dcx, ready) -> None:
    root, event_id = ready
    path = next((root / ".decision-context" / "packets" / "proposal").glob("*.json"))
    os.chmod(path, 0o644)
    path.write_text(path.read_text().replace("0.8", "0.9"))
    _refused(dcx, root, event_id, "packet_corrupt")


def test_removed_source_cursor_is_kept_not_fatal(dcx, ready) -> None:
    from dcx.core.workspace import Workspace
    from dcx.state.cursors import read_cursors, write_cursors

    root, event_id = ready
    ws = Workspace(root)
    write_cursors(ws, {"source:retired": "tree:" + "a" * 64}, "agent-a")
    # a cursor of a source no longer in the registry must not block commit
    result = _commit(dcx, root, event_id)
    assert result.exit_code == 0, result.stdout
    assert set(read_cursors(ws, "agent-a")) == {"source:retired", "source:authority:docs"}


def test_commit_needs_activation(dcx, ready) -> None:
    root, event_id = ready
    profile = root / ".decision-context" / "profile.toml"
    profile.write_text(profile.read_text().replace("enabled = true", "enabled = false"))
    result = _commit(dcx, root, event_id)
    assert result.exit_code == 3


def test_interrupted_commit_is_completed_as_replayed(dcx, ready) -> None:
    """Killed after the cursor write and before the receipt: the next commit finishes it."""
    import subprocess
    import sys

    root, event_id = ready
    exe = str(Path(sys.executable).parent / "dcx")
    env = {**os.environ, "DCX_FAULT_POINT": "commit.after_cursor_write"}
    proc = subprocess.run(
        [exe, "-C", str(root), "commit", "--decision-id", D, "--event-id", event_id],
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == -9
    assert cursor_bytes(root) is not None and not packets(root, "commit")
    result = _commit(dcx, root, event_id)
    assert result.exit_code == 0
    receipt = result.json()["data"]["receipt"]
    assert receipt["status"] == "replayed" and [s["result"] for s in receipt["sources"]] == [
        "replayed"
    ]


def test_external_event_log_must_be_listed(dcx, ready) -> None:
    root, event_id = ready
    log = root / "host-events.jsonl"
    log.write_text((root / ".decision-context" / "events.jsonl").read_text())
    _refused(dcx, root, event_id, "event_log_not_allowed", "--event-log", str(log))
    profile = root / ".decision-context" / "profile.toml"
    profile.write_text(
        profile.read_text().replace(
            "allow_self_confirmation = false",
            'allow_self_confirmation = false\nexternal_event_logs = ["host-events.jsonl"]',
        )
    )
    # a semantic profile edit after prepare: the external log is read, then the digest check refuses
    _refused(dcx, root, event_id, "profile_changed", "--event-log", str(log))


def test_full_cycle_packet_snapshots(dcx, ready, snapshot_json) -> None:
    root, event_id = ready
    assert _commit(dcx, root, event_id).exit_code == 0
    assert dcx("-C", str(root), "feedback", "--decision-id", D).exit_code == 0
    cycle = {
        kind: packets(root, kind)
        for kind in (
            "evidence",
            "checkpoint",
            "rebase",
            "proposal",
            "outcome",
            "commit",
            "feedback",
        )
    }
    assert all(len(v) == 1 for v in cycle.values())
    assert cycle == snapshot_json


def test_commit_from_a_listed_loopx_host_log(dcx, example: Path) -> None:
    from dcx.state.events import loopx_event_id

    profile = example / ".decision-context" / "profile.toml"
    profile.write_text(
        profile.read_text().replace(
            "allow_self_confirmation = false",
            'allow_self_confirmation = false\nexternal_event_logs = ["host/rollout.jsonl"]',
        )
    )
    prepared(dcx, example)
    for verb, name in (("propose", "proposal.json"), ("outcome", "outcome.json")):
        assert (
            dcx(
                "-C", str(example), verb, "--decision-id", D, "--from", str(example / name)
            ).exit_code
            == 0
        )
    refs = [packets(example, kind)[0]["packet_ref"] for kind in ("evidence", "proposal", "outcome")]
    event = {
        "schema_version": "loopx_rollout_event_v0",
        "goal_id": "catalog-cache-ttl",
        "agent_id": "host-agent",
        "event_kind": "todo_complete",
        "status": "committed",
        "recorded_at": "2026-11-29T18:05:00Z",
        "summary": "Rollback todo closed",
        "causality": {"decision_id": D},
        "artifact_refs": refs,
        "run_id": "turn-7",
    }
    event["event_id"] = loopx_event_id(event)
    log = example / "host" / "rollout.jsonl"
    log.parent.mkdir()
    log.write_text(
        json.dumps(event, sort_keys=True) + "\n" + json.dumps(event, sort_keys=True) + "\n"
    )  # union-merge duplicate
    result = _commit(dcx, example, event["event_id"], "--event-log", str(log))
    assert result.exit_code == 0, result.stdout
    assert result.json()["data"]["receipt"]["event_id"] == event["event_id"]
