"""Shared machinery of the reliability tests (tests/reliability/).

- ``cycle_template``: ONE workspace per test session that has been through a
  full cycle (a committed base decision) and then holds three decisions
  prepared, proposed, decided and written back from that same committed
  state, each ready to commit: ``ttl-2026-12`` (the crash and 16-process
  target) and ``race-a`` / ``race-b`` (which race on the same two sources).
  Built with the real console script; tests copy it per run.
- ``run_script`` / ``ForkRunner``: run dcx in a subprocess, optionally killed
  with SIGKILL after a delay.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, NamedTuple

from tests.support.cli import DCX_EXE
from tests.support.workspace import FIXED_CHAIN_NONCE, FIXED_NOW, copy_example

HERE = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent
AGENT = "agent-a"
NOTES_SOURCE = """
[[sources]]
source_id = "source:notes"
provider_id = "files"
source_kind = "document"
priority = "p1"
evidence_level = "s2"
objectives = ["origin-latency"]
scan_mode = "incremental"
exact_read_policy = "always"
freshness_seconds = 86400
locator = { path = "notes", include = ["**/*.md"] }
"""
QUERY = "when do we roll back the catalog TTL"


def knob(name: str, default: int) -> int:
    """An integer size knob from the environment (documented in docs/reliability.md)."""
    raw = os.environ.get(name, "").strip()
    return int(raw) if raw else default


def base_env(home: Path) -> dict[str, str]:
    """What every dcx subprocess of these tests sees: fixed clock, one agent, no inherited DCX_*."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DCX_")}
    env.update(
        {
            "HOME": str(home),
            "DCX_NOW": FIXED_NOW,
            "DCX_CHAIN_NONCE": FIXED_CHAIN_NONCE,
            "DCX_AGENT_ID": AGENT,
            "NO_COLOR": "1",
            "COLUMNS": "120",
            "TERM": "dumb",
            "PATH": f"{BIN}{os.pathsep}{env.get('PATH', '')}",
        }
    )
    return env


class Outcome(NamedTuple):
    code: int | None  # negative: killed by that signal; None: hung and stopped by the harness
    killed: bool  # the harness's SIGKILL ended it (not a normal exit first)
    stdout: str
    stderr: str
    elapsed: float

    def json(self) -> Any:
        return json.loads(self.stdout)


