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
    assert set(moved) == {"purge-retry"} and {"assembly", "evidence", "proposal"} <= set(
        moved["purge-retry"]["kinds"]
    )
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


def _git(cwd: Path, *args: str) -> str:
    import subprocess

    env = {"GIT_CONFIG_NOSYSTEM": "1", "HOME": str(cwd), "PATH": __import__("os").environ["PATH"]}
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def test_the_first_host_publishes_a_branch_its_origin_does_not_have_yet(tmp_path: Path) -> None:
    """A goal repository's first host: origin is empty, the branch has no upstream. sync has nothing to pull
    (it says so), and --push publishes the branch with an upstream; without a remote it is a one-line refusal."""
    from tests.support.cli import run_dcx

    origin = tmp_path / "origin.git"
    _git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    work = tmp_path / "work"
    _git(tmp_path, "init", "-q", "-b", "main", str(work))
    run_dcx("init", cwd=work)
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "-m", "goal")
    lonely = run_dcx("sync", cwd=work)  # no remote at all
    assert (
        lonely.exit_code == 1
        and "sync_pull_failed" in lonely.stderr
        and "git remote add" in lonely.stderr
    )
    _git(work, "remote", "add", "origin", str(origin))
    first = run_dcx("sync", "--format", "json", cwd=work)
    assert first.exit_code == 0, first.stderr
    assert first.json()["data"]["upstream"] is None and first.json()["data"]["pushed"] is False
    assert any("dcx sync --push" in w for w in first.json()["warnings"])
    pushed = run_dcx("sync", "--push", "--format", "json", cwd=work)
    assert pushed.exit_code == 0, pushed.stderr
    assert pushed.json()["data"]["pushed"] is True
    assert _git(work, "rev-parse", "--abbrev-ref", "main@{upstream}").strip() == "origin/main"
    assert _git(origin, "rev-parse", "main").strip() == _git(work, "rev-parse", "HEAD").strip()
    again = run_dcx("sync", "--format", "json", cwd=work)
    assert (
        again.exit_code == 0
        and again.json()["data"]["upstream"] == "tracked"
        and not again.json()["warnings"]
    )


def test_sync_merges_with_its_own_message_never_the_remotes_url(tmp_path: Path) -> None:
    """SPEC §3.7: a merge commit sync makes names the branches, never the remote's URL (a local path)."""
    goal = Goal(tmp_path)
    a = goal.host("host-a")
    b = goal.host("host-b", agent="agent-b")
    a.run("index")
    b.run("index")
    b.prepare("purge-retry")
    b.run("sync", "--push")
    a.prepare(D)
    a.run("sync")
    parents = a.git("log", "-1", "--format=%P").stdout.split()
    message = a.git("log", "-1", "--format=%B").stdout.strip()
    assert len(parents) == 2, message
    assert message == "dcx sync: merge origin/main into main"
    assert str(goal.origin) not in a.git("log", "--format=%B").stdout


def test_sync_stages_only_what_dcx_writes(tmp_path: Path) -> None:
    """SPEC §3.7: any other file under .decision-context/ is refused, named, and nothing is committed."""
    goal = Goal(tmp_path)
    a = goal.host("host-a")
    a.run("index")
    a.prepare(D)
    head = a.git("rev-parse", "HEAD").stdout
    for stray in ("notes.md", "packets/evidence/draft.json", "decisions/UPPER.jsonl"):
        path = a.dc / stray
        path.write_text("{}\n")
        refused = a.json("sync", ok=False)
        assert refused["error"]["code"] == "sync_foreign_file", refused
        assert f".decision-context/{stray}" in refused["error"]["message"]
        assert a.git("rev-parse", "HEAD").stdout == head
        path.unlink()
    a.record("prepared")  # the packets are tracked now; dcx never deletes one
    gone = next((a.dc / "packets" / "manifest").glob("*.json"))
    gone.unlink()
    refused = a.json("sync", ok=False)
    assert (
        refused["error"]["code"] == "sync_foreign_file" and gone.name in refused["error"]["message"]
    )
