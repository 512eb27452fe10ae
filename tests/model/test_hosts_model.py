"""A model-based test of several hosts of one goal (SPEC §16): hypothesis drives git and dcx steps.

Two clones (three under ``make deep-test``) of one bare origin, each with two
agents (``agent-a``, ``agent-b``), every host on the same fixed clock and no
fixed chain nonce (each host draws its own, as in real use). Steps: an edit of
authority (committed), ``prepare``, the rest of an agent's cycle through
``commit``, ``dcx sync``, ``dcx sync --push``, ``git pull --rebase``, a force-push
that drops origin's last commit (the pushing host resets onto it), a detached
HEAD, ``dcx verify --repair``. dcx runs in-process (``tests.support.cli.invoker``)
with each host's own HOME, clock and agent; git runs as a real process.

The model is written from SPEC §3.3 and §16, never from dcx's code. Invariants
after every step:

- ``no_packet_lost``: every packet file any host held is still in some host's
  work tree or in origin — except what a user's own ``reset --hard`` discarded
  while no other copy existed (the model takes those out when it resets);
- ``cursor_backed_or_named``: each agent's every cursor is named (as a keyed
  ``source-cursor`` ref, recomputed here from the key per §3.3) by a commit
  receipt in that host's work tree, or ``dcx verify`` lists it as
  ``cursor_unbacked`` — and verify lists no cursor a receipt backs;
- ``own_chain``: a proposal, outcome and commit bind the acting agent's own
  chain on this host, or the command's warnings name the other chain's agent;
- ``verify_clean_or_named``: ``dcx verify`` exits 0, or 1 with its problems
  listed; no command exits 5.

CI walks the steps at random from one fixed seed (``DCX_HOSTS_WALKS`` walks of
``DCX_HOSTS_STEPS`` steps, ``DCX_HOSTS_SEED``), plus one fixed story; with
``DCX_HYPOTHESIS_PROFILE=deep`` hypothesis drives the machine instead, with
three hosts, more and longer (``DCX_HOSTS_EXAMPLES``).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import rfc8785
from blake3 import blake3
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from tests.support.cli import invoker
from tests.support.hosts import DC, Goal, Host, git

DEEP = os.environ.get("DCX_HYPOTHESIS_PROFILE") == "deep"
EXAMPLES = int(os.environ.get("DCX_HOSTS_EXAMPLES", 20))  # hypothesis examples (deep)
WALKS = int(os.environ.get("DCX_HOSTS_WALKS", 2))  # seeded walks (CI)
STEPS = int(os.environ.get("DCX_HOSTS_STEPS", 30 if DEEP else 12))
SEED = int(
    os.environ.get("DCX_HOSTS_SEED", 2)
)  # CI: the walks' seed (commits, syncs, a force-push, rebases)
HOSTS = 3 if DEEP else 2
AGENTS = ("agent-a", "agent-b")
D = "ttl-2026-12"
OWN_CHAIN_REFUSALS = {"cursor_moved", "cursor_unbacked", "nothing_to_commit"}

CLI = None
COUNTS: Counter[str] = Counter()


def cursor_ref(key: bytes, source_id: str, cursor: str) -> str:
    """SPEC §3.3: ``source-cursor-`` + the first 32 hex of blake3(key, JCS([source_id, cursor]))."""
    return "source-cursor-" + blake3(rfc8785.dumps([source_id, cursor]), key=key).hexdigest()[:32]


class HostsMachine(RuleBasedStateMachine):
    @initialize()
    def setup(self) -> None:
        self.base = Path(tempfile.mkdtemp(prefix="dcx-hosts-model-"))
        self.goal = Goal(self.base)
        self.hosts: list[Host] = [
            self.goal.host(f"host-{i}", agent=AGENTS[0]) for i in range(HOSTS)
        ]
        for host in self.hosts:
            self.dcx(host, AGENTS[0], "index")
        self.written: set[str] = set()
        # (host, agent) -> the assemblies that agent prepared on that host and has not committed
        self.pending: dict[tuple[str, str], list[str]] = {}
        self.edits = 0
        self.observe()

    def teardown(self) -> None:
        shutil.rmtree(self.base, ignore_errors=True)

    # -- driving dcx and git ------------------------------------------------------------------
    def dcx(self, host: Host, agent: str, *args: str, ok: tuple[int, ...] = (0,)) -> dict[str, Any]:
        assert CLI is not None
        env: dict[str, str | None] = {
            name: None for name in os.environ if name.startswith("DCX_")
        }  # no fixed chain nonce: each host draws its own
        env.update(
            {
                "HOME": str(host.home),
                "DCX_NOW": host.now,
                "DCX_AGENT_ID": agent,
                "GIT_CONFIG_GLOBAL": os.devnull,
                "GIT_CONFIG_NOSYSTEM": "1",
            }
        )
        out = CLI("-C", str(host.root), *args, "--format", "json", env=env)
        COUNTS[f"cmd:{args[0]}:{out.exit_code}"] += 1
        assert out.exit_code != 5, (args, out.stdout, out.stderr)
        assert out.exit_code in ok, (host.name, agent, args, out.stdout, out.stderr)
        doc = json.loads(out.stdout)
        if out.exit_code not in (0,) and not doc.get("ok", True):
            assert doc["error"]["code"], doc  # every refusal names its reason code
        return doc

    def observe(self) -> None:
        for host in self.hosts:
            self.written |= self.packets_in(host)

    @staticmethod
    def packets_in(host: Host) -> set[str]:
        folder = host.dc / "packets"
        return (
            {str(p.relative_to(host.dc)) for p in folder.glob("*/*.json")}
            if folder.is_dir()
            else set()
        )

    def origin_packets(self) -> set[str]:
        listed = git(self.goal.origin, "ls-tree", "-r", "--name-only", "main", "--", DC).stdout
        prefix = f"{DC}/"
        return {line[len(prefix) :] for line in listed.splitlines() if "/packets/" in f"/{line}"}

    def commit_public(self, host: Host, message: str) -> None:
        host.git("add", "-A", DC)
        if host.git("diff", "--cached", "--quiet", ok=False).returncode != 0:
            host.git("commit", "-q", "-m", message)

    # -- steps --------------------------------------------------------------------------------
    hosts_index = st.integers(min_value=0, max_value=HOSTS - 1)
    agents = st.sampled_from(AGENTS)

    @rule(h=hosts_index)
    def edit_authority(self, h: int) -> None:
        host = self.hosts[h]
        self.edits += 1
        notes = host.root / "docs" / f"notes-{host.name}.md"
        with notes.open("a") as f:
            f.write(f"\nThe purge queue drains within {self.edits} minutes on {host.name}.\n")
        host.git("add", "docs")
        host.git("commit", "-q", "-m", f"authority edit {self.edits}")
        COUNTS["edit"] += 1

    @rule(h=hosts_index, agent=agents)
    def prepare(self, h: int, agent: str) -> None:
        host = self.hosts[h]
        doc = self.dcx(host, agent, "prepare", "--decision-id", D, "--auto-rebase")
        asm = doc["data"]["assembly"]
        assert asm["agent_id"] == agent  # own_chain: the assembly is the acting agent's
        self.pending.setdefault((host.name, agent), []).append(asm["assembly_ref"])
        self.observe()

    @precondition(lambda self: bool(self.pending))
    @rule(data=st.data())
    def settle(self, data: st.DataObject) -> None:
        self.settle_as(*data.draw(st.sampled_from(sorted(self.pending))))

    @rule(h=hosts_index, agent=agents)
    def decide(self, h: int, agent: str) -> None:
        """An authority edit, then the agent's whole cycle on this host: prepare through commit."""
        self.edit_authority(h)
        self.prepare(h, agent)
        self.settle_as(self.hosts[h].name, agent)

    def settle_as(self, name: str, agent: str) -> None:
        host = next(h for h in self.hosts if h.name == name)
        mine = self.pending.pop((name, agent))
        evidence = {
            json.loads((host.dc / "packets" / "assembly" / f"{ref}.json").read_text())["evidence"][
                "packet_ref"
            ]: ref
            for ref in mine
        }
        proposed = self.dcx(
            host, agent, "propose", "--decision-id", D, "--from", str(host.root / "proposal.json")
        )
        bound = proposed["data"]["proposal"]["evidence_packet_ref"]
        self.own_chain(proposed, bound, set(evidence))
        out = self.dcx(
            host, agent, "outcome", "--decision-id", D, "--from", str(host.root / "outcome.json")
        )
        assert (
            out["data"]["outcome"]["proposal_packet_ref"]
            == proposed["data"]["proposal"]["packet_ref"]
        )
        event = self.dcx(
            host,
            agent,
            "writeback",
            "--decision-id",
            D,
            "--kind",
            "validation",
            "--summary",
            "checked",
        )["data"]["event"]
        unbacked = self.unbacked_by_model(host, agent)
        done = self.dcx(
            host, agent, "commit", "--decision-id", D, "--event-id", event["event_id"], ok=(0, 1)
        )
        if done["ok"]:
            receipt = done["data"]["receipt"]
            assert not unbacked, (unbacked, receipt)  # nothing absorbs on top of an unbacked cursor
            assert receipt["assembly_ref"] == evidence.get(bound) and receipt["agent_id"] == agent
            assert done["data"]["replayed"] is False
            COUNTS["commit_ok"] += 1
        else:
            code = done["error"]["code"]
            assert code in OWN_CHAIN_REFUSALS, done
            if unbacked:
                assert code in ("cursor_unbacked", "cursor_moved"), done
            COUNTS[f"commit_refused:{code}"] += 1
        self.observe()

    def own_chain(self, doc: dict[str, Any], bound: str, own: set[str]) -> None:
        """own_chain: bound to an own evidence, or the warnings name the other chain."""
        if bound not in own:
            assert any(bound in w for w in doc["warnings"]), (bound, own, doc["warnings"])

    @rule(h=hosts_index, push=st.booleans())
    def sync(self, h: int, push: bool) -> None:
        host = self.hosts[h]
        args = ("sync", "--push") if push else ("sync",)
        self.dcx(host, AGENTS[0], *args)
        COUNTS["sync_push" if push else "sync"] += 1
        self.observe()

    @rule(h=hosts_index)
    def pull_rebase(self, h: int) -> None:
        host = self.hosts[h]
        self.commit_public(host, "before a rebase")
        if host.git("pull", "-q", "--rebase", "origin", "main", ok=False).returncode != 0:
            host.git("rebase", "--abort", ok=False)
            COUNTS["rebase_aborted"] += 1
        else:
            COUNTS["rebase"] += 1
        self.observe()

    @rule(h=hosts_index)
    def force_push_drop_last(self, h: int) -> None:
        """Origin's last commit is dropped by a force-push; the pushing host resets onto the result."""
        host = self.hosts[h]
        host.git("fetch", "-q", "origin")
        if host.git("rev-parse", "-q", "--verify", "origin/main~1", ok=False).returncode != 0:
            return
        if git(self.goal.origin, "rev-list", "--count", "main").stdout.strip() in ("1", ""):
            return  # keep the seed
        host.git("push", "-q", "--force", "origin", "origin/main~1:main")
        host.git("fetch", "-q", "origin")
        before = self.packets_in(host)
        host.git("reset", "-q", "--hard", "origin/main")
        # a user's own reset discards what was only here: the model forgets it with them
        kept = self.origin_packets() | {
            p for o in self.hosts if o is not host for p in self.packets_in(o)
        }
        self.written -= before - kept - self.packets_in(host)
        for key in [k for k in self.pending if k[0] == host.name]:
            self.pending.pop(key)  # the reset may have dropped its assembly; prepare again
        COUNTS["force_push"] += 1

    @rule(h=hosts_index)
    def detached_head(self, h: int) -> None:
        """SPEC §16 v4: sync on a detached HEAD refuses before committing anything."""
        host = self.hosts[h]
        host.git("switch", "-q", "--detach")
        head = host.git("rev-parse", "HEAD").stdout
        status = host.git("status", "--porcelain").stdout
        refused = self.dcx(host, AGENTS[0], "sync", ok=(1,))
        assert refused["error"]["code"] == "sync_detached_head", refused
        assert host.git("rev-parse", "HEAD").stdout == head
        assert host.git("status", "--porcelain").stdout == status
        host.git("switch", "-q", "main")
        COUNTS["detached"] += 1

    @rule(h=hosts_index)
    def repair(self, h: int) -> None:
        self.dcx(self.hosts[h], AGENTS[0], "verify", "--repair", ok=(0, 1))
        COUNTS["repair"] += 1

    # -- the model's own view of cursors ------------------------------------------------------
    def cursors(self, host: Host) -> dict[str, dict[str, str]]:
        folder = host.dc / "private" / "cursors"
        out = {}
        for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
            out[path.stem] = json.loads(path.read_text())["cursors"]
        return out

    def backed_refs(self, host: Host) -> set[str]:
        refs = set()
        for path in (host.dc / "packets" / "commit").glob("*.json"):
            refs |= {row["cursor_after_ref"] for row in json.loads(path.read_text())["sources"]}
        return refs

    def unbacked_by_model(self, host: Host, agent: str) -> set[str]:
        key = (host.dc / "private" / "key").read_bytes()
        backed = self.backed_refs(host)
        mine = self.cursors(host).get(agent, {})
        return {sid for sid, cursor in mine.items() if cursor_ref(key, sid, cursor) not in backed}

    # -- invariants ---------------------------------------------------------------------------
    @invariant()
    def no_packet_lost(self) -> None:
        held = self.origin_packets().union(*(self.packets_in(h) for h in self.hosts))
        assert self.written <= held, sorted(self.written - held)[:5]

    @invariant()
    def cursor_backed_or_named_and_verify_clean_or_named(self) -> None:
        for host in self.hosts:
            checked = self.dcx(host, AGENTS[0], "verify", ok=(0, 1))
            assert checked["schema_version"] == "dcx_result_v0", checked  # a result, never an error
            if checked["status"] == "error":
                assert checked["data"]["problems"], checked  # exit 1 names each problem
            named = {(r["agent_id"], r["source_id"]) for r in checked["data"]["unbacked_cursors"]}
            model = {
                (agent, sid)
                for agent in self.cursors(host)
                for sid in self.unbacked_by_model(host, agent)
            }
            assert named == model, (host.name, named, model)
            COUNTS["unbacked_seen"] += len(model)


