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
    workspace, verbose, rest = parsed
    if rest == ["--version"]:
        from dcx import __version__

        sys.stdout.write(f"dcx {__version__}\n")
        return 0
    if rest[:1] == ["status"] and not verbose:
        return _status_json(workspace, rest[1:])
    return None


def _globals(args: list[str]) -> tuple[str | None, int, list[str]] | None:
    """Leading global options (as in git), or None for anything unexpected."""
    workspace = None
    verbose = 0
    rest = list(args)
    while rest and rest[0].startswith("-") and rest[0] != "--version":
        flag = rest.pop(0)
        if flag in ("-C", "--workspace") and rest:
            workspace = rest.pop(0)
        elif flag.startswith("--workspace="):
            workspace = flag.split("=", 1)[1]
        elif flag == "--no-color":
            continue
        elif flag in ("-v", "--verbose"):
            verbose += 1
        else:
            return None
    return workspace, verbose, rest


def _status_json(workspace: str | None, rest: list[str]) -> int | None:
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
    if fmt.lower() != "json":
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
        sys.stdout.write(json.dumps(exc.envelope(), indent=2, sort_keys=True, ensure_ascii=False) + "\n")
        return int(exc.exit_code)
    except Exception:
        return None
    sys.stdout.write(json.dumps(result.envelope(), indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    return int(result.exit_code)
