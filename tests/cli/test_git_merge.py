"""Two workspaces of one goal, two git branches, one merge: no conflict, and it verifies.

Content addressing keeps `packets/` conflict-free (a file name is its content's
hash: two branches either add different files or the same bytes), each decision
has its own index file, and `events.jsonl` merges by union (`.gitattributes`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from tests.support.cli import Runner
from tests.support.cycle import run_cycle
from tests.support.workspace import FIXED_KEY, copy_example

DC = ".decision-context"


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1"}
    proc = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
    return proc.stdout


def _identity(repo: Path, name: str) -> None:
    git(repo, "config", "user.name", name)
    git(repo, "config", "user.email", f"{name}@agents.invalid")


def test_two_agents_branches_merge_without_conflict(tmp_path: Path) -> None:
    home = {"HOME": str(tmp_path / "home")}
    origin = copy_example(tmp_path / "catalog")
    git(origin, "init", "-q", "-b", "main")
    _identity(origin, "agent-a")
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "catalog goal: authority docs and workspace")
    tracked = git(origin, "ls-files", DC).split()
    assert f"{DC}/.gitattributes" in tracked and not any(
        "private/" in t or (t.endswith(".toml") and "workspace" not in t) for t in tracked
    )

    # the second host: a clone, its private config handed over out of band, the goal's key imported
    other = tmp_path / "catalog-b"
    git(tmp_path, "clone", "-q", str(origin), str(other))
    _identity(other, "agent-b")
    for private in ("profile.toml", "sources.toml"):
        shutil.copy2(origin / DC / private, other / DC / private)
    keyfile = tmp_path / "goal.key"
    keyfile.write_text(FIXED_KEY.hex())
    Runner(other, home)("key", "import", str(keyfile))

    git(origin, "switch", "-q", "-c", "ttl-a")
    run_cycle(origin, "ttl-a", edit_authority=False, env=home)
    git(origin, "add", DC)
    git(origin, "commit", "-q", "-m", "decision ttl-a")
    git(other, "switch", "-q", "-c", "ttl-b")
    run_cycle(other, "ttl-b", edit_authority=False, env=home)
    git(other, "add", DC)
    git(other, "commit", "-q", "-m", "decision ttl-b")

    git(origin, "fetch", "-q", str(other), "ttl-b")
    touched_a = set(git(origin, "diff", "--name-only", "main", "ttl-a").split())
    touched_b = set(git(origin, "diff", "--name-only", "main", "FETCH_HEAD").split())
    shared = touched_a & touched_b
    logs = {f"{DC}/events.jsonl", f"{DC}/statements.jsonl"}  # union-merged (SPEC §18: statements)
    assert logs <= shared
    for name in shared - logs:  # goal-level packets both runs made: the very same bytes
        # and workspace.toml, where both hosts' first use pinned the one goal key (SPEC §16)
        assert name.startswith(f"{DC}/packets/") or name == f"{DC}/workspace.toml"
        assert git(origin, "show", f"ttl-a:{name}") == git(origin, "show", f"FETCH_HEAD:{name}")

    git(origin, "switch", "-q", "main")
    git(origin, "merge", "-q", "--no-edit", "ttl-a")
    git(origin, "merge", "-q", "--no-edit", "FETCH_HEAD")  # a conflict would fail here
    assert "<<<<<<<" not in (origin / DC / "events.jsonl").read_text()
    assert "<<<<<<<" not in (origin / DC / "statements.jsonl").read_text()
    assert len((origin / DC / "events.jsonl").read_text().splitlines()) == 2

    dcx = Runner(origin, home)
    verified = dcx.json("verify")["data"]
    assert verified["problems"] == [] and verified["events_checked"] == 2
    # each host signed with its own key; both keys travelled with the merge (SPEC §18)
    assert verified["signatures"]["unsigned"] == verified["signatures"]["failed"] == 0
    assert verified["signatures"]["signers"] == 2
    assert verified["decision_indexes_checked"] == 2
    decisions = dcx.json("log")["data"]["decisions"]
    assert sorted(r["decision_id"] for r in decisions) == ["ttl-a", "ttl-b"]
    assert all(r["next_step"] is None for r in decisions)
    assert dcx.json("audit")["data"]["findings"] == []