def test_hosts_story_a_force_push_drops_a_receipt() -> None:
    """The path random runs reach only sometimes, walked on purpose with the same steps and invariants:
    a decision committed and pushed, another agent's on the other host, a force-push dropping the
    commit that held the first receipt (its host resets onto it), then every host syncs and decides."""
    global CLI
    CLI = invoker()
    COUNTS.clear()
    machine = HostsMachine()
    try:
        machine.setup()
        steps = [
            lambda: machine.decide(0, "agent-a"),
            lambda: machine.sync(0, True),
            lambda: machine.decide(1, "agent-b"),
            lambda: machine.sync(1, False),
            lambda: machine.force_push_drop_last(0),  # drops host-0's push; host-0 resets onto it
            lambda: machine.decide(0, "agent-a"),  # refused: agent-a's cursor is unbacked now
            lambda: machine.repair(0),
            lambda: machine.decide(0, "agent-a"),
            lambda: machine.sync(1, True),
            lambda: machine.pull_rebase(0),
            lambda: machine.detached_head(1),
            lambda: machine.sync(0, True),
        ]
        for step in steps:
            step()
            machine.no_packet_lost()
            machine.cursor_backed_or_named_and_verify_clean_or_named()
    finally:
        machine.teardown()
    assert COUNTS["commit_refused:cursor_unbacked"] == 1 and COUNTS["unbacked_seen"] >= 1, dict(
        COUNTS
    )
    assert COUNTS["commit_ok"] >= 3, dict(COUNTS)


