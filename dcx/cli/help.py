from __future__ import annotations

import sys
from typing import Annotated

import typer

from dcx.errors import ExitCode, InvalidInput


def command(
    ctx: typer.Context,
    names: Annotated[list[str] | None, typer.Argument(metavar="[COMMAND]...", help="A command, e.g. `ext install`.")] = None,
) -> None:
    """Show the help of dcx, or of one command (`dcx help ext install`).

    Example: dcx help prepare
    """
    root = ctx.find_root()
    target = root.command
    target_ctx = root
    for name in names or []:
        child = target.get_command(target_ctx, name) if hasattr(target, "get_command") else None
        if child is None:
            from dcx.cli._render import emit_error

            path = " ".join(["dcx", *(names or [])][: len(target_ctx.command_path.split()) + 1])
            emit_error(InvalidInput(f"no such command: {path}", code="usage_error", hint="see `dcx help`"), "text")
            raise typer.Exit(int(ExitCode.INVALID_INPUT))
        target_ctx = typer.Context(child, info_name=name, parent=target_ctx)
        target = child
    sys.stdout.write(target.get_help(target_ctx) + "\n")
