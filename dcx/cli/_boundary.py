"""The error boundary of the typer commands: ``_answer.answer``, its exit code raised as typer.Exit.

The boundary itself (DcxError → one line or the JSON error, internal errors
→ exit 5 with the traceback in ``private/log/``) is typer-free, in
``dcx.cli._answer``, so the fast paths in ``dcx.cli._fast`` share it.
"""

from __future__ import annotations

from collections.abc import Callable

import typer

from dcx.cli._answer import _log_internal, answer, show_traceback
from dcx.cli._options import Globals, globals_of
from dcx.cli._render import TextRenderer
from dcx.core.result import Result

__all__ = ["_log_internal", "run", "show_traceback"]


def run(
    ctx: typer.Context,
    fmt: str,
    call: Callable[[Globals], Result],
    render: TextRenderer | None = None,
) -> None:
    code = answer(globals_of(ctx), getattr(fmt, "value", fmt), call, render)
    if code:
        raise typer.Exit(code)
