"""Fast paths that answer without importing typer (and rich only for text output).

Only argv shapes this module fully understands are answered here; anything
else (``--help``, ``--reveal``, ``--repair``, ``--write``, unknown flags or
values the typer app would refuse) returns None and falls through to the
typer app, which implements the same commands. The read-only commands
(``log``, ``show``, ``verify``, ``sources``) call the same ops functions,
print with the same renderers (``dcx.cli.readers``) and go through the same
error boundary (``dcx.cli._answer``) as their typer commands; tests compare
both paths byte for byte (tests/cli/test_fast_readers.py). ``scan`` parses
its own options (``dcx.cli.readers.scan``; tests/cli/test_fast_scan.py).
"""

from __future__ import annotations

import os
import sys


def try_fast(args: list[str]) -> int | None:
    parsed = _globals(args)
    if parsed is None:
        return None
    workspace, verbose, no_color, rest = parsed
    if rest == ["--version"]:
        from dcx import __version__

        sys.stdout.write(f"dcx {__version__}\n")
        return 0
    if rest[:1] == ["status"] and not verbose:
        return _status(workspace, no_color, rest[1:])
    if rest[:1] and rest[0] in READERS:
        return _reader(rest[0], rest[1:], workspace, verbose, no_color)
    if rest[:1] == ["scan"]:
        import gc

        gc.enable()  # a scan may hash a large tree for minutes: the collector stays on (dcx.cli)
        from dcx.cli.readers.scan import fast

        return fast(rest[1:], workspace, verbose, no_color)
    return None


def _globals(args: list[str]) -> tuple[str | None, int, bool, list[str]] | None:
    """Leading global options (as in git), or None for anything unexpected."""
    workspace = None
    verbose = 0
    no_color = False
    rest = list(args)
    while rest and rest[0].startswith("-") and rest[0] != "--version":
        flag = rest.pop(0)
        if flag in ("-C", "--workspace") and rest:
            workspace = rest.pop(0)
        elif flag.startswith("--workspace="):
            workspace = flag.split("=", 1)[1]
        elif flag == "--no-color":
            no_color = True
        elif flag in ("-v", "--verbose"):
            verbose += 1
        else:
            return None
    return workspace, verbose, no_color, rest


def _status(workspace: str | None, no_color: bool, rest: list[str]) -> int | None:
    agent = os.environ.get("DCX_AGENT_ID") or None
    fmt = os.environ.get("DCX_FORMAT", "text")
    rest = list(rest)
    while rest:
        flag = rest.pop(0)
        if flag == "--format" and rest:
            fmt = rest.pop(0)
        elif flag.startswith("--format="):
            fmt = flag.split("=", 1)[1]
        elif flag == "--agent-id" and rest:
            agent = rest.pop(0)
        elif flag.startswith("--agent-id="):
            agent = flag.split("=", 1)[1]
        else:
            return None
    fmt = fmt.lower()
    if fmt not in ("json", "text"):
        return None
    from dcx.cli._render import dumps, emit_error
    from dcx.core.errors import DcxError, ExitCode
    from dcx.core.public import bind_goal_root
    from dcx.core.workspace import find_workspace
    from dcx.ops.status import status

    try:
        ws = find_workspace(workspace)
        bind_goal_root(str(ws.root))
        result = status(ws=ws, agent_id=agent)
        from dcx.core.notices import drain

        result.warnings += drain()  # what it fixed on its own (a key's mode)
    except DcxError as exc:  # the one renderer of errors, as the typer commands use it
        emit_error(exc, fmt)
        return int(exc.exit_code)
    except KeyboardInterrupt:
        emit_error(DcxError("interrupted", code="interrupted"), fmt)
        return int(ExitCode.INTERRUPTED)
    except Exception:  # fall through: the full app logs an internal error properly
        return None
    if fmt == "json":
        sys.stdout.write(dumps(result.envelope()))
    else:
        from dcx.cli._status_text import format_status, terminal_width, use_colour

        sys.stdout.write(
            format_status(result.data, colour=use_colour(no_color), width=terminal_width())
        )
    return int(result.exit_code)


# Options of each read-only command the fast path understands: option -> keyword,
# and for each keyword a check of its value (None = fall through to typer).
READERS: dict[str, dict[str, str]] = {
    "log": {"--decision-id": "decision_id", "--limit": "limit"},
    "show": {},
    "verify": {"--wait": "wait"},
    "sources": {},
}


def _positive_int(text: str) -> int | None:
    return int(text) if text.isascii() and text.isdigit() and int(text) >= 1 else None


def _seconds(text: str) -> float | None:
    whole, _, frac = text.partition(".")
    ok = text.isascii() and whole.isdigit() and (not frac or frac.isdigit()) and text[-1:] != "."
    return float(text) if ok else None


def _plain(text: str) -> str | None:
    return text if text and not text.startswith("-") else None


CHECKS = {"decision_id": _plain, "limit": _positive_int, "wait": _seconds}


def _reader(
    verb: str, rest: list[str], workspace: str | None, verbose: int, no_color: bool
) -> int | None:
    """``dcx log|show|verify|sources`` with their common options, or None (typer answers)."""
    options = READERS[verb]
    fmt = os.environ.get("DCX_FORMAT", "text")
    values: dict[str, object] = {}
    positional: list[str] = []
    rest = list(rest)
    while rest:
        arg = rest.pop(0)
        name, eq, inline = arg.partition("=")
        if arg.startswith("--") and name in (*options, "--format"):
            if eq:
                value = inline
            elif rest:
                value = rest.pop(0)
            else:
                return None
            if name == "--format":
                fmt = value
                continue
            key = options[name]
            checked = CHECKS[key](value)
            if checked is None:
                return None
            values[key] = checked
        elif arg.startswith("-") or arg == "":
            return None  # --help, --reveal, --repair, --write, --, anything unknown
        else:
            positional.append(arg)
    fmt = fmt.lower()
    if fmt not in ("json", "text"):
        return None
    if verb == "show":
        if len(positional) != 1:
            return None
        values["ref"] = positional[0]
    elif positional:
        return None

    from dcx.cli._answer import answer
    from dcx.cli._globals import Globals

    call, render = _CALLS[verb](values)
    return answer(
        Globals(workspace=workspace, verbose=verbose, no_color=no_color), fmt, call, render
    )


def _log(values):
    from dcx.cli.readers.log import render

    def call(g):
        from dcx.ops.log import log

        return log(ws=g.ws(), decision_id=values.get("decision_id"), limit=values.get("limit"))

    return call, render


def _show(values):
    from dcx.cli.readers.show import render

    def call(g):
        from dcx.ops.show import show

        return show(ws=g.ws(), ref=values["ref"], reveal_refs=False)

    return call, render


def _verify(values):
    from dcx.cli.readers.verify import render

    def call(g):
        from dcx.ops.verify import verify

        return verify(ws=g.ws(), repair=False, wait=values.get("wait", 5.0))

    return call, render


def _sources(values):
    from dcx.cli.readers.sources import render

    def call(g):
        from dcx.ops.sources import sources

        return sources(ws=g.ws(), write=False)

    return call, render


_CALLS = {"log": _log, "show": _show, "verify": _verify, "sources": _sources}