def run_script(
    args: list[str], *, env: dict[str, str], kill_after: float | None = None, timeout: float = 60
) -> Outcome:
    """The installed console script in a subprocess; SIGKILL after ``kill_after`` seconds if given."""
    started = time.monotonic()
    proc = subprocess.Popen(
        [DCX_EXE, *args],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    killed = False
    if kill_after is not None:
        try:
            proc.wait(timeout=kill_after)
        except subprocess.TimeoutExpired:
            proc.kill()
            killed = True
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        return Outcome(None, False, out, err, time.monotonic() - started)
    return Outcome(
        proc.returncode, killed and proc.returncode == -9, out, err, time.monotonic() - started
    )


BOUND = 60.0  # seconds: no concurrent process may take longer (a deadlock would)


def launch(commands: list[list[str]], env: dict[str, str]) -> list[dict[str, Any]]:
    """Start every command at once; collect exit code, parsed output and time to finish."""
    started = time.monotonic()
    procs = [
        subprocess.Popen(
            [DCX_EXE, *args],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for args in commands
    ]
    results = []
    for args, proc in zip(commands, procs, strict=True):
        left = max(0.1, BOUND - (time.monotonic() - started))
        try:
            out, err = proc.communicate(timeout=left)
            code = proc.returncode
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            code = None  # hung past the bound
        try:
            doc = json.loads(out)
        except ValueError:
            doc = None
        results.append(
            {
                "args": args,
                "code": code,
                "doc": doc,
                "stderr": err,
                "elapsed": time.monotonic() - started,
            }
        )
    return results


def dcx_ok(args: list[str], env: dict[str, str]) -> Any:
    """Run a step that must succeed; its JSON result."""
    out = run_script([*args, "--format", "json"], env=env)
    assert out.code == 0, (args, out.stdout, out.stderr)
    return out.json()


class ForkRunner:
    """Client of ``forkrun.py``: dcx commands in forked children of one warm interpreter."""

    def __init__(self, scratch: Path) -> None:
        self.scratch = scratch
        scratch.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            [sys.executable, str(HERE / "forkrun.py")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        self.count = 0

    def run(
        self,
        args: list[str],
        *,
        env: dict[str, str],
        cwd: Path,
        kill_after: float | None = None,
        timeout: float = 60,
    ) -> Outcome:
        self.count += 1
        out, err = self.scratch / f"{self.count}.out", self.scratch / f"{self.count}.err"
        request = {
            "args": args,
            "env": env,
            "cwd": str(cwd),
            "out": str(out),
            "err": str(err),
            "kill_after": kill_after,
            "timeout": timeout,
        }
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        answer = json.loads(self.proc.stdout.readline())
        texts = []
        for path in (out, err):
            texts.append(path.read_text() if path.exists() else "")
            path.unlink(missing_ok=True)
        return Outcome(answer["code"], answer["killed"], texts[0], texts[1], answer["elapsed"])

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


# -- the cycle template ------------------------------------------------------


class Decision(NamedTuple):
    decision_id: str
    event_id: str
    assembly_ref: str
    expected: dict[str, str | None]  # committed cursors it was prepared against
    proposed: dict[str, str]  # what its commit advances them to


class Template(NamedTuple):
    root: Path
    home: Path
    old_cursors: bytes  # private/cursors.json after the base decision's commit
    decisions: dict[str, Decision]

    def env(self, **extra: str) -> dict[str, str]:
        return {**base_env(self.home), **extra}


def _decide(root: Path, env: dict[str, str], decision_id: str, summary: str) -> Decision:
    ws = ["-C", str(root)]
    prepared = dcx_ok(
        [
            *ws,
            "prepare",
            "--decision-id",
            decision_id,
            "--auto-rebase",
            "--query",
            QUERY,
            "--query-summary",
            "TTL rollback criteria",
        ],
        env,
    )
    assembly_ref = prepared["data"]["summary"]["assembly_ref"]
    dcx_ok(
        [*ws, "propose", "--decision-id", decision_id, "--from", str(root / "proposal.json")], env
    )
    dcx_ok(
        [*ws, "outcome", "--decision-id", decision_id, "--from", str(root / "outcome.json")], env
    )
    event = dcx_ok(
        [
            *ws,
            "writeback",
            "--decision-id",
            decision_id,
            "--kind",
            "validation",
            "--summary",
            summary,
        ],
        env,
    )["data"]["event"]
    pend = json.loads(
        (root / ".decision-context/private/pending" / f"{assembly_ref}.json").read_text()
    )
    return Decision(
        decision_id,
        event["event_id"],
        assembly_ref,
        pend["expected_cursors"],
        pend["proposed_cursors"],
    )


def _edit(root: Path, tag: str) -> None:
    """A real change in both sources, so each decision proposes different cursors."""
    with open(root / "docs" / "runbook-ttl-rollback.md", "a") as handle:
        handle.write(f"\nRevision note {tag}: the rollback drill was rehearsed again.\n")
    (root / "notes" / f"note-{tag}.md").write_text(
        f"# Note {tag}\n\nOrigin load looked normal during {tag}.\n"
    )


def build_cycle_template(dest: Path) -> Template:
    root = dest / "goal"
    home = dest / "home"
    home.mkdir(parents=True)
    copy_example(root)
    (root / "notes").mkdir()
    (root / "notes" / "origin.md").write_text(
        "# Origin\n\nThe origin serves 600 rps at the partner limit.\n"
    )
    with open(root / ".decision-context" / "sources.toml", "a") as handle:
        handle.write(NOTES_SOURCE)
    env = base_env(home)
    dcx_ok(["-C", str(root), "index"], env)
    base = _decide(root, env, "base-2026-11", "Baseline adopted")
    commit = dcx_ok(
        ["-C", str(root), "commit", "--decision-id", base.decision_id, "--event-id", base.event_id],
        env,
    )
    assert commit["data"]["receipt"]["status"] == "committed"
    old = (root / ".decision-context/private/cursors/agent-a.json").read_bytes()
    decisions = {}
    for decision_id, tag in (("ttl-2026-12", "one"), ("race-a", "two"), ("race-b", "three")):
        _edit(root, tag)
        decisions[decision_id] = _decide(root, env, decision_id, f"TTL decision {tag} recorded")
    committed = json.loads(old)["cursors"]
    for decision in decisions.values():
        assert set(decision.proposed) == {"source:authority:docs", "source:notes"}, decision
        assert decision.expected == {sid: committed[sid] for sid in decision.proposed}, decision
    assert len({json.dumps(d.proposed, sort_keys=True) for d in decisions.values()}) == 3
    return Template(root, home, old, decisions)


_TEMPLATES: dict[str, Template] = {}


def cycle_template(tmp_path_factory: Any) -> Template:
    """The session's one template (built on first use)."""
    if "cycle" not in _TEMPLATES:
        _TEMPLATES["cycle"] = build_cycle_template(tmp_path_factory.mktemp("cycle-template"))
    return _TEMPLATES["cycle"]


def copy_workspace(template: Template, dest: Path) -> Path:
    shutil.copytree(template.root, dest, symlinks=True)
    return dest


def remove_tree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


# -- inspecting a workspace --------------------------------------------------


def cursors_bytes(root: Path) -> bytes | None:
    try:
        return (root / ".decision-context/private/cursors/agent-a.json").read_bytes()
    except FileNotFoundError:
        return None


def temp_files(root: Path) -> list[Path]:
    return sorted(p for p in (root / ".decision-context").rglob("*.tmp"))


def commit_receipts(root: Path, decision_id: str) -> list[dict[str, Any]]:
    folder = root / ".decision-context/packets/commit"
    if not folder.is_dir():
        return []
    out = []
    for path in sorted(folder.glob("*.json")):
        if path.name.startswith("."):
            continue
        packet = json.loads(path.read_text())
        if packet.get("decision_id") == decision_id:
            out.append(packet)
    return out


def index_lines(root: Path, decision_id: str, kind: str) -> list[dict[str, Any]]:
    path = root / ".decision-context/decisions" / f"{decision_id}.jsonl"
    if not path.exists():
        return []
    return [
        entry
        for line in path.read_text().splitlines()
        if line.strip()
        for entry in [json.loads(line)]
        if entry.get("kind") == kind
    ]


def pending_exists(root: Path, assembly_ref: str) -> bool:
    return (root / ".decision-context/private/pending" / f"{assembly_ref}.json").exists()


# -- public files and canaries -----------------------------------------------

PRIVATE_TOP = ("private", "profile.toml", "sources.toml")


def public_files(root: Path) -> list[Path]:
    """Everything under .decision-context/ except private/, profile.toml and sources.toml (SPEC §2)."""
    dc = root / ".decision-context"
    out = []
    for path in sorted(dc.rglob("*")):
        rel = path.relative_to(dc).parts
        if rel[0] in PRIVATE_TOP or not path.is_file():
            continue
        out.append(path)
    return out


def canaries_in(text: str | bytes, canaries: dict[str, str]) -> list[str]:
    """The names of the canaries whose value occurs in ``text`` (case-insensitive)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    low = text.lower()
    return sorted(name for name, value in canaries.items() if value.lower() in low)
