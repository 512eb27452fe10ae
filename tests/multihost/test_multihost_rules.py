"""SPEC §16 v4 rules, each found broken by a multi-host try: a bare origin, clones, real git and dcx.

Every test here failed on the code before its rule was built (the state dcx
left behind was wrong while it answered "ok"). Oracles: git's own view of the
repository (``git rev-parse``, ``git log``, ``git status``) and the rule as
SPEC §16 states it.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.hosts import DC, Goal, git, parallel

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


def test_identical_inputs_on_two_hosts_make_two_chains(tmp_path: Path) -> None:
    """Seen: identical evidence on two hosts (same agent id, same tree, same clock) was one chain: B's outcome
    bound C's proposal, and C's commit was refused `already_committed` by a receipt that moved B's cursors."""
    goal = Goal(tmp_path)
    b = goal.host("host-b", agent="agent-a")
    c = goal.host("host-c", agent="agent-a")  # the same agent id and the same clock (DCX_NOW)
    parallel(lambda: b.run("index"), lambda: c.run("index"))
    b.edit_authority()
    c.edit_authority()
    asm_b, asm_c = parallel(lambda: b.prepare(D), lambda: c.prepare(D))
    assert asm_b["assembly_ref"] != asm_c["assembly_ref"]
    assert asm_b["evidence"]["packet_ref"] != asm_c["evidence"]["packet_ref"]
    assert asm_b["evidence"]["chain_nonce"] != asm_c["evidence"]["chain_nonce"]
    prop_c = c.propose(D).json()["data"]["proposal"]
    c.share("C proposed")
    b.pull()
    prop_b = b.propose(D).json()["data"]["proposal"]
    assert (
        prop_b["evidence_packet_ref"]
        == asm_b["evidence"]["packet_ref"]
        != prop_c["evidence_packet_ref"]
    )
    out_b = b.outcome(D).json()["data"]["outcome"]
    assert out_b["proposal_packet_ref"] == prop_b["packet_ref"]
    event_b = b.writeback(D).json()["data"]["event"]
    receipt_b = b.commit(D, event_b["event_id"]).json()["data"]["receipt"]
    assert receipt_b["assembly_ref"] == asm_b["assembly_ref"] and receipt_b["status"] == "committed"
    b.share("B committed")
    c.pull()
    chain_c = c.through_commit(D)
    assert chain_c["outcome"]["proposal_packet_ref"] == prop_c["packet_ref"]
    assert chain_c["receipt"]["assembly_ref"] == asm_c["assembly_ref"]
    assert chain_c["receipt"]["status"] == "committed"
    assert {r["result"] for r in chain_c["receipt"]["sources"]} == {"advanced"}


def test_an_unbacked_cursor_is_warned_everywhere_and_never_absorbed(tmp_path: Path) -> None:
    """Seen: after a force-push, `prepare` hid an unbacked cursor and suggested `review --no-change`;
    following it absorbed the dropped decision's change for good."""
    goal = Goal(tmp_path)
    a = goal.host("host-a")
    a.run("index")
    before = _head(a)
    a.edit_authority()
    a.prepare(D)
    a.through_commit(D)
    a.record("decided, authority edited")
    a.git("push", "-q", "origin", "HEAD:main")
    a.git("push", "-q", "--force", "origin", f"{before}:main")  # the decision is dropped upstream
    a.git("fetch", "-q", "origin")
    a.git("reset", "-q", "--hard", "origin/main")
    a.edit_authority()  # the tree is where the vanished receipt left the cursor: nothing "changed"
    source = "source:authority:docs"
    for args in (("scan",), ("status",)):
        warned = " ".join(a.json(*args)["warnings"])
        assert (
            "cursor_unbacked" in warned and source in warned and "dcx verify --repair" in warned
        ), args
    prepared = a.json("prepare", "--decision-id", D, "--auto-rebase")
    assert any("cursor_unbacked" in w for w in prepared["warnings"]), prepared["warnings"]
    text = a.run("prepare", "--decision-id", D, "--auto-rebase")
    assert "cursor_unbacked" in text.stderr + text.stdout and "--no-change" not in text.stdout
    refused = a.json("review", "--decision-id", D, "--no-change", ok=False)
    assert refused["error"]["code"] == "cursor_unbacked", refused
    assert refused["error"]["hint"].startswith("dcx verify --repair")
    a.propose(D)
    a.outcome(D)
    event = a.writeback(D).json()["data"]["event"]
    stuck = a.commit(D, event["event_id"], ok=False).json()
    assert stuck["error"]["code"] == "cursor_unbacked" and source in stuck["error"]["message"]
    assert not list((a.dc / "packets").glob("commit/*.json"))  # nothing absorbed the change
    a.run("verify", "--repair")
    again = a.prepare(D)  # the change the vanished receipt had absorbed is offered again
    assert any(r["disposition"] == "ready_after_writeback" for r in again["checkpoint"]["rows"])
    assert not a.json("status")["warnings"]
    assert a.through_commit(D)["receipt"]["status"] == "committed"


