"""The typer app: global options, then one module per command."""

from __future__ import annotations

import inspect
import os
import sys
from collections.abc import Callable, Sequence
from enum import Enum
from importlib import import_module
from typing import Any

import typer
from typer.core import Abort, TyperGroup

from dcx import __version__
from dcx.cli import COMMANDS
from dcx.cli._declare import Argument, Command, Group, Option, Param
from dcx.cli._globals import Globals
from dcx.cli._options import FORMAT, GLOBALS
from dcx.core.errors import DcxError, ExitCode, InvalidInput


def _wants_json(args: list[str]) -> bool:
    for i, arg in enumerate(args):
        if arg in FORMAT.flags and i + 1 < len(args):
            return args[i + 1].lower() == "json"
        if arg.startswith(tuple(f"{flag}=" for flag in FORMAT.flags)):
            return arg.split("=", 1)[1].lower() == "json"
    return os.environ.get(FORMAT.envvar or "", "").lower() == "json"


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


def globals_of(ctx: typer.Context) -> Globals:
    root = ctx.find_root()
    if not isinstance(root.obj, Globals):
        root.obj = Globals()
    return root.obj


def _annotation(param: Param) -> Any:
    if isinstance(param, Argument):
        return list[str] | None if param.variadic else (str if param.required else str | None)
    if param.choices:
        return Enum(f"Choice{id(param)}", {c: c for c in param.choices}, type=str)  # type: ignore[misc]
    if param.is_flag:
        return param.type
    if param.multiple:
        return list[param.type] | None  # type: ignore[name-defined]
    return param.type if param.required or param.default is not None else param.type | None


def _typer_param(name: str, param: Param) -> Any:
    """The typer.Option / typer.Argument of a declared parameter (its default first, as typer wants)."""
    if isinstance(param, Argument):
        metavar = param.metavar or name.upper()
        return typer.Argument(... if param.required else None, metavar=metavar, help=param.help)
    default = ... if param.required else param.default
    extra: dict[str, Any] = {}
    if param.choices:
        extra["case_sensitive"] = param.case_sensitive
    if param.count:
        extra["count"] = True
        extra["show_default"] = False  # a count starts at none: "[default: 0]" says nothing
    if param.min is not None:
        extra["min"] = param.min
    if param.max is not None:
        extra["max"] = param.max
    if param.envvar:
        extra["envvar"] = param.envvar
    if not param.is_flag and not param.choices:
        extra["metavar"] = param.metavar or "VALUE"
    return typer.Option(default, *param.flags, help=param.help, **extra)


def _plain(param: Param, value: Any) -> Any:
    """A value as the fast parse gives it: an Enum member as its word, no values as None."""
    if isinstance(value, Enum):
        return value.value
    if (isinstance(param, Argument) and param.variadic) or (
        isinstance(param, Option) and param.multiple
    ):
        return list(value) if value else None
    return value


def _readable(
    run: Callable[..., None], params: dict[str, Param], doc: str = ""
) -> Callable[..., None]:
    """``run(ctx, **values)`` with the signature typer reads: ``ctx``, then each declared parameter."""
    parameters = [
        inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context)
    ]
    for name, param in params.items():
        info = _typer_param(name, param)
        if param is GLOBALS["version"]:  # printed before any command is looked at
            info = typer.Option(
                False, *param.flags, callback=_version, is_eager=True, help=param.help
            )
        parameters.append(
            inspect.Parameter(
                name, inspect.Parameter.KEYWORD_ONLY, default=info, annotation=_annotation(param)
            )
        )
    run.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    run.__annotations__ = {}
    run.__doc__ = doc
    return run


def typer_callback(declared: Command) -> Callable[..., None]:
    """The typer command of a declaration: it runs the command as ``dcx.cli.main`` does."""

    def callback(ctx: typer.Context, **values: Any) -> None:
        plain = {name: _plain(declared.params[name], v) for name, v in values.items()}
        code = declared.execute(globals_of(ctx), plain)
        if code:
            raise typer.Exit(code)

    return _readable(callback, declared.params, declared.help)


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"dcx {__version__}\n")
        raise typer.Exit(0)


def _root(ctx: typer.Context, **values: Any) -> None:
    ctx.obj = Globals(
        workspace=values["workspace"],
        verbose=values["verbose"],
        no_color=values["no_color"],
        allow_linked=values["allow_linked_workspace"],
    )


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

    app.callback()(_readable(_root, dict(GLOBALS)))
    for name in COMMANDS:
        module = import_module(f"dcx.cli.{name}")
        group: Group | None = getattr(module, "group", None)
        if group is None:
            declared = module.command
            app.command(name=name, short_help=first_sentence(declared.help))(
                typer_callback(declared)
            )
            continue
        sub = typer.Typer(help=group.help, no_args_is_help=True)
        for sub_name, declared in group.commands.items():
            sub.command(sub_name, short_help=first_sentence(declared.help))(
                typer_callback(declared)
            )
        app.add_typer(sub, name=name, short_help=first_sentence(group.help))
    return app


def first_sentence(doc: str) -> str:
    """The help's first sentence, whole: the command lists wrap it, never cut it mid-way
    (click's own short help stops at a width, "overwriting..." for "overwriting nothing")."""
    paragraph = " ".join(inspect.cleandoc(doc).split("\n\n", 1)[0].split())
    end = paragraph.find(". ")
    return paragraph if end < 0 else paragraph[: end + 1]