def _walk(rng: random.Random, steps: int) -> None:
    """One seeded random walk over the same steps and invariants (CI: the same walk every time)."""
    machine = HostsMachine()
    step_names = ("edit", "prepare", "settle", "decide", "sync", "pull_rebase", "force", "detach")
    try:
        machine.setup()
        for _ in range(steps):
            name = rng.choice(step_names)
            h, agent = rng.randrange(HOSTS), rng.choice(AGENTS)
            if name == "edit":
                machine.edit_authority(h)
            elif name == "prepare":
                machine.prepare(h, agent)
            elif name == "settle" and machine.pending:
                machine.settle_as(*rng.choice(sorted(machine.pending)))
            elif name == "decide":
                machine.decide(h, agent)
            elif name == "sync":
                machine.sync(h, rng.random() < 0.6)
            elif name == "pull_rebase":
                machine.pull_rebase(h)
            elif name == "force":
                machine.force_push_drop_last(h)
            elif name == "detach":
                machine.detached_head(h)
            machine.no_packet_lost()
            machine.cursor_backed_or_named_and_verify_clean_or_named()
    finally:
        machine.teardown()


def test_hosts_model() -> None:
    """CI: seeded random walks (the same on every machine); `make deep-test`: hypothesis explores."""
    global CLI
    CLI = invoker()
    COUNTS.clear()
    if not DEEP:
        rng = random.Random(SEED)
        for _ in range(WALKS):
            _walk(rng, STEPS)
        assert COUNTS["commit_ok"] > 0 and COUNTS["sync_push"] > 0, dict(COUNTS)
        return
    HostsMachine.TestCase.settings = settings(
        max_examples=EXAMPLES,
        stateful_step_count=STEPS,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    HostsMachine.TestCase().runTest()
    assert COUNTS["commit_ok"] > 0, dict(COUNTS)