def test_init_in_a_pinned_clone_never_mints_a_key(tmp_path: Path) -> None:
    """Seen: `dcx init` in a clone whose workspace.toml pins the goal's key minted a new local key."""
    goal = Goal(tmp_path)
    c = goal.host("host-c", key=False)
    (c.dc / "profile.toml").unlink()  # what init would create on a fresh clone
    refused = c.run("init", "--format", "json", ok=False)
    assert refused.code == 3 and refused.json()["error"]["code"] == "key_missing", refused
    assert "dcx key import" in refused.json()["error"]["hint"]
    assert not (c.dc / "private" / "key").exists() and not (c.dc / "profile.toml").exists()
    c.run("key", "import", str(goal.keyfile))
    created = c.json("init")["data"]["created"]
    assert f"{DC}/profile.toml" in created and not any(p.endswith("key") for p in created)
    assert c.json("status")["data"]["key"]["matches"] is True


def _pin(text: str) -> str:
    import tomllib

    return tomllib.loads(text)["key_id"]


def _origin_pin(goal: Goal) -> str:
    """The key id the bare origin's main pins (git itself reads it; tomllib parses it)."""
    return _pin(git(goal.origin, "show", f"main:{DC}/workspace.toml").stdout)


def test_a_changed_key_pin_is_never_spread_silently(tmp_path: Path) -> None:
    """Seen: `key import --force` rewrote the pin and the next `sync --push` spread it silently."""
    goal = Goal(tmp_path)
    a = goal.host("host-a")
    b = goal.host("host-b", agent="agent-b")
    a.run("index")
    other = tmp_path / "other.key"
    other.write_text((bytes(range(1, 33))).hex())
    a.run("key", "import", "--force", str(other))
    pinned = (a.dc / "workspace.toml").read_text()
    head = _head(a)
    refused = a.json("sync", "--push", ok=False)
    assert refused["error"]["code"] == "sync_key_changed", refused
    assert "--accept-key-change" in refused["error"]["hint"]
    assert _head(a) == head and f"{DC}/workspace.toml" in _uncommitted(a)
    a.git("commit", "-q", "-m", "a new key", "--", f"{DC}/workspace.toml")  # by hand, not pushed
    head = _head(a)
    refused = a.json("sync", "--push", ok=False)  # the branch pins what its upstream never did
    assert refused["error"]["code"] == "sync_key_changed", refused
    assert _head(a) == head and _origin_pin(goal) != _pin(pinned)
    pushed = a.json("sync", "--push", "--accept-key-change")["data"]
    assert pushed["pushed"] is True and (a.dc / "workspace.toml").read_text() == pinned
    assert _origin_pin(goal) == _pin(pinned)
    synced = b.json("sync")  # B takes in the new pin; its own key is the old one: said at once
    assert any(w.startswith("key_mismatch") for w in synced["warnings"]), synced
    assert b.json("sync")["data"]["pulled"] is False  # B's unchanged pin is no change of B's
    status = b.json("status")
    assert status["data"]["key"]["matches"] is False
    warned = " ".join(status["warnings"])
    assert "key_mismatch" in warned and status["data"]["key"]["pinned_key_id"] in warned
    # and B mints no ref with its old key (SPEC §3.5 v4): prepare is refused, nothing written
    before = sorted(p.relative_to(b.dc) for p in b.dc.rglob("*"))
    refused = b.json("prepare", "--decision-id", D, "--auto-rebase", ok=False)
    assert refused["error"]["code"] == "key_mismatch", refused
    assert sorted(p.relative_to(b.dc) for p in b.dc.rglob("*")) == before


