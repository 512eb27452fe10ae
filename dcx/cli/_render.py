"""The only printer: rich for people at a terminal, plain text when piped, JSON for machines (SPEC §3.6).

Terminal safety (SPEC §3.4.1) lives here and in ``dcx.cli._layout``: every
string of a Result's data, every warning and every error message is passed
through :func:`dcx.core.terminal.visible` before a view sees it, and no
writer reads rich markup or emoji codes in text. A view fills a
``_layout.Page``; :func:`emit` writes it with rich on a terminal and plainly
otherwise.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn

from dcx.cli._layout import Page, is_terminal, styled, wants_colour, write_plain, write_rich
from dcx.core.errors import DcxError
from dcx.core.result import Result
from dcx.core.terminal import json_safe, visible, visible_data

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["TextRenderer", "console", "dumps", "emit", "emit_error", "styled"]

TextRenderer = Callable[[Page, Result], None]


def dumps(value: Any) -> str:
    from dcx.core.canonical import pretty_json  # json.dumps(indent=2, sort_keys=True, ...)

    return json_safe(pretty_json(value)) + "\n"


def console(*, stderr: bool = False, no_color: bool = False) -> Console:
    """A rich console for a terminal (stdout, or stderr for progress bars): its width, no markup."""
    import os

    from rich.console import Console

    return Console(
        stderr=stderr,
        no_color=no_color or bool(os.environ.get("NO_COLOR")),
        markup=False,
        emoji=False,
        highlight=False,
        soft_wrap=False,
    )


def emit(result: Result, fmt: str, render: TextRenderer | None, *, no_color: bool = False) -> None:
    try:
        _write(result, fmt, render, no_color)
    except BrokenPipeError:
        _reader_left(int(result.exit_code))
    if fmt != "json" and result.warnings:
        sys.stderr.write("".join(f"warning: {visible(warning)}\n" for warning in result.warnings))
        sys.stderr.flush()


def _write(result: Result, fmt: str, render: TextRenderer | None, no_color: bool) -> None:
    if fmt == "json":
        if result.raw_json is not None:
            sys.stdout.buffer.write(result.raw_json)
        else:
            sys.stdout.write(dumps(result.envelope()))
        sys.stdout.flush()
        return
    safe = Result(
        result.command,
        visible_data(result.data),
        result.status,
        result.warnings,
        result.exit_code,
        text_only=visible_data(result.text_only),
    )
    terminal = is_terminal(sys.stdout)
    page = Page(terminal=terminal, colour=wants_colour(no_color))
    if render is not None:
        render(page, safe)
    else:
        page.write(dumps(safe.data))
    if terminal and any(block[0] != "raw" for block in page.blocks):
        write_rich(page, console(no_color=no_color))
    else:
        write_plain(page, sys.stdout)
    sys.stdout.flush()


def _reader_left(code: int) -> NoReturn:
    """The reader left (`dcx log | head -1`): end quietly, with the command's own code (0 unless
    it found problems, as verify does; an error's own code), never a refusal of its own."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())  # the interpreter's last flush must not fail again
    raise SystemExit(code) from None


def emit_error(exc: DcxError, fmt: str) -> None:
    if fmt == "json":
        try:
            sys.stdout.write(dumps(exc.envelope()))
            sys.stdout.flush()
        except BrokenPipeError:
            _reader_left(int(exc.exit_code))
        return
    lines = [f"error: {visible(exc.message)}"]
    if exc.hint:
        lines.append(f"hint: {visible(exc.hint)}")
    sys.stderr.write("\n".join(lines) + "\n")
