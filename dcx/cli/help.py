from __future__ import annotations

import sys
from typing import Annotated

import typer

from dcx.cli._options import FormatOpt, OutputFormat
from dcx.core.errors import ExitCode, InvalidInput


def command(
    ctx: typer.Context,
    names: Annotated[
        list[str] | None,
        typer.Argument(metavar="[COMMAND]...", help="A command, e.g. `ext install`."),
    ] = None,
    fmt: FormatOpt = OutputFormat.text,
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
            emit_error(
                InvalidInput(f"no such command: {path}", code="usage_error", hint="see `dcx help`"),
                getattr(fmt, "value", fmt),
            )
            raise typer.Exit(int(ExitCode.INVALID_INPUT))
        target_ctx = typer.Context(child, info_name=name, parent=target_ctx)
        target = child
    text = target.get_help(target_ctx)
    if getattr(fmt, "value", fmt) == "json":
        from dcx.cli._render import emit
        from dcx.core.result import Result

        emit(Result("help", {"command": target_ctx.command_path, "help": text}), "json", None)
        return
    sys.stdout.write(text + "\n")
