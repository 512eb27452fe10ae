"""Running dcx from tests: the console script in a subprocess, or ``dcx.cli.main`` in-process.

- ``run_dcx``: the installed console script (``DCX_EXE``) in a real subprocess.
- the ``dcx`` fixture (``tests/conftest.py``): ``dcx.cli.main`` in-process, stdout and stderr
  apart: the commands' own parse from their declarations, the typer app for help and usage errors.
- ``Runner``: the same on one goal root with an explicit environment (usable outside a test's
  own, e.g. to build session templates).
- ``invoker``: the same, for the model and differential tests that run thousands of commands.
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

from tests.support.workspace import FIXED_NOW

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


def invoke_main(
    args: list[str], *, input: str | None = None, env: Mapping[str, str | None] | None = None
) -> CliResult:
    """``dcx.cli.main(args)`` in-process, as the console script runs it, stdout and stderr apart.

    Typer's runner gives it its own streams and environment (``CliRunner.isolation``);
    exceptions are not caught: an internal error still surfaces as exit 5 through
    dcx's own boundary.
    """
    from typer.testing import CliRunner

    from dcx.cli import main

    with CliRunner().isolation(input=input, env=dict(env or {})) as (out, err, _):
        code = 0
        try:
            main(list(args))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
        return CliResult(code, out.getvalue().decode(), err.getvalue().decode())


def in_process() -> Callable[..., CliResult]:
    """``dcx.cli.main`` in-process (the ``dcx`` fixture): the declarations' parse, typer for errors."""

    def invoke(
        *args: str, input: str | None = None, env: Mapping[str, str] | None = None
    ) -> CliResult:
        return invoke_main(list(args), input=input, env=env)

    return invoke


def invoker() -> Callable[..., CliResult]:
    """The same as ``in_process`` (kept for the model and differential tests that import it)."""
    return in_process()


class Runner:
    """The typer app in-process on ``root``, with an explicit environment (usable outside a test's own)."""

    def __init__(self, root: Path, env: Mapping[str, str] | None = None) -> None:
        self.root = root
        unset: dict[str, str | None] = {
            name: None for name in os.environ if name.startswith("DCX_")
        }
        self.env = {
            **unset,
            "DCX_NOW": FIXED_NOW,
            "DCX_AGENT_ID": "agent-a",
            "COLUMNS": "120",
            "NO_COLOR": "1",
            "TERM": "dumb",
            **(env or {}),
        }

    def __call__(self, *args: str, ok: bool = True) -> Any:
        result = invoke_main(["-C", str(self.root), *args], env=self.env)
        if ok:
            assert result.exit_code == 0, (args, result.stdout, result.stderr)
        return result

    def json(self, *args: str) -> dict[str, Any]:
        return json.loads(self(*args, "--format", "json").stdout)
