"""Several hosts of one goal: a bare origin and clones in a temp dir, real git, real ``dcx`` processes.

Each ``Host`` is a clone with its own private half (profile, sources, key,
cursors, pending companions), its own fixed clock (``DCX_NOW``) and acting
agent (``DCX_AGENT_ID``), and runs the installed console script in a
subprocess — nothing is called in-process, so locks, exit codes and file
modes are the ones a user gets. ``parallel`` runs steps of several hosts at
once (threads driving separate processes).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from tests.support.workspace import EXAMPLE, FIXED_KEY

DC = ".decision-context"
DCX = shutil.which("dcx", path=str(Path(sys.executable).parent)) or "dcx"
QUERY = "when do we roll back the catalog cache TTL change origin p99 latency"
AGENTS = ("agent-a", "agent-b", "agent-c")
_GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_AUTHOR_DATE": "2026-11-29T18:00:00Z",
    "GIT_COMMITTER_DATE": "2026-11-29T18:00:00Z",
}


def git(cwd: Path, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **_GIT_ENV, "GIT_CONFIG_GLOBAL": os.devnull}
    proc = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60, check=False
    )
    if ok:
        assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
    return proc


class Run:
    def __init__(self, args: tuple[str, ...], proc: subprocess.CompletedProcess[str]) -> None:
        self.args, self.code, self.stdout, self.stderr = (
            args,
            proc.returncode,
            proc.stdout,
            proc.stderr,
        )

    def json(self) -> Any:
        return json.loads(self.stdout)

    def __repr__(self) -> str:
        return f"Run({self.args!r}, code={self.code}, stdout={self.stdout[-600:]!r}, stderr={self.stderr[-600:]!r})"


class Host:
    """One clone of the goal, one clock, one acting agent."""

    def __init__(self, name: str, root: Path, *, agent: str, now: str, home: Path) -> None:
        self.name, self.root, self.agent, self.now, self.home = name, root, agent, now, home

    @property
    def dc(self) -> Path:
        return self.root / DC

    def env(self, **extra: str) -> dict[str, str]:
        base = {k: v for k, v in os.environ.items() if not k.startswith("DCX_")}
        return {
            **base,
            **_GIT_ENV,
            "GIT_CONFIG_GLOBAL": os.devnull,
            "HOME": str(self.home),
            "DCX_NOW": self.now,
            "DCX_AGENT_ID": self.agent,
            "COLUMNS": "120",
            "NO_COLOR": "1",
            "TERM": "dumb",
            **extra,
        }

    def run(
        self,
        *args: str,
        ok: bool = True,
        env: Mapping[str, str] | None = None,
        timeout: float = 120,
    ) -> Run:
        proc = subprocess.run(
            [DCX, "-C", str(self.root), *args],
            env=self.env(**(env or {})),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        result = Run(args, proc)
        if ok:
            assert result.code == 0, result
        return result

    def json(self, *args: str, ok: bool = True, env: Mapping[str, str] | None = None) -> Any:
        return self.run(*args, "--format", "json", ok=ok, env=env).json()

    def git(self, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        return git(self.root, *args, ok=ok)

    # the cycle, step by step
    def prepare(self, decision_id: str, *extra: str) -> dict[str, Any]:
        return self.json(
            "prepare",
            "--decision-id",
            decision_id,
            "--auto-rebase",
            "--query",
            QUERY,
            "--query-summary",
            "TTL rollback criteria",
            *extra,
        )["data"]["assembly"]

    def propose(self, decision_id: str, **kw: Any) -> Run:
        return self.run(
            "propose",
            "--decision-id",
            decision_id,
            "--from",
            str(self.root / "proposal.json"),
            "--format",
            "json",
            **kw,
        )

    def outcome(self, decision_id: str, **kw: Any) -> Run:
        return self.run(
            "outcome",
            "--decision-id",
            decision_id,
            "--from",
            str(self.root / "outcome.json"),
            "--format",
            "json",
            **kw,
        )

    def writeback(self, decision_id: str, **kw: Any) -> Run:
        return self.run(
            "writeback",
            "--decision-id",
            decision_id,
            "--kind",
            "validation",
            "--summary",
            "TTL kept at 90 s",
            "--format",
            "json",
            **kw,
        )

    def commit(self, decision_id: str, event_id: str, **kw: Any) -> Run:
        return self.run(
            "commit", "--decision-id", decision_id, "--event-id", event_id, "--format", "json", **kw
        )

    def through_commit(self, decision_id: str) -> dict[str, Any]:
        """propose → outcome → writeback → commit on this host's own chain."""
        prop = self.propose(decision_id).json()["data"]["proposal"]
        out = self.outcome(decision_id).json()["data"]["outcome"]
        event = self.writeback(decision_id).json()["data"]["event"]
        receipt = self.commit(decision_id, event["event_id"]).json()["data"]["receipt"]
        return {"proposal": prop, "outcome": out, "event": event, "receipt": receipt}

    def record(self, message: str = "dcx") -> None:
        """Commit the public half of the workspace (the authority docs' edits stay in the work tree)."""
        self.git("add", "-A", DC)
        self.git("commit", "-q", "--allow-empty", "-m", message)

    def share(self, message: str = "dcx") -> None:
        """Commit the public half and push it (merging what others pushed first)."""
        self.pull(message)
        self.git("push", "-q", "origin", "HEAD:main")

    def pull(self, message: str = "dcx") -> None:
        """Commit the public half, then merge what others pushed (never a rebase)."""
        self.record(message)
        self.git("pull", "-q", "--no-rebase", "--no-edit", "origin", "main")

    def edit_authority(
        self, old: str = "stays above 400 ms", new: str = "stays above 350 ms"
    ) -> None:
        path = self.root / "docs" / "runbook-ttl-rollback.md"
        path.write_text(path.read_text().replace(old, new))

    def cursor_files(self) -> dict[str, Any]:
        folder = self.dc / "private" / "cursors"
        return (
            {p.stem: json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))}
            if folder.is_dir()
            else {}
        )


