"""Test isolation by construction.

Every test runs in its own temp directory with a fresh HOME, a fixed clock,
pinned terminal width and no inherited DCX_* settings, so touching a real
home or the repository's own example fails loudly instead of passing quietly.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from syrupy.extensions.json import JSONSnapshotExtension

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / ".dcx-example"
FIXED_NOW = "2026-11-29T18:00:00Z"
FIXED_KEY = bytes(range(32))

sys.path.insert(0, str(Path(__file__).resolve().parent))
# `cycled`: the example after one full decision cycle (tests of show, log, verify, audit, diffs).
pytest_plugins = ("readers_support",)

# Hypothesis profiles: "ci" (default) keeps `make test` CI-sized; "deep" is the
# knob for long fuzz runs: `pytest --hypothesis-profile=deep tests/fuzz`.
_quiet = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
settings.register_profile("ci", deadline=None, suppress_health_check=_quiet, print_blob=True)
settings.register_profile("deep", deadline=None, suppress_health_check=_quiet, max_examples=20_000)
settings.load_profile(os.environ.get("DCX_HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("DCX_"):
            monkeypatch.delenv(name)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("DCX_NOW", FIXED_NOW)
    monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("TERM", "dumb")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    from dcx.core import public

    public.bind_private_values(None)  # an in-process CLI run binds its workspace's values


@pytest.fixture
def snapshot_json(snapshot):
    return snapshot.use_extension(JSONSnapshotExtension)


def write_tree(root: Path, tree: Mapping[str, Any]) -> None:
    """Build files from a dict: {"a/b.md": "text", "bin": b"bytes", "dir": {...}}."""
    for name, value in tree.items():
        path = root / name
        if isinstance(value, Mapping):
            path.mkdir(parents=True, exist_ok=True)
            write_tree(path, value)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(value, bytes):
                path.write_bytes(value)
            else:
                path.write_text(value)


@pytest.fixture
def tree() -> Callable[[Path, Mapping[str, Any]], None]:
    return write_tree


def install_key(root: Path, key: bytes = FIXED_KEY) -> None:
    private = root / ".decision-context" / "private"
    private.mkdir(parents=True, exist_ok=True)
    (private / "key").write_bytes(key)
    (private / "key").chmod(0o600)


@pytest.fixture
def example(tmp_path: Path) -> Path:
    """A fresh copy of the bundled example goal with the fixed test key."""
    dest = tmp_path / "example"
    shutil.copytree(EXAMPLE, dest, ignore=shutil.ignore_patterns("private", "*.lock"))
    install_key(dest)
    return dest


@pytest.fixture
def fresh_ws(tmp_path: Path) -> Path:
    """An initialised, still default-off workspace with the fixed key."""
    from dcx.ops.init import init

    root = tmp_path / "goal"
    root.mkdir()
    install_key(root)
    init(root=root, goal_id="goal-test", agent_id="agent-a")
    return root


class CliResult:
    def __init__(self, code: int, stdout: str, stderr: str) -> None:
        self.exit_code = code
        self.stdout = stdout
        self.stderr = stderr

    def json(self) -> Any:
        import json

        return json.loads(self.stdout)


@pytest.fixture
def dcx() -> Callable[..., CliResult]:
    """Run the typer app in-process (typer's runner), stdout and stderr apart."""
    from typer.testing import CliRunner

    from dcx.cli.app import build_app

    app = build_app()

    def invoke(*args: str, input: str | None = None, env: Mapping[str, str] | None = None) -> CliResult:
        runner = CliRunner()
        result = runner.invoke(app, list(args), input=input, env=dict(env or {}), catch_exceptions=False)
        return CliResult(result.exit_code, result.stdout, result.stderr)

    return invoke


def run_dcx(*args: str, cwd: Path | None = None, env: Mapping[str, str] | None = None,
            input: str | None = None, timeout: float = 60) -> CliResult:
    """Run the installed console script in a subprocess."""
    exe = shutil.which("dcx", path=str(Path(sys.executable).parent)) or "dcx"
    full_env = {**os.environ, **(env or {})}
    proc = subprocess.run(
        [exe, *args], cwd=cwd, env=full_env, input=input, capture_output=True, text=True, timeout=timeout
    )
    return CliResult(proc.returncode, proc.stdout, proc.stderr)
