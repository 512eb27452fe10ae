"""Issue 21, "What was seen": each failure seen with a bare origin and several hosts, as a test.

Real git, real ``dcx`` processes (tests/support/hosts.py), a fixed clock
per host. Each test names the seen case it covers.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path

from tests.support.hosts import DC, Goal, parallel

D = "ttl-2026-12"
REGISTRY_EXTRA = """
[[sources]]
source_id = "source:notes"
provider_id = "files"
source_kind = "document"
priority = "p2"
evidence_level = "s3"
objectives = ["origin-latency"]
scan_mode = "incremental"
exact_read_policy = "always"
freshness_seconds = 86400
enabled = false
locator = { path = "docs", include = ["notes/*.md"] }
conflict_rule = "canonical_revision_wins"
"""
T_A = "2026-11-29T18:00:00Z"
T_B = "2026-11-29T18:05:00Z"


def _two_hosts(tmp_path: Path, *, now_b: str = T_B, agent_b: str = "agent-b"):
    goal = Goal(tmp_path)
    a = goal.host("host-a", agent="agent-a", now=T_A)
    b = goal.host("host-b", agent=agent_b, now=now_b)
    parallel(lambda: a.run("index"), lambda: b.run("index"))
    return goal, a, b


def _refs(index: Path) -> list[dict]:
    return [json.loads(line) for line in index.read_text().splitlines() if line.strip()]


def test_pull_between_prepare_and_propose_binds_own_chain(tmp_path: Path) -> None:
    """Seen: a pulled newer evidence from another host became "latest"; A's propose bound B's evidence,
    A's commit failed pending_missing, B committed on A's proposal, A's feedback took B's outcome."""
    _, a, b = _two_hosts(tmp_path)
    a.edit_authority()
    b.edit_authority()
    asm_a, asm_b = parallel(lambda: a.prepare(D), lambda: b.prepare(D))
    assert asm_a["evidence"]["packet_ref"] != asm_b["evidence"]["packet_ref"]
    b.share("B prepared")
    a.pull()  # B's later evidence arrives between A's prepare and A's propose

    proposed = a.propose(D)
    prop_a = proposed.json()["data"]["proposal"]
    assert prop_a["evidence_packet_ref"] == asm_a["evidence"]["packet_ref"]
    warned = " ".join(proposed.json()["warnings"])
    assert "agent-b" in warned and "newer" in warned and asm_b["evidence"]["packet_ref"] in warned
    out_a = a.outcome(D).json()["data"]["outcome"]
    assert out_a["proposal_packet_ref"] == prop_a["packet_ref"]
    event = a.writeback(D).json()["data"]["event"]
    assert set(event["artifact_refs"]) == {
        asm_a["evidence"]["packet_ref"],
        prop_a["packet_ref"],
        out_a["packet_ref"],
    }
    receipt = a.commit(D, event["event_id"]).json()["data"]["receipt"]
    assert receipt["assembly_ref"] == asm_a["assembly_ref"]
    fb = a.json("feedback", "--decision-id", D)["data"]["feedback"]
    assert fb["outcome_packet_ref"] == out_a["packet_ref"]
    a.share("A decided")

    # B, after pulling A's whole chain, still works on its own
    b.pull()
    chain_b = b.through_commit(D)
    assert chain_b["proposal"]["evidence_packet_ref"] == asm_b["evidence"]["packet_ref"]
    assert chain_b["receipt"]["assembly_ref"] == asm_b["assembly_ref"]


def test_clock_skew_does_not_move_the_binding(tmp_path: Path) -> None:
    """Seen: clock skew does the same — B's clock runs ahead, so its later-stamped evidence wins by time."""
    _, a, b = _two_hosts(tmp_path, now_b="2026-11-30T09:00:00Z")
    a.edit_authority()
    asm_a = a.prepare(D)
    b.edit_authority()
    b.prepare(D)
    b.share("B prepared (clock ahead)")
    a.pull()
    chain_a = a.through_commit(D)
    assert chain_a["proposal"]["evidence_packet_ref"] == asm_a["evidence"]["packet_ref"]
    assert chain_a["receipt"]["assembly_ref"] == asm_a["assembly_ref"]


