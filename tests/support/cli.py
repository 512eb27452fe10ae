"""The typer app in-process, built once: ``CliRunner.invoke`` rebuilds the click command each call.

Building dcx's command tree costs about 0.3 s (typer inspects every command's
signature); the model and differential tests run thousands of commands, so
they build it once and hand the same click command to every invocation. The
command is otherwise run exactly as ``tests/conftest.py``'s ``dcx`` fixture
runs it (stdout and stderr apart, exceptions not caught: an internal error
still surfaces as exit 5 through dcx's own boundary).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import typer.main
import typer.testing


class Out:
    def __init__(self, code: int, stdout: str, stderr: str) -> None:
        self.exit_code = code
        self.stdout = stdout
        self.stderr = stderr

    def json(self) -> Any:
        import json

        return json.loads(self.stdout)


def invoker() -> Callable[..., Out]:
    from dcx.cli.app import build_app

    app = build_app()
    command = typer.main.get_command(app)

    def invoke(*args: str, input: str | None = None, env: Mapping[str, str] | None = None) -> Out:
        saved = typer.testing._get_command
        typer.testing._get_command = lambda _app: command  # the one built above
        try:
            result = typer.testing.CliRunner().invoke(app, list(args), input=input, env=dict(env or {}),
                                                      catch_exceptions=False)
        finally:
            typer.testing._get_command = saved
        return Out(result.exit_code, result.stdout, result.stderr)

    return invoke
