"""One declaration of each command: its options, and what it runs and prints (SPEC §3.6).

A command module (``dcx/cli/<verb>.py``) declares its command once::

    @declare(
        decision_id=Option("--decision-id", metavar="ID", help="Only this decision."),
        limit=Option("--limit", type=int, min=1, metavar="N", help="At most N decisions."),
        fmt=FORMAT,
    )
    def command(g: Globals, *, decision_id: str | None, limit: int | None, fmt: str) -> Result:
        \"\"\"List decisions ... (the docstring is its --help)\"\"\"
        from dcx.ops.log import log

        return log(ws=g.ws(), decision_id=decision_id, limit=limit)

Two things are made from that declaration and nothing else:

- the typer app (``dcx.cli.app``): ``--help``, completion and usage errors;
- the fast dispatch (:meth:`Command.parse`, used by ``dcx.cli.main``): it
  reads argv the way click does for the shapes dcx uses (``--opt value``,
  ``--opt=value``, ``-X value``, ``-Xvalue``, flags, repeated options,
  positionals, ``--``) and runs the command without importing typer. Anything
  it cannot complete — ``--help``, an unknown option, a missing or invalid
  value — returns None, and the typer app parses the same argv and prints its
  usage error.

Both run the command the same way, :meth:`Command.execute`: the function's
Result goes through the one error boundary and renderer (``dcx.cli._answer``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dcx.cli._globals import Globals
    from dcx.cli._render import TextRenderer

_UNSET: Any = object()


class Option:
    """One option: its flags, value type, help, default and environment variable.

    ``type`` is ``str``, ``int``, ``float`` or ``bool`` (a flag); ``count`` makes a
    counted flag (``-v -v``), ``multiple`` a repeatable option whose values are a
    list (None when none is given), ``choices`` a closed set of words.
    """

    __slots__ = (
        "case_sensitive",
        "choices",
        "count",
        "default",
        "envvar",
        "flags",
        "help",
        "max",
        "metavar",
        "min",
        "multiple",
        "required",
        "type",
    )

    def __init__(
        self,
        *flags: str,
        help: str,
        type: type = str,
        default: Any = _UNSET,
        required: bool = False,
        multiple: bool = False,
        count: bool = False,
        envvar: str | None = None,
        choices: Sequence[str] = (),
        case_sensitive: bool = True,
        min: float | None = None,
        max: float | None = None,
        metavar: str | None = None,
    ) -> None:
        self.flags = flags
        self.help = help
        self.type = int if count else type
        if default is _UNSET:
            default = 0 if count else (False if type is bool else None)
        self.default = default
        self.required = required
        self.multiple = multiple
        self.count = count
        self.envvar = envvar
        self.choices = tuple(choices)
        self.case_sensitive = case_sensitive
        self.min = min
        self.max = max
        self.metavar = metavar

    def but(self, **changes: Any) -> Option:
        """This option with some of its settings changed (``DECISION.but(required=False)``)."""
        settings = {name: getattr(self, name) for name in self.__slots__ if name != "flags"}
        settings.update(changes)
        if settings.pop("count"):
            settings["count"] = True
        return Option(*self.flags, **settings)

    @property
    def is_flag(self) -> bool:
        return self.type is bool or self.count

    def convert(self, text: str) -> Any:
        """``text`` as the option's value, as click converts it; ValueError when click would refuse."""
        if self.choices:
            if self.case_sensitive:
                if text in self.choices:
                    return text
            else:
                for choice in self.choices:
                    if choice.casefold() == text.casefold():
                        return choice
            raise ValueError(text)
        if self.type is str:
            return text
        value = self.type(text)  # int() / float(): what click's number types call
        if (self.min is not None and value < self.min) or (
            self.max is not None and value > self.max
        ):
            raise ValueError(text)
        return value


class Argument:
    """One positional argument; ``variadic`` takes every remaining one (a list, or None)."""

    __slots__ = ("default", "help", "metavar", "required", "variadic")

    def __init__(
        self,
        *,
        help: str,
        metavar: str | None = None,
        required: bool = True,
        variadic: bool = False,
    ) -> None:
        self.help = help
        self.metavar = metavar
        self.required = required and not variadic
        self.variadic = variadic
        self.default = None


Param = Option | Argument


