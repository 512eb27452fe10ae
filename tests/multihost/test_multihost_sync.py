"""``dcx sync [--push]`` between real clones of one bare origin (SPEC §16), real git and dcx processes."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.hosts import Goal

D = "ttl-2026-12"


def _origin_head(goal: Goal, host) -> str:
    return host.git("ls-remote", str(goal.origin), "refs/heads/main").stdout.split()[0]


def test_sync_push_then_sync_lists_pending_work_and_what_others_moved(tmp_path: Path) -> None:
    goal = Goal(tmp_path)
    a = goal.host("host-a", agent="agent-a")
    b = goal.host("host-b", agent="agent-b", now="2026-11-29T18:05:00Z")
    a.run("index")
    b.run("index")
    a.prepare(D)  # A's pending work (its companion stays here)
    b.prepare("purge-retry")
    b.propose("purge-retry")
    pushed = b.json("sync", "--push")
    assert pushed["schema_version"] == "dcx_result_v0" and pushed["command"] == "sync"
    assert pushed["data"]["pushed"] is True and pushed["data"]["committed_public_changes"] is True
    assert _origin_head(goal, b) == b.git("rev-parse", "HEAD").stdout.strip()

    synced = a.json("sync")["data"]
    assert synced["pulled"] is True and synced["pushed"] is False
    assert synced["verify"]["problems"] == 0
    assert [r["decision_id"] for r in synced["pending_here"]] == [D]
    moved = {r["decision_id"]: r for r in synced["moved_by_others"]}
    assert set(moved) == {"purge-retry"} and {"assembly", "evidence", "proposal"} <= set(moved["purge-retry"]["kinds"])
    assert synced["rescan"]["performed"] is True
    assert a.git("log", "-1", "--format=%P").stdout.count(" ") == 1  # a merge, never a rebase
    assert (a.dc / "decisions" / "purge-retry.jsonl").exists()
    text = a.run("sync").stdout
    assert "up to date" in text and f"pending here: {D}" in text


def test_sync_refuses_unrelated_uncommitted_changes_and_touches_nothing(tmp_path: Path) -> None:
    goal = Goal(tmp_path)
    a = goal.host("host-a")
    a.run("index")
    a.edit_authority()  # a person's edit outside the workspace
    head = a.git("rev-parse", "HEAD").stdout.strip()
    refused = a.json("sync", "--push", ok=False)
    assert refused["error"]["code"] == "sync_dirty_worktree"
    assert a.run("sync", ok=False).code == 1
    assert a.git("rev-parse", "HEAD").stdout.strip() == head
    assert "runbook-ttl-rollback.md" in a.git("status", "--porcelain").stdout


def test_sync_push_refuses_after_a_verify_with_problems(tmp_path: Path) -> None:
    goal = Goal(tmp_path)
    a = goal.host("host-a")
    a.run("index")
    a.prepare(D)
    before = _origin_head(goal, a)
    packet = next((a.dc / "packets" / "evidence").glob("*.json"))
    packet.chmod(0o644)
    body = json.loads(packet.read_text())
    body["observed_at"] = "2026-11-29T19:00:00Z"
    packet.write_text(json.dumps(body))
    refused = a.json("sync", "--push", ok=False)
    assert refused["error"]["code"] == "sync_verify_failed"
    assert _origin_head(goal, a) == before
