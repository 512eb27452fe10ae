"""The one-time migration of the shared ``private/cursors.json`` to per-agent files (SPEC §16).

An older host: one agent committed a decision into the shared file. Its first
command that reads cursors copies that file, under its lock, to the file of
each enabled agent (agent-a, agent-b, agent-c), then removes it. Real
processes killed (SIGKILL) at each step of the migration, through the
``DCX_FAULT_POINT`` hook commit uses; and two processes migrating at once.
Oracle: what SPEC §16 says must hold after any crash and after the rerun.
"""

from __future__ import annotations

import atexit
import json
import shutil
import signal
import tempfile
from pathlib import Path

import pytest

from tests.support.hosts import AGENTS, Goal, Host, parallel

D = "ttl-2026-12"


_TEMPLATE: dict[str, Host] = {}


def _older_host(tmp_path: Path) -> tuple[Host, bytes]:
    """A host whose one committed decision sits in the shared cursor file (as before per-agent files):
    built once per session, copied per test."""
    if "host" not in _TEMPLATE:
        base = Path(tempfile.mkdtemp(prefix="dcx-older-host-"))
        atexit.register(shutil.rmtree, base, ignore_errors=True)
        host = Goal(base).host("host-a")
        host.run("index")
        host.edit_authority()
        host.prepare(D)
        host.through_commit(D)
        private = host.dc / "private"
        (private / "cursors" / "agent-a.json").rename(private / "cursors.json")
        shutil.rmtree(private / "cursors")
        _TEMPLATE["host"] = host
    template = _TEMPLATE["host"]
    root = tmp_path / "host-a"
    shutil.copytree(template.root, root, symlinks=True)
    home = tmp_path / "home-a"
    home.mkdir(exist_ok=True)
    host = Host("host-a", root, agent=template.agent, now=template.now, home=home)
    return host, (host.dc / "private" / "cursors.json").read_bytes()


def _check_migrated(host: Host, shared: bytes) -> None:
    private = host.dc / "private"
    assert not (private / "cursors.json").exists()
    for agent in AGENTS:
        path = private / "cursors" / f"{agent}.json"
        assert json.loads(path.read_bytes()) == json.loads(shared), agent
        assert path.stat().st_mode & 0o777 == 0o600
    assert (private / "cursors").stat().st_mode & 0o777 == 0o700


def _no_change_for_everyone(host: Host) -> None:
    for agent in AGENTS:  # what the shared file had absorbed is absorbed for every agent
        receipts = host.json("scan", env={"DCX_AGENT_ID": agent})["data"]["receipts"]
        assert all(r["status"] == "no_change" for r in receipts), (agent, receipts)


STEPS = (
    "cursors.migrate.after_copy@1",
    "cursors.migrate.after_copy@2",
    "cursors.migrate.after_copy@3",
    "cursors.migrate.before_remove",
    "cursors.migrate.after_remove",
)


@pytest.mark.parametrize("step", STEPS)
def test_a_migration_killed_at_any_step_is_finished_by_the_next_command(
    tmp_path: Path, step: str
) -> None:
    host, shared = _older_host(tmp_path)
    private = host.dc / "private"
    killed = host.run("scan", ok=False, env={"DCX_FAULT_POINT": step})
    assert killed.code == -signal.SIGKILL, killed
    copies = sorted(private.glob("cursors/*.json"))
    for path in copies:  # every copy made is whole: the shared bytes, never a torn file
        assert json.loads(path.read_bytes()) == json.loads(shared)
    assert not list(private.glob("cursors/.*.tmp"))
    if step.startswith("cursors.migrate.after_copy"):
        assert (
            len(copies) == int(step.rsplit("@", 1)[1])
            and (private / "cursors.json").read_bytes() == shared
        )
    elif step == "cursors.migrate.before_remove":
        assert len(copies) == len(AGENTS) and (private / "cursors.json").exists()
    else:
        assert not (private / "cursors.json").exists()
    host.run("scan")
    _check_migrated(host, shared)
    _no_change_for_everyone(host)


def test_a_killed_migration_never_overwrites_what_an_agent_committed_since(tmp_path: Path) -> None:
    """Killed after agent-a's copy; agent-a's file is then advanced by hand (as a later commit would):
    the rerun copies only the missing agents and leaves agent-a's file alone."""
    host, shared = _older_host(tmp_path)
    private = host.dc / "private"
    host.run("scan", ok=False, env={"DCX_FAULT_POINT": "cursors.migrate.after_copy@1"})
    first = sorted(private.glob("cursors/*.json"))[0]
    advanced = json.loads(first.read_bytes())
    advanced["cursors"]["source:authority:docs"] = "tree:" + "e" * 64
    first.write_text(json.dumps(advanced))
    host.run("scan", ok=False)
    assert json.loads(first.read_bytes()) == advanced
    assert not (private / "cursors.json").exists()
    others = [p for p in private.glob("cursors/*.json") if p != first]
    assert len(others) == len(AGENTS) - 1
    assert all(json.loads(p.read_bytes()) == json.loads(shared) for p in others)


def test_two_processes_migrating_at_once_agree(tmp_path: Path) -> None:
    host, shared = _older_host(tmp_path)
    backup = host.dc / "private" / "cursors.json.orig"
    backup.write_bytes(shared)
    for _ in range(3):
        results = parallel(
            *(
                lambda agent=agent: host.run(
                    "scan", "--format", "json", ok=False, env={"DCX_AGENT_ID": agent}
                )
                for agent in AGENTS
            )
        )
        assert [r.code for r in results] == [0] * len(AGENTS), results
        _check_migrated(host, shared)
        shutil.rmtree(host.dc / "private" / "cursors")
        shutil.copy2(backup, host.dc / "private" / "cursors.json")
    host.run("scan")
    _no_change_for_everyone(host)
