"""Running dcx from tests: the console script in a subprocess, or the typer app in-process.

- ``run_dcx``: the installed console script (``DCX_EXE``) in a real subprocess.
- the ``dcx`` fixture (``tests/conftest.py``): the typer app in-process, stdout and stderr apart.
- ``Runner``: the typer app in-process on one goal root with an explicit environment
  (usable outside a test's own, e.g. to build session templates).
- ``invoker``: the typer app built once: ``CliRunner.invoke`` rebuilds the click command each call.
  Building dcx's command tree costs about 0.3 s (typer inspects every command's signature); the
  model and differential tests run thousands of commands, so they build it once and hand the same
  click command to every invocation. The command is otherwise run exactly as the ``dcx`` fixture
  runs it (exceptions not caught: an internal error still surfaces as exit 5 through dcx's own
  boundary).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from tests.support.workspace import FIXED_CHAIN_NONCE, FIXED_NOW

DCX_EXE = shutil.which("dcx", path=str(Path(sys.executable).parent)) or "dcx"


class CliResult:
    def __init__(self, code: int, stdout: str, stderr: str) -> None:
        self.exit_code = code
        self.stdout = stdout
        self.stderr = stderr

    def json(self) -> Any:
        return json.loads(self.stdout)


def run_dcx(
    *args: str,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    input: str | None = None,
    timeout: float = 60,
) -> CliResult:
    """Run the installed console script in a subprocess."""
    full_env = {**os.environ, **(env or {})}
    proc = subprocess.run(
        [DCX_EXE, *args],
        cwd=cwd,
        env=full_env,
        input=input,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return CliResult(proc.returncode, proc.stdout, proc.stderr)


def in_process() -> Callable[..., CliResult]:
    """The typer app in-process (typer's runner), stdout and stderr apart: the ``dcx`` fixture."""
    from typer.testing import CliRunner

    from dcx.cli.app import build_app

    app = build_app()

    def invoke(
        *args: str, input: str | None = None, env: Mapping[str, str] | None = None
    ) -> CliResult:
        runner = CliRunner()
        result = runner.invoke(
            app, list(args), input=input, env=dict(env or {}), catch_exceptions=False
        )
        return CliResult(result.exit_code, result.stdout, result.stderr)

    return invoke


def invoker() -> Callable[..., CliResult]:
    """Like ``in_process``, but the click command is built once (see the module docstring)."""
    import typer.main
    import typer.testing

    from dcx.cli.app import build_app

    app = build_app()
    command = typer.main.get_command(app)

    def invoke(
        *args: str, input: str | None = None, env: Mapping[str, str] | None = None
    ) -> CliResult:
        saved = typer.testing._get_command
        typer.testing._get_command = lambda _app: command  # the one built above
        try:
            result = typer.testing.CliRunner().invoke(
                app, list(args), input=input, env=dict(env or {}), catch_exceptions=False
            )
        finally:
            typer.testing._get_command = saved
        return CliResult(result.exit_code, result.stdout, result.stderr)

    return invoke


class Runner:
    """The typer app in-process on ``root``, with an explicit environment (usable outside a test's own)."""

    def __init__(self, root: Path, env: Mapping[str, str] | None = None) -> None:
        from typer.testing import CliRunner

        from dcx.cli.app import build_app

        self.app = build_app()
        self.runner = CliRunner()
        self.root = root
        unset: dict[str, str | None] = {
            name: None for name in os.environ if name.startswith("DCX_")
        }
        self.env = {
            **unset,
            "DCX_NOW": FIXED_NOW,
            "DCX_CHAIN_NONCE": FIXED_CHAIN_NONCE,
            "DCX_AGENT_ID": "agent-a",
            "COLUMNS": "120",
            "NO_COLOR": "1",
            "TERM": "dumb",
            **(env or {}),
        }

    def __call__(self, *args: str, ok: bool = True) -> Any:
        result = self.runner.invoke(
            self.app, ["-C", str(self.root), *args], env=self.env, catch_exceptions=False
        )
        if ok:
            assert result.exit_code == 0, (args, result.stdout, result.stderr)
        return result

    def json(self, *args: str) -> dict[str, Any]:
        return json.loads(self(*args, "--format", "json").stdout)
