"""SPEC §16 v4 rules, each found broken by a multi-host try: a bare origin, clones, real git and dcx.

Every test here failed on the code before its rule was built (the state dcx
left behind was wrong while it answered "ok"). Oracles: git's own view of the
repository (``git rev-parse``, ``git log``, ``git status``) and the rule as
SPEC §16 states it.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.hosts import DC, Goal

D = "ttl-2026-12"


def _head(host) -> str:
    return host.git("rev-parse", "HEAD").stdout.strip()


def _uncommitted(host) -> list[str]:
    return [line[3:] for line in host.git("status", "--porcelain", "-uall").stdout.splitlines()]


def test_sync_on_a_detached_head_commits_nothing_there(tmp_path: Path) -> None:
    """Seen: sync committed the public half on a detached HEAD, then refused `git switch BRANCH`; following
    the hint orphaned the decision (its index and packets left the work tree, verify clean, log forgot it)."""
    goal = Goal(tmp_path)
    a = goal.host("host-a")
    a.run("index")
    a.edit_authority()
    a.prepare(D)
    a.git("add", "docs")
    a.git("commit", "-q", "-m", "authority edited")
    a.git("switch", "-q", "--detach")
    detached = _head(a)
    refused = a.json("sync", ok=False)
    assert refused["error"]["code"] == "sync_detached_head", refused
    assert "git switch" in refused["error"]["hint"]
    assert _head(a) == detached  # nothing was committed on the detached HEAD
    assert any(p.startswith(f"{DC}/decisions/") for p in _uncommitted(a))
    a.git("switch", "-q", "main")  # following the hint keeps the decision in the work tree
    assert (a.dc / "decisions" / f"{D}.jsonl").exists()
    assert [d["decision_id"] for d in a.json("log")["data"]["decisions"]] == [D]
    synced = a.json("sync", "--push")["data"]
    assert synced["committed_public_changes"] is True and synced["pushed"] is True


def test_sync_without_an_upstream_commits_nothing(tmp_path: Path) -> None:
    """A branch with no upstream whose remote has it already is refused before the public half is committed."""
    goal = Goal(tmp_path)
    a = goal.host("host-a")
    a.run("index")
    a.git("branch", "--unset-upstream")
    a.prepare(D)
    head = _head(a)
    refused = a.json("sync", ok=False)
    assert (
        refused["error"]["code"] == "sync_pull_failed" and "upstream" in refused["error"]["message"]
    )
    assert _head(a) == head and any(p.startswith(f"{DC}/") for p in _uncommitted(a))


def _conflicting_hosts(tmp_path: Path):
    goal = Goal(tmp_path)
    a = goal.host("host-a")
    b = goal.host("host-b", agent="agent-b")
    a.run("index")
    b.edit_authority("stays above 400 ms", "stays above 250 ms")
    b.git("commit", "-q", "-am", "B's edit")
    b.git("push", "-q", "origin", "HEAD:main")
    a.edit_authority()
    a.git("commit", "-q", "-am", "A's edit")
    return a, b


def test_sync_in_an_unresolved_merge_says_merge_in_progress(tmp_path: Path) -> None:
    """An unresolved merge is `sync_merge_in_progress` (resolve or abort it), not `sync_dirty_worktree`,
    and nothing is committed into the half-done merge."""
    a, _ = _conflicting_hosts(tmp_path)
    assert a.git("pull", "-q", "--no-rebase", "--no-edit", ok=False).returncode != 0
    a.prepare(D)
    head = _head(a)
    refused = a.json("sync", ok=False)
    assert refused["error"]["code"] == "sync_merge_in_progress", refused
    assert "merge" in refused["error"]["hint"]
    assert _head(a) == head and (a.root / ".git" / "MERGE_HEAD").exists()


def test_sync_in_a_rebase_says_merge_in_progress(tmp_path: Path) -> None:
    """A rebase stopped on a conflict (HEAD detached inside it) is refused the same way, nothing committed."""
    a, _ = _conflicting_hosts(tmp_path)
    assert a.git("pull", "-q", "--rebase", ok=False).returncode != 0
    a.prepare(D)
    head = _head(a)
    refused = a.json("sync", ok=False)
    assert refused["error"]["code"] == "sync_merge_in_progress", refused
    assert "rebase" in refused["error"]["message"]
    assert _head(a) == head
