"""Fast paths that answer without importing typer or rich.

Only argv shapes this module fully understands are answered here; anything
else (``--help``, text output, unknown flags) returns None and falls through
to the typer app, which implements the same commands. Tests compare both.
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
    import json

    from dcx.errors import DcxError
    from dcx.ops.status import status
    from dcx.public import bind_goal_root
    from dcx.workspace import find_workspace

    try:
        ws = find_workspace(workspace)
        bind_goal_root(str(ws.root))
        result = status(ws=ws, agent_id=agent)
    except DcxError as exc:
        if fmt == "json":
            sys.stdout.write(json.dumps(exc.envelope(), indent=2, sort_keys=True, ensure_ascii=False) + "\n")
        else:
            from dcx.terminal import visible

            hint = f"\nhint: {visible(exc.hint)}" if exc.hint else ""
            sys.stderr.write(f"error: {visible(exc.message)}{hint}\n")
        return int(exc.exit_code)
    except KeyboardInterrupt:
        if fmt == "json":
            envelope = DcxError("interrupted", code="interrupted").envelope()
            sys.stdout.write(json.dumps(envelope, indent=2, sort_keys=True) + "\n")
        else:
            sys.stderr.write("error: interrupted\n")
        return 130
    except Exception:  # fall through: the full app logs an internal error properly
        return None
    if fmt == "json":
        sys.stdout.write(json.dumps(result.envelope(), indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    else:
        from dcx.cli._status_text import format_status, terminal_width, use_colour

        sys.stdout.write(format_status(result.data, colour=use_colour(no_color), width=terminal_width()))
    return int(result.exit_code)
