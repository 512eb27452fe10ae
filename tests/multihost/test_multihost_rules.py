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


def _wrote_back(host, decision_id: str = D, **env: str) -> dict:
    """prepare → propose → outcome → writeback on ``host`` (as its own agent, or the one in ``env``)."""
    kw = {"env": env} if env else {}
    host.json(
        "prepare",
        "--decision-id",
        decision_id,
        "--auto-rebase",
        "--query",
        "TTL rollback",
        "--query-summary",
        "TTL rollback criteria",
        **kw,
    )
    host.propose(decision_id, **kw)
    host.outcome(decision_id, **kw)
    return host.writeback(decision_id, **kw).json()["data"]["event"]


def test_an_agent_never_commits_another_agents_chain(tmp_path: Path) -> None:
    """Seen: agent C committed agent B's decision into C's cursors (exit 0), and B's own commit then printed
    `replayed (already committed) · advanced` while B's cursors never moved."""
    goal = Goal(tmp_path)
    h = goal.host("host-a", agent="agent-b")
    h.run("index")
    h.edit_authority()
    event = _wrote_back(h)
    as_c = {"DCX_AGENT_ID": "agent-c"}
    refused = h.commit(D, event["event_id"], ok=False, env=as_c).json()
    assert refused["error"]["code"] == "chain_of_other_agent", refused
    assert "agent-b" in refused["error"]["message"]
    assert "agent-c" not in h.cursor_files()
    done = h.commit(D, event["event_id"]).json()["data"]
    assert done["replayed"] is False and done["receipt"]["status"] == "committed"
    assert {r["result"] for r in done["receipt"]["sources"]} == {"advanced"}
    assert set(h.cursor_files()) == {"agent-b"}
    again = h.commit(D, event["event_id"], ok=False, env=as_c).json()
    assert again["error"]["code"] == "chain_of_other_agent"  # not "replayed" for C
    assert h.commit(D, event["event_id"]).json()["data"]["replayed"] is True
    assert "replayed" in h.run("commit", "--decision-id", D, "--event-id", event["event_id"]).stdout


def test_an_agent_never_reviews_another_agents_chain(tmp_path: Path) -> None:
    """review acts on the acting agent's own chain too: C settling B's gated proposal is refused."""
    goal = Goal(tmp_path)
    h = goal.host("host-a", agent="agent-b")
    h.run("index")
    h.edit_authority()
    h.prepare(D)
    h.propose(D)
    gate = h.json("gate", "--decision-id", D, "--approve", "--by", "dana", "--summary", "go")
    gate_id = gate["data"]["event"]["event_id"]
    refused = h.json(
        "review",
        "--decision-id",
        D,
        "--gate-event",
        gate_id,
        ok=False,
        env={"DCX_AGENT_ID": "agent-c"},
    )
    assert refused["error"]["code"] == "chain_of_other_agent", refused
    assert "agent-b" in refused["error"]["message"] and "agent-c" not in h.cursor_files()
    settled = h.json("review", "--decision-id", D, "--gate-event", gate_id)["data"]
    assert settled["replayed"] is False and settled["commit"]["status"] == "committed"


def test_a_receipt_pulled_from_another_host_is_not_replayed_here(tmp_path: Path) -> None:
    """Seen: after a sync, the same agent id on a second host ran A's commit: `replayed … advanced`, exit 0,
    while this host's cursors never moved (docs/git.md promised `pending_missing`)."""
    goal = Goal(tmp_path)
    a = goal.host("host-a", agent="agent-a")
    b = goal.host("host-b", agent="agent-a", now="2026-11-29T18:05:00Z")
    a.run("index")
    b.run("index")
    a.edit_authority()
    event = _wrote_back(a)
    a.share("A wrote back")
    b.pull()
    waiting = b.commit(D, event["event_id"], ok=False).json()
    assert waiting["error"]["code"] == "pending_missing", waiting
    receipt = a.commit(D, event["event_id"]).json()["data"]["receipt"]
    a.share("A committed")
    b.pull()
    refused = b.commit(D, event["event_id"], ok=False)
    assert refused.code == 1, refused
    error = refused.json()["error"]
    assert error["code"] == "committed_elsewhere", error
    assert receipt["receipt_ref"] in error["message"] and "agent-a" in error["message"]
    assert b.cursor_files() == {}
    other = goal.host("host-c", agent="agent-b")
    assert (
        other.commit(D, event["event_id"], ok=False).json()["error"]["code"]
        == "chain_of_other_agent"
    )
