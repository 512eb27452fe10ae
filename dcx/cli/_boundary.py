"""The error boundary: DcxError → one line (or the JSON error) + its exit code.

Unexpected exceptions become exit 5 with one line; the traceback goes to
``private/log/`` (and to stderr only with ``-v`` or DCX_SHOW_TRACEBACK=1).
Exception text is never printed: it may carry private values.
"""

from __future__ import annotations

import os
import secrets
import sys
import traceback
from collections.abc import Callable
from datetime import UTC, datetime

import typer

from dcx.cli._options import Globals, globals_of
from dcx.cli._render import TextRenderer, emit, emit_error
from dcx.errors import DcxError, ExitCode, InternalError
from dcx.result import Result


def _log_internal(g: Globals, exc: BaseException) -> str | None:
    """Write the traceback to private/log/; return the log's relative path, if one was written."""
    try:
        ws = g.ws()
        from dcx.fsutil import ensure_dir

        ensure_dir(ws.log_dir)
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        path = ws.log_dir / f"internal-{stamp}-{secrets.token_hex(3)}.log"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write("".join(traceback.format_exception(exc)))
        return ws.rel(path)
    except Exception:
        return None


def show_traceback(g: Globals) -> bool:
    return g.verbose > 0 or os.environ.get("DCX_SHOW_TRACEBACK") == "1"


def run(
    ctx: typer.Context,
    fmt: str,
    call: Callable[[Globals], Result],
    render: TextRenderer | None = None,
) -> None:
    g = globals_of(ctx)
    fmt = getattr(fmt, "value", fmt)
    try:
        result = call(g)
    except DcxError as exc:
        if show_traceback(g):
            traceback.print_exc(file=sys.stderr)
        emit_error(exc, fmt)
        raise typer.Exit(int(exc.exit_code)) from None
    except KeyboardInterrupt:
        emit_error(DcxError("interrupted", code="interrupted"), fmt)
        raise typer.Exit(int(ExitCode.INTERRUPTED)) from None
    except Exception as exc:
        where = _log_internal(g, exc)
        if show_traceback(g):
            traceback.print_exc(file=sys.stderr)
        hint = f"the traceback is in {where}" if where else "rerun with -v to see the traceback"
        emit_error(InternalError(f"internal error ({type(exc).__name__})", hint=hint), fmt)
        raise typer.Exit(int(ExitCode.INTERNAL)) from None
    emit(result, fmt, render, no_color=g.no_color)
    if result.exit_code:
        raise typer.Exit(int(result.exit_code))