def test_status_text_prints_its_warnings(tmp_path: Path) -> None:
    """`dcx status` (its fast path) prints the key and cursor warnings in text too, on stderr."""
    goal = Goal(tmp_path)
    c = goal.host("host-c", key=False)
    text = c.run("status")
    assert "warning: key_missing" in text.stderr and "dcx key import" in text.stderr


def _observed_outcome(host, **extra: object) -> Path:
    import json

    body = json.loads((host.root / "outcome.json").read_text())
    body["observed_outcomes"] = [
        {
            "outcome_id": "p99-held",
            "summary": "Origin p99 stayed under 400 ms",
            "evidence_ref": "dashboard-origin-p99",
            "status": "pending",
            "observed_at": "2026-12-01T18:00:00Z",
        }
    ]
    body.update(extra)
    path = host.root / "observed.json"
    path.write_text(json.dumps(body))
    return path


def _settle(host, decision_id: str, verdict: str) -> dict:
    """prepare → propose → a person's gate → review (the caller made the change): the proposal."""
    host.json("prepare", "--decision-id", decision_id, "--auto-rebase")
    prop = host.propose(decision_id).json()["data"]["proposal"]
    gate = host.json(
        "gate", "--decision-id", decision_id, verdict, "--by", "dana", "--summary", "ok"
    )
    host.json(
        "review", "--decision-id", decision_id, "--gate-event", gate["data"]["event"]["event_id"]
    )
    return prop


def test_a_settlement_never_vanishes_behind_a_later_chain(tmp_path: Path) -> None:
    """Seen: after an approve and a later quiet `review --no-change` of the same decision id, `status` said
    "outcome due" forever and `dcx outcome` refused "decision has no proposal", even with the approved
    proposal named; `report` counted only the quiet review."""
    goal = Goal(tmp_path)
    a = goal.host("host-a")
    a.run("index")
    a.edit_authority()
    approved = _settle(a, D, "--approve")
    a.json("prepare", "--decision-id", D, "--auto-rebase")  # nothing changed since: a quiet chain
    quiet = a.run("review", "--decision-id", D, "--no-change").stdout
    assert "committed · nothing to advance" in quiet and "replayed" not in quiet, quiet
    row = next(
        r for r in a.json("status")["data"]["workspace"]["decisions"] if r["decision_id"] == D
    )
    assert row["outcome_due"] is True and row["next_step"] == "outcome", row
    named = a.run(
        "outcome",
        "--decision-id",
        D,
        "--from",
        str(_observed_outcome(a, proposal_packet_ref=approved["packet_ref"])),
        "--format",
        "json",
    ).json()["data"]["outcome"]
    assert named["proposal_packet_ref"] == approved["packet_ref"]
    row = next(
        r for r in a.json("status")["data"]["workspace"]["decisions"] if r["decision_id"] == D
    )
    assert row["outcome_due"] is False and row["next_step"] != "outcome", row
    # unnamed: the newest chain that has a proposal, with a warning naming it
    unnamed = a.run(
        "outcome", "--decision-id", D, "--from", str(_observed_outcome(a)), "--format", "json"
    ).json()
    assert unnamed["data"]["outcome"]["proposal_packet_ref"] == approved["packet_ref"]
    assert any(approved["packet_ref"] in w for w in unnamed["warnings"]), unnamed["warnings"]

    # the legacy chain on a no-change assembly: its first commit is no replay either
    a.json("prepare", "--decision-id", "quiet-legacy", "--auto-rebase")
    a.propose("quiet-legacy")
    a.outcome("quiet-legacy")
    event = a.writeback("quiet-legacy").json()["data"]["event"]
    first = a.run("commit", "--decision-id", "quiet-legacy", "--event-id", event["event_id"]).stdout
    assert "committed · nothing to advance" in first and "replayed" not in first, first
    again = a.run("commit", "--decision-id", "quiet-legacy", "--event-id", event["event_id"]).stdout
    assert "replayed (already committed)" in again

    rejected = "purge-retry"
    a.edit_authority("stays above", "stays at or above")
    _settle(a, rejected, "--reject")
    a.json("prepare", "--decision-id", rejected, "--auto-rebase")
    a.json("review", "--decision-id", rejected, "--no-change")
    reviews = a.json("report")["data"]["totals"]["reviews"]
    assert reviews["by_disposition"] == {"approve": 1, "reject": 1, "defer": 0, "no_change": 2}, (
        reviews
    )
    assert reviews["receipts"] == 4 and reviews["outcome_due"] == 0


