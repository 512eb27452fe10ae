"""The decision cycle's model, for an ``mcp`` source (SPEC §15.1): hypothesis drives random steps.

Kept apart from ``test_cycle_model.py`` (same idea, same command-line driving, its own small
machine): one goal whose only source is a real MCP server (``tests.support.mcp_server``) over
a folder of notes. The model is written from SPEC and never imports ``dcx``: a resource's
revision is blake3 of its bytes, blobs are not held, a scan reports the differences from the
committed map, and a server that crashes or writes a line that is not JSON-RPC makes the
source unavailable and moves nothing.

Named invariants, checked after every step:

- ``no_internal_error``: no command exits 5;
- ``cursor_absorbed_only``: the committed ``URI → revision`` map behind the source's cursor
  (``private/trees/<hash>.json``) is exactly what the last committed decision's prepare saw.

Knobs: ``DCX_MODEL_MCP_EXAMPLES`` / ``DCX_MODEL_MCP_STEPS`` (deep runs: 20x).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from blake3 import blake3
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from tests.support.cli import invoker

REPO = Path(__file__).resolve().parents[2]
SERVER = REPO / "tests" / "support" / "mcp_server.py"
PROPOSAL = json.loads((REPO / "fixtures" / "cycle" / "proposal.json").read_text())
OUTCOME = json.loads((REPO / "fixtures" / "cycle" / "outcome.json").read_text())
DEEP = os.environ.get("DCX_HYPOTHESIS_PROFILE") == "deep"
EXAMPLES = int(os.environ.get("DCX_MODEL_MCP_EXAMPLES", 60 if DEEP else 4))
STEPS = int(os.environ.get("DCX_MODEL_MCP_STEPS", 20 if DEEP else 10))
PREFIX = "notes://docs/"
SID = "notes"
NAMES = ("a.md", "b.md", "sub/c.md", "sub/deep/d.md", "e.txt")
WORDS = ("catalog", "ttl", "origin", "latency", "purge", "rollback")
FAILURES = {"crash": "mcp_server_exited", "malformed": "mcp_protocol_error"}


class Model:
    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.committed: dict[str, str] = {}  # URI -> revision, as the last commit absorbed
        self.server = "ok"  # ok | crash | malformed
        self.serial = 0

    def held(self) -> dict[str, str]:
        """URI -> blake3 of every text resource now (blobs are not held, SPEC §15.1)."""
        out = {}
        for rel, data in self.files.items():
            try:
                data.decode("utf-8")
            except UnicodeDecodeError:
                continue
            out[PREFIX + rel] = blake3(data).hexdigest()
        return out

    def changes(self) -> int:
        now = self.held()
        return sum(now.get(u) != self.committed.get(u) for u in now.keys() | self.committed.keys())


class McpCycleMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.tmp = Path(tempfile.mkdtemp(prefix="dcx-model-mcp-"))
        self.root = self.tmp / "goal"
        self.notes = self.tmp / "notes"
        self.control = self.tmp / "control"
        self.root.mkdir()
        self.notes.mkdir()
        self.model = Model()
        self.decisions = 0

    def teardown(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)

    def run(self, *args: str, ok: tuple[int, ...] = (0,)) -> Any:
        out = CLI("-C", str(self.root), *args, "--format", "json", env={"DCX_AGENT_ID": "agent-a"})
        assert out.exit_code != 5, (
            "no_internal_error",
            args,
            out.stdout[-1500:],
            out.stderr[-800:],
        )
        assert out.exit_code in ok, (args, out.exit_code, out.stdout[-1500:])
        return json.loads(out.stdout)

    @initialize()
    def init_goal(self) -> None:
        self.run("init", "--goal-id", "goal-model", "--agent-id", "agent-a")
        dc = self.root / ".decision-context"
        (dc / "profile.toml").write_text(
            'schema_version = "decision_context_profile_v0"\ngoal_id = "goal-model"\nenabled = true\n'
            'enabled_agents = ["agent-a"]\n[bounds]\ntimeout_seconds = 60\n'
        )
        command = [sys.executable, "-P", str(SERVER), str(self.notes), "--page-size", "2"]
        command += ["--control", str(self.control)]
        (dc / "sources.toml").write_text(
            'schema_version = "decision_source_registry_v0"\n'
            '[[bindings]]\nprovider_id = "servers"\nadapter = "mcp"\n'
            f'[[sources]]\nsource_id = "{SID}"\nprovider_id = "servers"\nsource_kind = "document"\n'
            'priority = "p0"\nevidence_level = "s1"\nobjectives = ["latency"]\n'
            'scan_mode = "incremental"\nexact_read_policy = "always"\nfreshness_seconds = 86400\n'
            f"locator = {{ command = {json.dumps(command)}, uri_prefix = {json.dumps(PREFIX)} }}\n"
        )
        self.put("a.md", b"# Note a\n\nThe catalog rule holds.\n")

    def put(self, rel: str, data: bytes) -> None:
        path = self.notes / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        self.model.files[rel] = data

    # -- the server's resources and its health ---------------------------------------------------
    @rule(name=st.sampled_from(NAMES), words=st.lists(st.sampled_from(WORDS), max_size=3))
    def write(self, name: str, words: list[str]) -> None:
        self.model.serial += 1
        self.put(name, f"# {name} {self.model.serial}\n\n{' '.join(words)}\n".encode())

    @rule(name=st.sampled_from(NAMES))
    def make_binary(self, name: str) -> None:
        self.put(name, b"\x00\xff\xfe binary " + name.encode())

    @rule(name=st.sampled_from(NAMES))
    def remove(self, name: str) -> None:
        if name in self.model.files:
            (self.notes / name).unlink()
            del self.model.files[name]

    @rule(state=st.sampled_from(["ok", "crash", "malformed"]))
    def server_health(self, state: str) -> None:
        self.control.write_text("" if state == "ok" else state)
        self.model.server = state

    # -- the cycle ---------------------------------------------------------------------------------
    @rule()
    def scan(self) -> None:
        receipt = self.run("scan")["data"]["receipts"][0]
        COUNTS[f"scan:{self.model.server}"] += 1
        if self.model.server != "ok":
            assert (receipt["status"], receipt["reason_code"]) == (
                "unavailable",
                FAILURES[self.model.server],
            )
            return
        changes = self.model.changes()
        assert receipt["status"] == ("completed" if changes else "no_change"), receipt
        assert receipt["changed_count"] == changes

    @rule()
    def full_cycle(self) -> None:
        """prepare --auto-rebase, propose, outcome, writeback, commit: absorbed iff the server
        answered (an unavailable p0 source leaves nothing to commit)."""
        self.decisions += 1
        decision = f"d{self.decisions}"
        seen = self.model.held()
        prepared = self.run("prepare", "--decision-id", decision, "--auto-rebase")
        rows = prepared["data"]["assembly"]["checkpoint"]["rows"]
        ready = self.model.server == "ok"
        assert [r["disposition"] == "ready_after_writeback" for r in rows] == [ready], rows
        for path, verb in ((PROPOSAL, "propose"), (OUTCOME, "outcome")):
            body = self.tmp / f"{verb}.json"
            body.write_text(json.dumps(path))
            self.run(verb, "--decision-id", decision, "--from", str(body))
        event = self.run(
            "writeback", "--decision-id", decision, "--kind", "validation", "--summary", "kept"
        )["data"]["event"]["event_id"]
        done = self.run(
            "commit", "--decision-id", decision, "--event-id", event, ok=(0,) if ready else (1,)
        )
        COUNTS["committed" if ready else "refused"] += 1
        if ready:
            COUNTS["advanced"] += seen != self.model.committed
            self.model.committed = seen
        else:
            assert done["error"]["code"] == "nothing_to_commit", done

    @invariant()
    def cursor_absorbed_only(self) -> None:
        path = self.root / ".decision-context" / "private" / "cursors" / "agent-a.json"
        if not path.exists():
            assert not self.model.committed, "cursor_absorbed_only: no cursor"
            return
        cursors = json.loads(path.read_text())
        value = cursors.get("cursors", cursors)[SID]
        digest = value.split(":", 1)[1]
        tree = self.root / ".decision-context" / "private" / "trees" / f"{digest}.json"
        assert dict(json.loads(tree.read_text())["entries"]) == self.model.committed, (
            "cursor_absorbed_only"
        )


CLI: Any = None
COUNTS: Counter[str] = Counter()


def test_mcp_source_cycle_model() -> None:
    global CLI
    CLI = invoker()
    McpCycleMachine.TestCase.settings = settings(
        max_examples=EXAMPLES,
        stateful_step_count=STEPS,
        deadline=None,
        database=None,
        derandomize=not DEEP,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    COUNTS.clear()
    McpCycleMachine.TestCase().runTest()
    # the run reached commits that moved the cursor, and a failing server (derandomized in CI)
    assert (
        COUNTS["advanced"] > 0
        and COUNTS["refused"] + COUNTS["scan:crash"] + COUNTS["scan:malformed"] > 0
    ), dict(COUNTS)
