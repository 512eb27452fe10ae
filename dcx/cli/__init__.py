"""CLI assembly and ``main()``: every command runs from its one declaration (``dcx.cli._declare``).

``main`` parses the global options and the command's own from the command
module's declaration and runs it without importing typer (SPEC §3.6
start-up budget). The typer app (``dcx.cli.app``), built from the same
declarations, answers only what that parse leaves to it: ``--help``,
completion, a bare group (``dcx ext``) and usage errors, whose messages are
click's.

When a command has answered, the objects still alive (the imported modules,
mostly) are frozen out of the cyclic garbage collector (``gc.freeze``): the
interpreter's last collection at exit would walk them all and free nothing,
which costs a read-only command about a tenth of its time (SPEC §3.6 start-up
budget). The exit itself is the normal one: buffers flushed, files closed.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dcx.cli._declare import Command

# One module per command, ``dcx/cli/<name>.py``, in the order ``dcx --help`` lists them.
# A module declares ``command`` (a Command) or ``group`` (a Group of subcommands).
COMMANDS: tuple[str, ...] = (
    # set up a goal
    "init",
    "status",
    "enable",
    "disable",
    "source",
    "provider",
    "sources",
    "index",
    "ext",
    "key",
    # the decision cycle
    "scan",
    "recall",
    "workbench",
    "prepare",
    "propose",
    "outcome",
    "writeback",
    "commit",
    "gate",
    "review",
    "feedback",
    "abandon",
    "gc",
    # reading what was decided
    "log",
    "show",
    "diff",
    "verify",
    "sync",
    "audit",
    "redact",
    "help",
    # agents over MCP
    "mcp",
    # comparing recall providers
    "compare",
    "report",
)


SHELLS = ("bash", "zsh", "fish", "powershell", "pwsh")


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        code = run(args)
    except (
        KeyboardInterrupt
    ):  # while it imported or parsed: the command's own boundary was not there yet
        from dcx.cli._render import emit_error
        from dcx.core.errors import DcxError, ExitCode

        emit_error(DcxError("interrupted", code="interrupted"), "text")
        code = int(ExitCode.INTERRUPTED)
    if code is None:
        from dcx.cli.app import build_app

        build_app()(args=args, prog_name="dcx")
        return
    if argv is None:  # the console script: the process ends here
        import gc  # here: the package's own `dcx.cli.gc` (the command) would shadow it at the top

        gc.freeze()
    sys.exit(code)


def run(args: list[str]) -> int | None:
    """Parse ``args`` from the declarations and run the command; None leaves it to the typer app."""
    import os

    if "_DCX_COMPLETE" in os.environ:  # shell completion is typer's
        return None
    if len(args) == 2 and args[0] == "--show-completion" and args[1] in SHELLS:
        # typer's flag guesses the shell from the process tree; a named shell is that shell's
        import typer._completion_shared as completion

        script = completion.get_completion_script(
            prog_name="dcx", complete_var="_DCX_COMPLETE", shell=args[1]
        )
        sys.stdout.write(script.rstrip("\n") + "\n")
        return 0
    from dcx.cli._declare import parse_globals
    from dcx.cli._options import GLOBALS

    parsed = parse_globals(GLOBALS, args)
    if parsed is None:
        return None
    given, rest = parsed
    if given["version"]:
        from dcx import __version__

        sys.stdout.write(f"dcx {__version__}\n")
        return 0
    found = _find(rest)
    if found is None:
        return None
    command, values = found
    from dcx.cli._globals import Globals

    g = Globals(
        workspace=given["workspace"],
        verbose=given["verbose"],
        no_color=given["no_color"],
        allow_linked=given["allow_linked_workspace"],
    )
    return command.execute(g, values)


def _find(rest: list[str]) -> tuple[Command, dict[str, object]] | None:
    """The command ``rest`` names and its parsed values, or None."""
    if not rest or rest[0] not in COMMANDS:
        return None  # `dcx` alone (its help), or no such command: the typer app says so
    from importlib import import_module

    module = import_module(f"dcx.cli.{rest[0]}")
    command, rest = getattr(module, "command", None), rest[1:]
    if command is None:
        group = module.group
        if not rest or rest[0] not in group.commands:
            return None
        command, rest = group.commands[rest[0]], rest[1:]
    values = command.parse(rest)
    return None if values is None else (command, values)
