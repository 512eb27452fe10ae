"""One declaration per command (dcx/cli/_declare.py): the typer app, the fast parse and the docs agree.

Oracles: click's own command tree as typer builds it from the declarations (its
params, and its parse of an argv), and docs/commands.md as written by hand.
"""

from __future__ import annotations

import inspect
import re
from importlib import import_module
from pathlib import Path
from typing import Any

import pytest
import typer.main
from hypothesis import given, settings
from hypothesis import strategies as st

from dcx.cli import COMMANDS
from dcx.cli._declare import Argument, Command, Group, Option, parse_globals
from dcx.cli._options import AGENT, FORMAT, GLOBALS, OBSERVED_AT, WAIT
from dcx.cli.app import build_app

DOCS = Path(__file__).resolve().parents[2] / "docs" / "commands.md"
SHARED = (FORMAT, AGENT, OBSERVED_AT, WAIT)  # documented once, at the top of commands.md


def declared() -> dict[str, Command]:
    out: dict[str, Command] = {}
    for name in COMMANDS:
        module = import_module(f"dcx.cli.{name}")
        group: Group | None = getattr(module, "group", None)
        if group is None:
            out[name] = module.command
        else:
            out.update({f"{name} {sub}": cmd for sub, cmd in group.commands.items()})
    return out


DECLARED = declared()
ROOT = typer.main.get_command(build_app())


def click_command(path: str) -> Any:
    command = ROOT
    for name in path.split():
        command = command.commands[name]
    return command


def test_every_module_declares_its_commands_and_the_app_has_exactly_them() -> None:
    in_app = {
        f"{name} {sub}" if hasattr(cmd, "commands") else name
        for name, cmd in ROOT.commands.items()
        for sub in (getattr(cmd, "commands", None) or [""])
    }
    assert {path.strip() for path in in_app} == set(DECLARED)


@pytest.mark.parametrize("path", sorted(DECLARED))
def test_the_typer_command_is_made_of_the_declaration(path: str) -> None:
    command, cmd = DECLARED[path], click_command(path)
    params = {p.name: p for p in cmd.params if p.name != "help"}
    assert list(params) == list(command.params)
    assert cmd.help == inspect.cleandoc(command.help)
    for name, want in command.params.items():
        got = params[name]
        assert got.help == want.help, name
        if isinstance(want, Argument):
            assert got.param_type_name == "argument", name
            assert got.required == want.required, name
            assert (got.nargs == -1) == want.variadic, name
            continue
        assert got.param_type_name == "option", name
        assert tuple(got.opts) == want.flags, name
        assert got.required == want.required, name
        assert got.multiple == want.multiple, name
        assert got.envvar == want.envvar, name
        assert bool(getattr(got, "count", False)) == want.count, name
        assert bool(getattr(got, "is_flag", False)) == (want.type is bool), name
        if want.choices:
            assert tuple(got.type.choices) == want.choices, name
        elif not want.is_flag:
            assert got.metavar == (want.metavar or "VALUE"), name
        if not want.required:
            default = getattr(got.default, "value", got.default)
            assert default == (() if want.multiple and default == () else want.default), name


def _sections() -> dict[str, str]:
    """``## dcx <name>`` sections of commands.md, by name."""
    text = DOCS.read_text()
    parts = re.split(r"^## dcx ([a-z]+)\s*$", text, flags=re.M)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts), 2)}


@pytest.mark.parametrize("path", sorted(DECLARED))
def test_every_option_is_documented_in_its_command_s_section(path: str) -> None:
    sections = _sections()
    top = path.split()[0]
    assert top in sections, f"docs/commands.md has no `## dcx {top}`"
    text = sections[top]
    for option in DECLARED[path].options.values():
        if option in SHARED:
            continue
        long = next(flag for flag in option.flags if flag.startswith("--"))
        assert long in text, f"docs/commands.md, dcx {top}: {long} is not documented"


def test_the_global_and_shared_options_are_documented_at_the_top() -> None:
    head = DOCS.read_text().split("\n## ", 1)[0]
    for option in (*GLOBALS.values(), *SHARED):
        for flag in option.flags:
            assert flag in head, flag
        if option.envvar:
            assert option.envvar in head, option.envvar


