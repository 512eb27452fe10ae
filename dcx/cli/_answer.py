"""The error boundary without typer: DcxError → one line (or the JSON error) + its exit code.

Unexpected exceptions become exit 5 with one line; the traceback goes to
``private/log/`` (and to stderr only with ``-v`` or DCX_SHOW_TRACEBACK=1).
Exception text is never printed: it may carry private values.

:func:`answer` returns the exit code; every declared command runs through it
(``dcx.cli._declare.Command.execute``), whichever parser read its options.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from dcx.cli._globals import Globals
from dcx.cli._render import TextRenderer, emit, emit_error
from dcx.core.errors import DcxError, ExitCode, InternalError
from dcx.core.result import Result


def _log_internal(g: Globals, exc: BaseException) -> str | None:
    """Write the traceback to private/log/; return the log's relative path, if one was written."""
    try:
        import secrets
        import traceback
        from datetime import UTC, datetime

        ws = g.ws()
        from dcx.core.fsutil import atomic_write

        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        path = ws.log_dir / f"internal-{stamp}-{secrets.token_hex(3)}.log"
        atomic_write(path, "".join(traceback.format_exception(exc)).encode(), mode=0o600)
        return ws.rel(path)
    except Exception:
        return None


def show_traceback(g: Globals) -> bool:
    return g.verbose > 0 or os.environ.get("DCX_SHOW_TRACEBACK") == "1"


def _print_traceback(g: Globals) -> None:
    if show_traceback(g):
        import traceback

        traceback.print_exc(file=sys.stderr)


def answer(
    g: Globals, fmt: str, call: Callable[[Globals], Result], render: TextRenderer | None = None
) -> int:
    """Run ``call``, print its result (or its error) in ``fmt``; return the exit code."""
    from dcx.core.notices import drain

    drain()  # one command, one list (an in-process caller runs many)
    try:
        result = call(g)
    except DcxError as exc:
        _print_traceback(g)
        emit_error(exc, fmt)
        return int(exc.exit_code)
    except KeyboardInterrupt:
        emit_error(DcxError("interrupted", code="interrupted"), fmt)
        return int(ExitCode.INTERRUPTED)
    except Exception as exc:
        where = _log_internal(g, exc)
        _print_traceback(g)
        hint = f"the traceback is in {where}" if where else "rerun with -v to see the traceback"
        emit_error(InternalError(f"internal error ({type(exc).__name__})", hint=hint), fmt)
        return int(ExitCode.INTERNAL)
    result.warnings += drain()  # what the command fixed on its own (a key's mode)
    emit(result, fmt, render, no_color=g.no_color)
    return int(result.exit_code)