def test_identical_evidence_on_two_hosts_commits_by_local_companion(tmp_path: Path) -> None:
    """Seen: identical evidence prepared on two hosts (freshness differs) made the second commit chain_ambiguous."""
    _, a, b = _two_hosts(
        tmp_path, now_b=T_A, agent_b="agent-a"
    )  # the same agent id, the same clock
    # B's registry also lists a disabled source: its assembly (manifest) differs, its evidence does not
    with (b.dc / "sources.toml").open("a") as registry:
        registry.write(REGISTRY_EXTRA)
    a.edit_authority()
    b.edit_authority()
    # one chain nonce on both (DCX_CHAIN_NONCE, as in a demo): without it the two evidence packets differ
    same = {"DCX_CHAIN_NONCE": "ab" * 16}
    asm_a, asm_b = (
        h.json("prepare", "--decision-id", D, "--auto-rebase", env=same)["data"]["assembly"]
        for h in (a, b)
    )
    assert asm_a["evidence"]["packet_ref"] == asm_b["evidence"]["packet_ref"]
    assert asm_a["assembly_ref"] != asm_b["assembly_ref"]
    a.share("A prepared")
    b.pull()  # both assemblies of the one evidence are now in B's index
    chain_b = b.through_commit(D)
    assert (
        chain_b["receipt"]["assembly_ref"] == asm_b["assembly_ref"]
    )  # the one whose companion is here
    assert not (b.dc / "private" / "pending" / f"{asm_b['assembly_ref']}.json").exists()


def test_clone_before_any_packet_never_mints_its_own_key(tmp_path: Path) -> None:
    """Seen: a clone taken before any packet existed minted its own key on `dcx index`; `key import` then
    failed key_exists; status still said available while refs stopped being comparable."""
    goal = Goal(tmp_path)
    pinned = (goal.origin.parent / "seed" / DC / "workspace.toml").read_text()
    assert "key_id" in pinned
    c = goal.host("host-c", key=False)
    refused = c.run("index", ok=False)
    assert refused.code == 3 and "dcx key import" in refused.stderr
    assert (
        c.json("prepare", "--decision-id", D, "--auto-rebase", ok=False)["error"]["code"]
        == "key_missing"
    )
    status = c.json("status")["data"]
    assert status["key"] == {"pinned_key_id": "37c1f690", "local_key_id": None, "matches": False}
    assert "dcx key import" in c.run("status").stdout
    assert not (c.dc / "private" / "key").exists()
    c.run("key", "import", str(goal.keyfile))
    c.run("index")
    status = c.json("status")["data"]
    assert status["key"]["pinned_key_id"] == status["key"]["local_key_id"]


def test_force_push_leaves_cursor_unbacked_and_repair_rewinds_it(tmp_path: Path) -> None:
    """Seen: a force-push plus reset dropped a committed decision; verify said clean while the private
    cursor stayed advanced by a receipt that no longer exists."""
    goal = Goal(tmp_path)
    a = goal.host("host-a")
    a.run("index")
    before = a.git("rev-parse", "HEAD").stdout.strip()
    a.edit_authority()
    a.prepare(D)
    dropped = a.through_commit(D)["receipt"]["sources"][0]["cursor_after_ref"]
    a.git("add", "-A")
    a.git("commit", "-q", "-m", "decided, authority edited")
    a.git("push", "-q", "origin", "HEAD:main")
    # someone force-pushes the old history back; A resets onto it (keeps its private half)
    a.git("push", "-q", "--force", "origin", f"{before}:main")
    a.git("fetch", "-q", "origin")
    a.git("reset", "-q", "--hard", "origin/main")
    a.edit_authority()
    verified = a.json("verify")
    assert verified["data"]["unbacked_cursors"] == [
        {"code": "cursor_unbacked", "agent_id": "agent-a", "source_id": "source:authority:docs"}
    ]
    assert any(w.startswith("cursor_unbacked") for w in verified["warnings"])
    text = a.run("verify", "--repair").stdout  # the repair says what it rewound: source, from, to
    assert (
        f"rewound the cursor of source:authority:docs (agent-a) from {dropped} to none" in text
    ), text
    assert a.json("verify", "--repair")["data"]["rewound_cursors"] == []  # nothing left to rewind
    assert a.json("verify")["data"]["unbacked_cursors"] == []
    again = a.prepare(D)  # re-reads the change the vanished receipt had absorbed, and commits it
    assert any(r["disposition"] == "ready_after_writeback" for r in again["checkpoint"]["rows"])
    assert a.through_commit(D)["receipt"]["status"] == "committed"