class Command:
    """A declared command: its parameters, its function and its text renderer.

    ``fn(g, **values)`` returns a Result, printed through the one boundary; a
    command that prints by itself and serves until stopped (``mcp``, ``workbench``,
    ``help``) is declared with ``own_output=True`` and returns its exit code.
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        params: dict[str, Param],
        *,
        render: TextRenderer | None = None,
        own_output: bool = False,
    ) -> None:
        self.fn = fn
        self.params = params
        self.render = render
        self.own_output = own_output
        self.help = fn.__doc__ or ""
        self.options = {name: p for name, p in params.items() if isinstance(p, Option)}
        self.arguments = {name: p for name, p in params.items() if isinstance(p, Argument)}

    def execute(self, g: Globals, values: dict[str, Any]) -> int:
        """Run with parsed ``values`` (from either parser); return the exit code."""
        if self.own_output:
            return int(self.fn(g, **values))
        from dcx.cli._answer import answer

        return answer(g, values.get("fmt", "text"), lambda g: self.fn(g, **values), self.render)

    def parse(self, args: Sequence[str]) -> dict[str, Any] | None:
        """The values of ``args``, as click would parse them, or None: the typer app answers."""
        found = _scan(self.options, args, interspersed=True)
        if found is None:
            return None
        given, positional = found
        values = _arguments(self.arguments, positional)
        if values is None:
            return None
        for name, option in self.options.items():
            value = _value(option, given.get(name, _UNSET))
            if value is _UNSET:
                return None
            values[name] = value
        return values


def declare(
    *, render: TextRenderer | None = None, own_output: bool = False, **params: Param
) -> Callable[[Callable[..., Any]], Command]:
    """Declare the decorated function as a command with these parameters (in --help order)."""

    def make(fn: Callable[..., Any]) -> Command:
        return Command(fn, params, render=render, own_output=own_output)

    return make


class Group:
    """A command of commands (``dcx ext install``): its help and its subcommands, in order."""

    def __init__(self, help: str) -> None:
        self.help = help
        self.commands: dict[str, Command] = {}

    def command(
        self, name: str, *, render: TextRenderer | None = None, **params: Param
    ) -> Callable[[Callable[..., Any]], Command]:
        def declare(fn: Callable[..., Any]) -> Command:
            self.commands[name] = Command(fn, params, render=render)
            return self.commands[name]

        return declare


def parse_globals(
    options: dict[str, Option], args: Sequence[str]
) -> tuple[dict[str, Any], list[str]] | None:
    """Options before the subcommand (as in git), and the rest from the subcommand on; or None."""
    found = _scan(options, args, interspersed=False)
    if found is None:
        return None
    given, rest = found
    values = {}
    for name, option in options.items():
        value = _value(option, given.get(name, _UNSET))
        if value is _UNSET:
            return None
        values[name] = value
    return values, rest


def _scan(
    options: dict[str, Option], args: Sequence[str], *, interspersed: bool
) -> tuple[dict[str, Any], list[str]] | None:
    """Click's option parsing of ``args``: the raw value(s) of each option given, and the positionals.

    Without ``interspersed`` (a group) the first positional ends the options and it and
    everything after it are returned as they are. None for anything click would refuse
    or answer itself (``--help``).
    """
    by_flag = {flag: name for name, option in options.items() for flag in option.flags}
    given: dict[str, Any] = {}
    positional: list[str] = []
    rest = list(args)

    def take(name: str, value: str | None) -> None:
        option = options[name]
        if option.count:
            given[name] = given.get(name, 0) + 1
        elif option.is_flag:
            given[name] = True
        elif option.multiple:
            given.setdefault(name, []).append(value)
        else:
            given[name] = value  # the last one given wins, as in click

    while rest:
        arg = rest.pop(0)
        if arg == "--":
            if not interspersed:
                return None  # `dcx -- log`: the typer app's reading
            positional.extend(rest)
            break
        if arg[:1] != "-" or arg == "-":
            if not interspersed:
                return given, [arg, *rest]
            positional.append(arg)
            continue
        if arg.startswith("--"):
            flag, eq, inline = arg.partition("=")
            name = by_flag.get(flag)
            if name is None:
                return None  # --help, an unknown option
            if options[name].is_flag:
                if eq:
                    return None  # a flag given a value
                take(name, None)
            elif eq:
                take(name, inline)
            elif rest:
                take(name, rest.pop(0))
            else:
                return None
            continue
        for index in range(1, len(arg)):  # -X value, -Xvalue, -vv
            name = by_flag.get("-" + arg[index])
            if name is None:
                return None  # -h, an unknown option
            if options[name].is_flag:
                take(name, None)
                continue
            attached = arg[index + 1 :]
            if attached:
                take(name, attached)
            elif rest:
                take(name, rest.pop(0))
            else:
                return None
            break
    if not interspersed:
        return given, []
    return given, positional


def _arguments(arguments: dict[str, Argument], positional: list[str]) -> dict[str, Any] | None:
    values: dict[str, Any] = {}
    left = list(positional)
    for name, argument in arguments.items():
        if argument.variadic:
            values[name] = left or None
            left = []
        elif left:
            values[name] = left.pop(0)
        elif argument.required:
            return None  # click's "Missing argument"
        else:
            values[name] = argument.default
    return None if left else values  # an extra argument: click's error


def _value(option: Option, raw: Any) -> Any:
    """The option's value from what was given, else its environment variable, else its default."""
    if raw is _UNSET and option.envvar:
        env = os.environ.get(option.envvar)
        if env:  # click ignores an empty variable
            raw = env.split() if option.multiple else env
    if raw is _UNSET:
        return _UNSET if option.required else option.default
    if option.is_flag:
        return raw
    try:
        if option.multiple:
            return [option.convert(text) for text in raw]
        return option.convert(raw)
    except ValueError:  # click's "Invalid value": the typer app says it
        return _UNSET
