from __future__ import annotations

import sys

from dcx.cli._declare import Argument, declare
from dcx.cli._globals import Globals
from dcx.cli._options import FORMAT
from dcx.core.errors import ExitCode, InvalidInput


@declare(
    own_output=True,
    names=Argument(variadic=True, metavar="[COMMAND]...", help="A command, e.g. `ext install`."),
    fmt=FORMAT,
)
def command(g: Globals, *, names: list[str] | None, fmt: str) -> int:
    """Show the help of dcx, or of one command (`dcx help ext install`).

    Example: dcx help prepare
    """
    import typer.main  # help is typer's: the app is built from the declarations

    from dcx.cli.app import build_app

    target = typer.main.get_command(build_app())
    target_ctx = typer.Context(target, info_name="dcx", **target.context_settings)
    for name in names or []:
        child = target.get_command(target_ctx, name) if hasattr(target, "get_command") else None
        if child is None:
            from dcx.cli._render import emit_error

            path = " ".join(["dcx", *(names or [])][: len(target_ctx.command_path.split()) + 1])
            emit_error(
                InvalidInput(f"no such command: {path}", code="usage_error", hint="see `dcx help`"),
                fmt,
            )
            return int(ExitCode.INVALID_INPUT)
        target_ctx = typer.Context(child, info_name=name, parent=target_ctx)
        target = child
    text = target.get_help(target_ctx)
    if fmt == "json":
        from dcx.cli._render import emit
        from dcx.core.result import Result

        emit(Result("help", {"command": target_ctx.command_path, "help": text}), "json", None)
        return 0
    sys.stdout.write(text + "\n")
    return 0