def test_two_agents_on_one_host_keep_their_own_cursors(tmp_path: Path) -> None:
    """Seen: two agents on one host shared one cursor file: one agent's commit made the other's scan no_change."""
    goal = Goal(tmp_path)
    a = goal.host("host-a")
    a.run("index")
    a.edit_authority()
    a.prepare(D)
    a.through_commit(D)
    mine = a.json("scan")["data"]
    theirs = a.json("scan", env={"DCX_AGENT_ID": "agent-b"})["data"]
    assert all(r["status"] == "no_change" for r in mine["receipts"]), mine
    assert any(r["status"] != "no_change" for r in theirs["receipts"]), theirs
    assert set(a.cursor_files()) == {"agent-a"}


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_private_state_on_a_fresh_clone_is_owner_only(tmp_path: Path) -> None:
    """Seen: private/ was created 0755 by key import and index on a clone (0700 by init); refs.sqlite 0644."""
    goal = Goal(tmp_path)
    c = goal.host("host-c")  # key import creates private/
    private = c.dc / "private"
    assert _mode(private) == 0o700 and _mode(private / "key") == 0o600
    d = goal.host("host-d", key=False)
    d.run("status")
    d.run("key", "import", str(goal.keyfile))
    d.run("index")
    d.edit_authority()
    d.prepare(D)
    for path in [private, *private.rglob("*"), d.dc / "private", *(d.dc / "private").rglob("*")]:
        want = 0o700 if path.is_dir() else 0o600
        assert _mode(path) == want, (path, oct(_mode(path)))


def test_union_merged_logs_read_by_time_and_duplicates_count_once(tmp_path: Path) -> None:
    """Seen: status took the last line of a union-merged index (file order), log the newest by time; verify
    counted a duplicated event line twice; "next: dcx commit" was suggested on a host that cannot commit."""
    _, a, b = _two_hosts(
        tmp_path, now_b="2026-11-29T17:00:00Z"
    )  # B's lines are older, merged after A's
    a.edit_authority()
    a.prepare(D)
    a.through_commit(D)
    a.share("A decided")
    b.edit_authority()
    b.prepare(D)
    b.propose(D)
    b.outcome(D)
    b.writeback(D)
    b.share("B wrote back")
    a.pull()
    index = a.dc / "decisions" / f"{D}.jsonl"
    lines = _refs(index)
    # a union merge may interleave the two hosts' lines in any order: put the newest first
    index.write_text(
        "".join(
            json.dumps(line, sort_keys=True) + "\n"
            for line in sorted(lines, key=lambda e: e["observed_at"], reverse=True)
        )
    )
    lines = _refs(index)
    assert lines[-1]["observed_at"] < max(
        line["observed_at"] for line in lines
    )  # file order is not time
    status = a.json("status")["data"]
    log = a.json("log", "--decision-id", D)["data"]
    row = next(r for r in status["workspace"]["decisions"] if r["decision_id"] == D)
    assert row["last_observed_at"] == max(line["observed_at"] for line in lines)
    assert row["last_observed_at"] == log["decisions"][0]["last_observed_at"]

    # a duplicated event line (the same bytes merged in twice) counts once
    events = a.dc / "events.jsonl"
    first = events.read_text().splitlines()[0]
    events.write_text(events.read_text() + first + "\n")
    verified = a.json("verify")["data"]
    assert verified["events_checked"] == len(set(events.read_text().splitlines()))

    # B's writeback waits for a commit only B's host can make: A is not told to commit it
    text = a.run("status").stdout
    assert "dcx commit" not in text


def test_next_commit_is_not_suggested_on_a_host_that_cannot_commit(tmp_path: Path) -> None:
    """Seen: "next: dcx commit" was suggested on a host that cannot commit (no pending companion there)."""
    _, a, b = _two_hosts(tmp_path)
    b.edit_authority()
    b.prepare(D)
    b.propose(D)
    b.outcome(D)
    b.writeback(D)
    b.share("B wrote back")
    a.pull()
    row = next(
        r for r in a.json("status")["data"]["workspace"]["decisions"] if r["decision_id"] == D
    )
    assert row["next_step"] is None and row["commit_elsewhere"] is True
    assert "dcx commit" not in a.run("status").stdout
    log = a.json("log", "--decision-id", D)["data"]["decisions"][0]
    assert log["next_step"] is None and "host that prepared it" in log["next_hint"]
    assert "next: dcx commit" not in a.run("log", "--decision-id", D).stdout
    # B, which holds the companion, is still told to commit
    row_b = next(
        r for r in b.json("status")["data"]["workspace"]["decisions"] if r["decision_id"] == D
    )
    assert row_b["next_step"] == "commit"


