"""The typer app: global options, then one module per command."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from importlib import import_module
from typing import Annotated, Any

import typer
from typer.core import Abort, TyperGroup

from dcx import __version__
from dcx.cli._options import Globals
from dcx.core.errors import DcxError, ExitCode, InvalidInput

# (module under dcx.cli, command name). A module with ``app`` is a command group.
COMMANDS: tuple[tuple[str, str], ...] = (
    # set up a goal
    ("init", "init"),
    ("status", "status"),
    ("enable", "enable"),
    ("disable", "disable"),
    ("source", "source"),
    ("provider", "provider"),
    ("sources", "sources"),
    ("index", "index"),
    ("ext", "ext"),
    ("key", "key"),
    # the decision cycle
    ("scan", "scan"),
    ("recall", "recall"),
    ("workbench", "workbench"),
    ("prepare", "prepare"),
    ("propose", "propose"),
    ("outcome", "outcome"),
    ("writeback", "writeback"),
    ("commit", "commit"),
    ("gate", "gate"),
    ("review", "review"),
    ("feedback", "feedback"),
    ("abandon", "abandon"),
    ("gc", "gc"),
    # reading what was decided
    ("log", "log"),
    ("show", "show"),
    ("diff", "diff"),
    ("verify", "verify"),
    ("sync", "sync"),
    ("audit", "audit"),
    ("redact", "redact"),
    ("help", "help"),
    # agents over MCP
    ("mcp", "mcp"),
    # comparing recall providers
    ("compare", "compare"),
    ("report", "report"),
)


def _wants_json(args: list[str]) -> bool:
    for i, arg in enumerate(args):
        if arg == "--format" and i + 1 < len(args):
            return args[i + 1].lower() == "json"
        if arg.startswith("--format="):
            return arg.split("=", 1)[1].lower() == "json"
    return os.environ.get("DCX_FORMAT", "").lower() == "json"


class DcxGroup(TyperGroup):
    """Routes usage errors through the one error format instead of click's box."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        from dcx.cli._render import emit_error

        argv = list(sys.argv[1:] if args is None else args)
        _name_metavars(self)
        try:
            code = super().main(
                argv,
                prog_name,
                complete_var,
                standalone_mode=False,
                windows_expand_args=windows_expand_args,
                **extra,
            )
        except Abort:
            emit_error(
                DcxError("interrupted", code="interrupted"), "json" if _wants_json(argv) else "text"
            )
            code = int(ExitCode.INTERRUPTED)
        except (
            typer.TyperException
        ) as exc:  # click's usage errors, through typer's public base class
            code = _usage_error(exc, argv)
        code = int(code or 0) if isinstance(code, int) or code is None else 0
        if standalone_mode:
            sys.exit(code)
        return code


def _usage_error(exc: Exception, argv: list[str]) -> int:
    """A usage error in the one error format; a bare group (``dcx``, ``dcx ext``) prints its help."""
    from dcx.cli._render import emit_error

    ctx = getattr(exc, "ctx", None)
    if type(exc).__name__ == "NoArgsIsHelpError" and ctx is not None:
        sys.stdout.write(ctx.get_help() + "\n")  # as asked for (exit 0, like gh)
        return 0
    message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
    hint = None
    if hasattr(exc, "ctx"):  # a usage error (bad flag, missing option): one line and where to look
        message = message.replace("\n", " ")
        hint = f"see `{ctx.command_path if ctx is not None else 'dcx'} --help`"
    emit_error(
        InvalidInput(message, code="usage_error", hint=hint),
        "json" if _wants_json(argv) else "text",
    )
    return int(ExitCode.INVALID_INPUT)


# Metavars are words a person reads, not typer's `<str>`: by option name, then by type.
METAVARS = {
    "--workspace": "PATH",
    "--scope": "SCOPE",
    "--query": "TEXT",
    "--query-summary": "TEXT",
    "--summary": "TEXT",
    "--query-file": "FILE",
    "--from": "FILE",
    "--rebase": "FILE",
    "--max-results": "N",
    "--timeout": "SECONDS",
    "--wait": "SECONDS",
    "--agent-id": "AGENT_ID",
    "--observed-at": "TIME",
    "--decision-id": "ID",
    "--event-id": "EVENT_ID",
    "--source": "SOURCE_ID",
    "--outcome": "REF",
    "--artifact": "REF",
    "--kind": "KIND",
    "--since": "TIME",
    "--reason": "CODE",
}
TYPE_METAVARS = {"integer": "N", "float": "NUMBER", "text": "TEXT", "path": "PATH", "file": "FILE"}


def _name_metavars(command: Any) -> None:
    for param in getattr(command, "params", ()):
        if (
            param.metavar is not None
            or getattr(param, "is_flag", False)
            or getattr(param, "count", False)
        ):
            continue
        if hasattr(param.type, "choices"):  # shown as [text|json]
            continue
        if param.param_type_name == "argument":
            param.metavar = (param.name or "ARG").upper()
            continue
        long = next((o for o in param.opts if o.startswith("--")), "")
        param.metavar = METAVARS.get(long) or TYPE_METAVARS.get(param.type.name, "VALUE")
    for child in getattr(command, "commands", {}).values():
        _name_metavars(child)


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"dcx {__version__}\n")
        raise typer.Exit(0)


def build_app() -> typer.Typer:
    app = typer.Typer(
        name="dcx",
        cls=DcxGroup,
        help=(
            "Decision Context: rebuild what is currently true before a decision, "
            "add bounded advisory recall, and keep fingerprinted, public-safe "
            "packets that reviewers diff in git."
        ),
        epilog="Example: dcx init --goal-id checkout-latency --agent-id agent-a",
        no_args_is_help=True,
        add_completion=True,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"]},
    )

    @app.callback()
    def root(
        ctx: typer.Context,
        workspace: Annotated[
            str | None,
            typer.Option(
                "-C",
                "--workspace",
                help="Run as if dcx started in this goal root (env DCX_WORKSPACE).",
            ),
        ] = None,
        no_color: Annotated[
            bool, typer.Option("--no-color", help="No colour (NO_COLOR works too).")
        ] = False,
        verbose: Annotated[
            int,
            typer.Option("-v", "--verbose", count=True, help="Show tracebacks of internal errors."),
        ] = 0,
        version: Annotated[
            bool,
            typer.Option(
                "--version", callback=_version, is_eager=True, help="Print the version and exit."
            ),
        ] = False,
        allow_linked_workspace: Annotated[
            bool,
            typer.Option(
                "--allow-linked-workspace",
                envvar="DCX_ALLOW_LINKED_WORKSPACE",
                help="Let .decision-context/ or its private/ be a link to another disk "
                "(env DCX_ALLOW_LINKED_WORKSPACE=1); no other link is ever followed.",
            ),
        ] = False,
    ) -> None:
        ctx.obj = Globals(
            workspace=workspace,
            verbose=verbose,
            no_color=no_color,
            allow_linked=allow_linked_workspace,
        )

    for module_name, name in COMMANDS:
        module = import_module(f"dcx.cli.{module_name}")
        if hasattr(module, "app"):
            app.add_typer(module.app, name=name)
        else:
            app.command(name=name)(module.command)
    return app