# -- the fast parse reads an argv as click does -----------------------------------------


def _plain(value: Any) -> Any:
    value = getattr(value, "value", value)  # typer's Enum of the choices
    if isinstance(value, tuple | list):
        return list(value) or None
    return value


def click_values(path: str, args: list[str], env: dict[str, str]) -> dict[str, Any] | None:
    """What click parses ``args`` of ``dcx <path>`` to, or None when it refuses them."""
    cmd = click_command(path)
    try:
        ctx = cmd.make_context(path.split()[-1], list(args), resilient_parsing=False)
    except (typer.Exit, Exception):
        return None
    return {name: _plain(value) for name, value in ctx.params.items()}


def _tokens(command: Command) -> st.SearchStrategy[list[str]]:
    """Argv made of the command's own flags, odd values and a few things click refuses."""
    flags = [f for option in command.options.values() for f in option.flags]
    words = st.sampled_from(
        ["", "-", "x", "0", "1", "2.5", "-1", "json", "JSON", "text", "yaml", "--", "a=b", "nan"]
    )
    flag_tokens = st.sampled_from(flags) if flags else st.nothing()
    inline = st.builds(lambda f, w: f"{f}={w}", flag_tokens, words) if flags else st.nothing()
    odd = st.sampled_from(["--nope", "-z", "--help", "-h"])
    return st.lists(st.one_of(flag_tokens, inline, words, odd), max_size=7)


@pytest.mark.parametrize("path", sorted(DECLARED))
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_the_fast_parse_agrees_with_click(path: str, data: st.DataObject, monkeypatch) -> None:
    command = DECLARED[path]
    args = data.draw(_tokens(command))
    env = data.draw(st.sampled_from([{}, {"DCX_FORMAT": "JSON"}, {"DCX_FORMAT": "nope"}]))
    with monkeypatch.context() as patch:
        patch.delenv("DCX_FORMAT", raising=False)
        patch.delenv("DCX_AGENT_ID", raising=False)
        for name, value in env.items():
            patch.setenv(name, value)
        fast = command.parse(args)
        slow = click_values(path, args, env)
    if fast is not None:  # whatever the fast parse answers, click answers the same
        assert slow is not None, args
        # repr: a NaN given as a number equals itself
        assert repr(sorted(slow.items())) == repr(sorted(fast.items())), args
    elif slow is not None:  # the fast parse leaves to typer only what it cannot read
        assert any(a == "--" or (a.startswith("-") and not a.startswith("--")) for a in args), args


def test_global_options_parse_as_click_s() -> None:
    cases = [
        (["-C", "p", "log"], {"workspace": "p"}, ["log"]),
        (["-Cp", "--no-color", "-v", "-v", "log", "-v"], {"workspace": "p", "verbose": 2}, None),
        (["--workspace=p", "status"], {"workspace": "p"}, ["status"]),
        (["-vv", "log"], {"verbose": 2}, ["log"]),
        (["--version", "log"], {"version": True}, ["log"]),
    ]
    for args, expected, rest in cases:
        parsed = parse_globals(GLOBALS, args)
        assert parsed is not None, args
        values, after = parsed
        for name, value in expected.items():
            assert values[name] == value, args
        ctx = ROOT.make_context("dcx", list(args), resilient_parsing=True)  # no --version exit
        for name, value in expected.items():
            assert name == "version" or ctx.params[name] == value, args
        assert after == (rest if rest is not None else ["log", "-v"])
    for refused in (["--nope", "log"], ["-C"], ["--no-color=1", "log"], ["-h"]):
        assert parse_globals(GLOBALS, refused) is None, refused


def test_an_option_declared_once_is_one_object_wherever_it_is_shared() -> None:
    by_flag: dict[str, set[int]] = {}
    for command in DECLARED.values():
        for option in command.options.values():
            if option in SHARED:
                by_flag.setdefault(option.flags[0], set()).add(id(option))
    assert all(len(ids) == 1 for ids in by_flag.values()), by_flag
    assert isinstance(FORMAT, Option)