def _profile(agents: Iterable[str]) -> str:
    text = (EXAMPLE / DC / "profile.toml").read_text()
    listed = ", ".join(f'"{a}"' for a in agents)
    return text.replace('enabled_agents = ["agent-a"]', f"enabled_agents = [{listed}]")


class Goal:
    """A bare origin seeded with the example goal (authority docs and the workspace's public half)."""

    def __init__(self, base: Path, *, pin: bool = True) -> None:
        self.base = base
        self.origin = base / "origin.git"
        git(base, "init", "-q", "--bare", "-b", "main", str(self.origin))
        seed = base / "seed"
        shutil.copytree(EXAMPLE, seed, ignore=shutil.ignore_patterns("private", "*.lock"))
        git(seed, "init", "-q", "-b", "main")
        self._identity(seed, "seed")
        if pin:  # the seeding host holds the goal key and pins it (any command that uses the key)
            self._install_key(seed)
            subprocess.run(
                [DCX, "-C", str(seed), "index"],
                env={**os.environ, "HOME": str(base)},
                capture_output=True,
                check=False,
                timeout=60,
            )
        git(seed, "add", "-A")
        git(seed, "commit", "-q", "-m", "goal: authority docs and the decision-context workspace")
        git(seed, "push", "-q", str(self.origin), "main")
        self.keyfile = base / "goal.key"
        self.keyfile.write_text(FIXED_KEY.hex())

    @staticmethod
    def _identity(repo: Path, name: str) -> None:
        git(repo, "config", "user.name", name)
        git(repo, "config", "user.email", f"{name}@agents.invalid")

    @staticmethod
    def _install_key(root: Path) -> None:
        private = root / DC / "private"
        private.mkdir(mode=0o700, parents=True, exist_ok=True)
        (private / "key").write_bytes(FIXED_KEY)
        os.chmod(private / "key", 0o600)

    def host(
        self,
        name: str,
        *,
        agent: str = "agent-a",
        now: str = "2026-11-29T18:00:00Z",
        key: bool = True,
        agents: Iterable[str] = AGENTS,
    ) -> Host:
        """A fresh clone with its private configuration handed over out of band (and the key, unless told)."""
        root = self.base / name
        git(self.base, "clone", "-q", str(self.origin), str(root))
        self._identity(root, name)
        (root / DC / "profile.toml").write_text(_profile(agents))
        shutil.copy2(EXAMPLE / DC / "sources.toml", root / DC / "sources.toml")
        home = self.base / f"home-{name}"
        home.mkdir(exist_ok=True)
        host = Host(name, root, agent=agent, now=now, home=home)
        if key:
            host.run("key", "import", str(self.keyfile))
        return host


def parallel(*steps: Callable[[], Any]) -> list[Any]:
    """Run the steps at once (each drives its own processes); results in order, first failure raised."""
    with ThreadPoolExecutor(max_workers=len(steps)) as pool:
        futures = [pool.submit(step) for step in steps]
        return [f.result() for f in futures]
