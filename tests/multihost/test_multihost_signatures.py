"""Three hosts, three agents, one bare origin: every host verifies every other host's signatures (SPEC §18).

Real git, real `dcx` processes (tests.support.hosts). Each host's agent key is
made on that host and never leaves it; its public half travels through the
origin with `dcx sync`. Oracle: after the last sync every statement in each
clone is checked here with the library's own Ed25519 verify over
``rfc8785`` bytes, against the signer file of the statement's agent, and each
signer file against the public key the library derives from the private seed
on the host that holds it.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.support import signing as oracle
from tests.support.hosts import Goal

HOSTS = (("host-a", "agent-a", "2026-11-29T18:00:00Z"),
         ("host-b", "agent-b", "2026-11-29T18:05:00Z"),
         ("host-c", "agent-c", "2026-11-29T18:10:00Z"))  # fmt: skip


def _decide(host, decision_id: str) -> None:
    host.run("index")
    host.prepare(decision_id)
    host.through_commit(decision_id)


def test_every_host_verifies_every_other_hosts_signatures_after_sync(tmp_path: Path) -> None:
    goal = Goal(tmp_path)
    hosts = [goal.host(name, agent=agent, now=now) for name, agent, now in HOSTS]
    for host in hosts:
        _decide(host, f"ttl-{host.agent}")
        assert host.json("sync", "--push")["data"]["pushed"] is True
    for host in hosts[:2]:
        host.json("sync")  # the earlier hosts take in what the later ones pushed

    seeds = {h.agent: (h.dc / "private" / "signing" / f"{h.agent}.key").read_bytes() for h in hosts}
    assert len(set(seeds.values())) == 3  # each host made its own key
    for host in hosts:
        verified = host.json("verify", "--require-signatures")["data"]
        assert verified["problems"] == [], (host.name, verified["problems"])
        sig = verified["signatures"]
        assert sig["signers"] == 3 and sig["unsigned"] == sig["failed"] == 0
        by_agent = {i["signer_agent_id"] for i in sig["items"]}
        assert by_agent == {"agent-a", "agent-b", "agent-c"}
        # the oracle, on this clone's files
        keys = oracle.signers(host.root)
        assert {folder for folder, _ in keys.values()} == set(seeds)
        for folder, doc in keys.values():
            assert oracle.unb64(doc["public_key"]) == oracle.public_of(seeds[folder])
            assert oracle.verifies(oracle.public_of(seeds[folder]), doc)
        lines = oracle.statements(host.root)
        assert {st["agent_id"] for st in lines} == set(seeds)
        for st in lines:
            _, doc = keys[st["key_id"]]
            assert doc["agent_id"] == st["agent_id"]
            assert oracle.verifies(oracle.unb64(doc["public_key"]), st)
        assert "✗" not in host.run("log").stdout and host.run("log").stdout.count("✓") > 6
    # the private halves never travelled
    tracked = hosts[0].git("ls-tree", "-r", "--name-only", "HEAD").stdout.split()
    assert not any("private/" in name for name in tracked)
    assert {n for n in tracked if "/signers/" in n} == {
        f".decision-context/signers/{folder}/{key}.pub"
        for key, (folder, _) in oracle.signers(hosts[0].root).items()
    }


def test_a_second_host_of_one_agent_is_a_new_visible_signer_file(tmp_path: Path) -> None:
    goal = Goal(tmp_path)
    first = goal.host("host-a", agent="agent-a")
    second = goal.host("host-a2", agent="agent-a", now="2026-11-29T18:05:00Z")
    _decide(first, "ttl-first")
    first.json("sync", "--push")
    before = second.git("rev-parse", "HEAD").stdout.strip()
    second.json("sync")
    _decide(second, "ttl-second")
    second.json("sync", "--push")
    added = second.git(
        "diff",
        "--name-status",
        "--diff-filter=A",
        before,
        "HEAD",
        "--",
        ".decision-context/signers",
    ).stdout.split("\n")
    new_files = sorted(line.split("\t")[1] for line in added if line)
    assert len(new_files) == 2  # the first host's key (pulled) and this host's own
    assert all(name.startswith(".decision-context/signers/agent-a/") for name in new_files)
    first.json("sync")
    verified = first.json("verify", "--require-signatures")["data"]
    assert verified["problems"] == [] and verified["signatures"]["signers"] == 2
    keys = {i["key_id"] for i in verified["signatures"]["items"]}
    assert len(keys) == 2  # agent-a's work, signed by each host's own key


def test_a_key_swapped_on_one_host_never_reaches_the_others(tmp_path: Path) -> None:
    goal = Goal(tmp_path)
    a = goal.host("host-a", agent="agent-a")
    b = goal.host("host-b", agent="agent-b", now="2026-11-29T18:05:00Z")
    _decide(a, "ttl-a")
    a.json("sync", "--push")
    b.json("sync")
    # on host b, someone puts their own key in agent-a's signer file and signs a forged event
    (pub,) = (b.dc / "signers" / "agent-a").glob("*.pub")
    attacker = bytes(range(100, 132))
    doc = json.loads(pub.read_text())
    pub.write_bytes(
        oracle.pretty(
            oracle.signed(attacker, {**doc, "public_key": oracle.b64(oracle.public_of(attacker))})
        )
    )
    head = subprocess.run(
        ["git", "ls-remote", str(goal.origin), "refs/heads/main"], capture_output=True, text=True
    ).stdout.split()[0]
    refused = b.json("sync", "--push", ok=False)
    assert refused["error"]["code"] == "sync_verify_failed"
    assert (
        subprocess.run(
            ["git", "ls-remote", str(goal.origin), "refs/heads/main"],
            capture_output=True,
            text=True,
        ).stdout.split()[0]
        == head
    )
    verified = b.json("verify", ok=False)["data"]
    assert any("signer_invalid" in p["problem"] for p in verified["problems"])
    assert a.json("verify", "--require-signatures")["data"]["problems"] == []
