"""The typer app: global options, then one module per command."""

from __future__ import annotations

import os
import sys
from importlib import import_module
from typing import Annotated, Any, Optional

import typer
from typer.core import Abort, TyperGroup

from dcx import __version__
from dcx.cli._options import Globals
from dcx.errors import DcxError, ExitCode, InvalidInput

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

_click = import_module("typer._click") if "typer._click" not in sys.modules else sys.modules["typer._click"]


def _wants_json(args: list[str]) -> bool:
    for i, arg in enumerate(args):
        if arg == "--format" and i + 1 < len(args):
            return args[i + 1].lower() == "json"
        if arg.startswith("--format="):
            return arg.split("=", 1)[1].lower() == "json"
    return os.environ.get("DCX_FORMAT", "").lower() == "json"


class DcxGroup(TyperGroup):
    """Routes usage errors through the one error format instead of click's box."""

    def main(self, args: Any = None, prog_name: Any = None, complete_var: Any = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        from dcx.cli._render import emit_error

        argv = list(sys.argv[1:] if args is None else args)
        _name_metavars(self)
        try:
            code = super().main(argv, prog_name, complete_var, standalone_mode=False, **extra)
        except _click.exceptions.NoArgsIsHelpError as exc:
            # bare `dcx`, `dcx ext`, `dcx key`: their help, as asked for (exit 0, like gh)
            sys.stdout.write(exc.ctx.get_help() + "\n")
            code = 0
        except _click.exceptions.UsageError as exc:
            command = exc.ctx.command_path if exc.ctx else "dcx"
            emit_error(
                InvalidInput(exc.format_message().replace("\n", " "), code="usage_error",
                             hint=f"see `{command} --help`"),
                "json" if _wants_json(argv) else "text",
            )
            code = int(ExitCode.INVALID_INPUT)
        except Abort:
            emit_error(DcxError("interrupted", code="interrupted"), "json" if _wants_json(argv) else "text")
            code = int(ExitCode.INTERRUPTED)
        except _click.exceptions.ClickException as exc:
            emit_error(InvalidInput(exc.format_message(), code="usage_error"),
                       "json" if _wants_json(argv) else "text")
            code = int(ExitCode.INVALID_INPUT)
        code = int(code or 0) if isinstance(code, int) or code is None else 0
        if standalone_mode:
            sys.exit(code)
        return code


# Metavars are words a person reads, not typer's `<str>`: by option name, then by type.
METAVARS = {
    "--workspace": "PATH", "--scope": "SCOPE", "--query": "TEXT", "--query-summary": "TEXT",
    "--summary": "TEXT", "--query-file": "FILE", "--from": "FILE", "--rebase": "FILE",
    "--max-results": "N", "--timeout": "SECONDS", "--wait": "SECONDS", "--agent-id": "AGENT_ID",
    "--observed-at": "TIME", "--decision-id": "ID", "--event-id": "EVENT_ID", "--source": "SOURCE_ID",
    "--outcome": "REF", "--artifact": "REF", "--kind": "KIND", "--since": "TIME", "--reason": "CODE",
}
TYPE_METAVARS = {"integer": "N", "float": "NUMBER", "text": "TEXT", "path": "PATH", "file": "FILE"}


def _name_metavars(command: Any) -> None:
    for param in getattr(command, "params", ()):
        if param.metavar is not None or getattr(param, "is_flag", False) or getattr(param, "count", False):
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
            Optional[str],  # noqa: UP045
            typer.Option("-C", "--workspace", help="Run as if dcx started in this goal root (env DCX_WORKSPACE)."),
        ] = None,
        no_color: Annotated[bool, typer.Option("--no-color", help="No colour (NO_COLOR works too).")] = False,
        verbose: Annotated[int, typer.Option("-v", "--verbose", count=True, help="Show tracebacks of internal errors.")] = 0,
        version: Annotated[
            bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
        ] = False,
    ) -> None:
        ctx.obj = Globals(workspace=workspace, verbose=verbose, no_color=no_color)

    for module_name, name in COMMANDS:
        module = import_module(f"dcx.cli.{module_name}")
        if hasattr(module, "app"):
            app.add_typer(module.app, name=name)
        else:
            app.command(name=name)(module.command)
    return app