def test_gc_removes_companions_no_commit_can_use_and_sync_lists_only_live_ones(
    tmp_path: Path,
) -> None:
    """Pending companions of previews, of assemblies with no ready row, and of abandoned decisions are
    listed by `gc --dry-run` and removed by `gc`; `sync` lists only the live ones as pending here."""
    goal = Goal(tmp_path)
    a = goal.host("host-a")
    a.run("index")
    a.edit_authority()
    a.git("commit", "-q", "-am", "authority edited")
    preview = a.json("prepare", "--decision-id", "a-preview")["data"]["assembly"]
    live = a.prepare(D)
    abandoned = a.prepare("given-up")
    a.run("abandon", "--decision-id", "given-up", "--summary", "not needed")
    registry = a.dc / "sources.toml"
    policy = registry.read_text()
    registry.write_text(
        policy.replace('exact_read_policy = "always"', 'exact_read_policy = "never"')
    )
    stuck = a.prepare("never-read")  # the changed source is preserved: no ready row
    assert not any(r["disposition"] == "ready_after_writeback" for r in stuck["checkpoint"]["rows"])
    registry.write_text(policy)
    listed = a.json("gc", "--dry-run")["data"]["removed"]["pending"]
    reasons = {row["path"].rsplit("/", 1)[-1][: -len(".json")]: row["reason"] for row in listed}
    assert reasons == {
        preview["assembly_ref"]: "preview",
        abandoned["assembly_ref"]: "abandoned",
        stuck["assembly_ref"]: "nothing_to_commit",
    }, listed
    synced = a.json("sync")["data"]["pending_here"]
    assert synced == [{"decision_id": D, "assembly_ref": live["assembly_ref"]}]
    a.run("gc")
    left = sorted(p.stem for p in (a.dc / "private" / "pending").glob("*.json"))
    assert left == [live["assembly_ref"]]


def test_prepare_mid_merge_warns_of_conflict_markers_in_authority(tmp_path: Path) -> None:
    """A pull that stops on a conflict leaves markers in an authority document: prepare reads it as
    changed authority, so it warns `authority_conflicted` (never silently takes the markers as truth)."""
    a, _ = _conflicting_hosts(tmp_path)
    assert a.git("pull", "-q", "--no-rebase", "--no-edit", ok=False).returncode != 0
    assert "<<<<<<<" in (a.root / "docs" / "runbook-ttl-rollback.md").read_text()
    prepared = a.json("prepare", "--decision-id", D, "--auto-rebase")
    warned = [w for w in prepared["warnings"] if w.startswith("authority_conflicted")]
    assert len(warned) == 1 and "source:authority:docs" in warned[0], prepared["warnings"]
    a.git("merge", "--abort")
    a.edit_authority("stays above 350 ms", "stays above 300 ms")  # a change without markers
    clean = a.json("prepare", "--decision-id", D, "--auto-rebase")
    assert not [w for w in clean["warnings"] if w.startswith("authority_conflicted")]