def test_log_shows_who_did_what_and_keeps_two_agents_chains_apart(tmp_path: Path) -> None:
    """SPEC §16: `log` (text and JSON) names each packet's agent and lists two agents' chains apart."""
    _, a, b = _two_hosts(tmp_path)
    a.edit_authority()
    b.edit_authority()
    asm_a, asm_b = parallel(lambda: a.prepare(D), lambda: b.prepare(D))
    b.propose(D)
    a.propose(D)
    b.share("B proposed")
    a.pull()
    chain = a.json("log", "--decision-id", D)["data"]["decisions"][0]["chain"]
    keys = [row["chain_evidence_ref"] for row in chain]
    ev_a, ev_b = asm_a["evidence"]["packet_ref"], asm_b["evidence"]["packet_ref"]
    assert set(keys) == {ev_a, ev_b}
    first = keys.index(keys[-1])
    assert all(k == keys[0] for k in keys[:first]) and all(
        k == keys[-1] for k in keys[first:]
    )  # apart
    for row in chain:
        assert row["agent_id"] == ("agent-a" if row["chain_evidence_ref"] == ev_a else "agent-b"), (
            row
        )
    text = a.run("log", "--decision-id", D).stdout
    assert "by agent-a" in text and "by agent-b" in text and text.count("chain of evidence") == 2
    # each chain's label is a prefix `dcx show` resolves to that chain's evidence
    labels = [
        line.split("chain of evidence ")[1].split()[0]
        for line in text.splitlines()
        if "chain of evidence" in line
    ]
    shown = {a.json("show", label)["packet_ref"] for label in labels}
    assert shown == {ev_a, ev_b}


def test_repair_rewinds_to_the_newest_cursor_a_receipt_still_backs(tmp_path: Path) -> None:
    """Two committed decisions; a force-push drops the second: the cursor goes back to the first's, not to none."""
    goal = Goal(tmp_path)
    a = goal.host("host-a")
    a.run("index")
    a.edit_authority()
    a.prepare("first")
    first = a.through_commit("first")["receipt"]
    a.record("first decided")
    a.git("push", "-q", "origin", "HEAD:main")
    kept = a.git("rev-parse", "HEAD").stdout.strip()
    first_cursor = a.cursor_files()["agent-a"]
    a.edit_authority("stays above 350 ms", "stays above 300 ms")
    a.prepare("second")
    second = a.through_commit("second")["receipt"]
    a.record("second decided")
    a.git("push", "-q", "origin", "HEAD:main")
    a.git(
        "push", "-q", "--force", "origin", f"{kept}:main"
    )  # the second decision is dropped upstream
    a.git("fetch", "-q", "origin")
    a.git("reset", "-q", "--hard", "origin/main")
    a.edit_authority()
    a.edit_authority("stays above 350 ms", "stays above 300 ms")
    assert [r["source_id"] for r in a.json("verify")["data"]["unbacked_cursors"]] == [
        "source:authority:docs"
    ]
    cursor_file = a.dc / "private" / "cursors" / "agent-a.json"
    unbacked = cursor_file.read_bytes()
    text = a.run(
        "verify", "--repair"
    ).stdout  # says source, agent, from, to and the backing receipt
    assert (
        f"rewound the cursor of source:authority:docs (agent-a) from "
        f"{second['sources'][0]['cursor_after_ref']} to {first['sources'][0]['cursor_after_ref']} "
        f"(the cursor after receipt {first['receipt_ref']})"
    ) in text, text
    cursor_file.write_bytes(unbacked)  # back to the unbacked state, for the JSON run
    rewound = a.json("verify", "--repair")["data"]["rewound_cursors"]
    assert rewound == [
        {
            "agent_id": "agent-a",
            "source_id": "source:authority:docs",
            "rewound_to": "backed_cursor",
            "from_cursor_ref": second["sources"][0]["cursor_after_ref"],
            "to_cursor_ref": first["sources"][0]["cursor_after_ref"],
            "backed_by": first["receipt_ref"],
        }
    ]
    assert a.cursor_files()["agent-a"] == first_cursor
    again = a.prepare("second")  # only what the dropped receipt had absorbed is offered again
    assert again["scan_receipts"][0]["changed_count"] == 1
    assert a.through_commit("second")["receipt"]["status"] == "committed"
