"""The only printer: rich for people, JSON for machines (SPEC §3.6).

Terminal safety (SPEC §3.4.1) lives here, in one place: every string of a
Result's data, every warning and every error message is passed through
:func:`dcx.core.terminal.visible` before a view sees it, and the consoles never
read rich markup or emoji codes in text. dcx's own styling is written as
:func:`styled` templates whose values are escaped, so a planted ``[bold]``
or ``:warning:`` prints as itself.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable

from dcx.core.errors import DcxError
from dcx.core.result import Result
from dcx.core.terminal import json_safe, visible, visible_data

TYPE_CHECKING = False  # typing stays unimported at run time (~16 M instructions; issue 18)
if TYPE_CHECKING:
    from typing import Any

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

TextRenderer = Callable[["Console", Result], None]


def dumps(value: Any) -> str:
    from dcx.core.canonical import pretty_json  # json.dumps(indent=2, sort_keys=True, ...)

    return json_safe(pretty_json(value)) + "\n"


def styled(template: str, *values: Any) -> Text:
    """dcx's own rich markup in ``template``; each ``{}`` value made visible and markup-escaped.

    For a view printed by ``_plain.PlainConsole`` (piped, no rich): the plain text rich would print.
    """
    from dcx.cli import _plain

    if _plain.plain_mode.get():
        return _plain.styled_plain(template, [visible(str(v)) for v in values])  # type: ignore[return-value]
    from rich.markup import escape
    from rich.text import Text

    return Text.from_markup(
        template.format(*(escape(visible(str(v))) for v in values)), emoji=False
    )


# Piped output is never hard-wrapped: one logical line stays one line, and a
# table takes its natural width (up to this) instead of the 80 columns rich assumes.
PIPED_WIDTH = 400


def console(*, stderr: bool = False, no_color: bool = False) -> Console:
    """A console for people: on a terminal, its width; piped, soft-wrapped and wide.

    ``COLUMNS`` still sets the width when it is given (tests pin it), but piped
    text is soft-wrapped at any width.
    """
    from rich.console import Console

    out = Console(
        stderr=stderr,
        no_color=no_color or bool(os.environ.get("NO_COLOR")),
        markup=False,
        emoji=False,
        highlight=False,
        soft_wrap=False,
    )
    if not out.is_terminal:
        out.soft_wrap = True
        if not os.environ.get("COLUMNS"):
            out.width = PIPED_WIDTH
    return out


def emit(result: Result, fmt: str, render: TextRenderer | None, *, no_color: bool = False) -> None:
    if fmt == "json":
        if result.raw_json is not None:
            sys.stdout.buffer.write(result.raw_json)
            sys.stdout.flush()
        else:
            sys.stdout.write(dumps(result.envelope()))
        return
    from dcx.cli._plain import pipe_width, render_plain

    safe = Result(
        result.command, visible_data(result.data), result.status, result.warnings, result.exit_code
    )
    if render is None or not render_plain(render, safe, sys.stdout):  # piped simple views: no rich
        out = console(no_color=no_color)
        if render is not None:
            render(out, safe)
        else:
            out.print_json(json.dumps(safe.data))
    if result.warnings and pipe_width(sys.stderr) is not None:
        sys.stderr.write("".join(f"warning: {visible(warning)}\n" for warning in result.warnings))
        sys.stderr.flush()
    elif result.warnings:
        err = console(stderr=True, no_color=no_color)
        for warning in result.warnings:
            err.print(f"warning: {visible(warning)}", markup=False)


def emit_error(exc: DcxError, fmt: str) -> None:
    if fmt == "json":
        sys.stdout.write(dumps(exc.envelope()))
        return
    lines = [f"error: {visible(exc.message)}"]
    if exc.hint:
        lines.append(f"hint: {visible(exc.hint)}")
    sys.stderr.write("\n".join(lines) + "\n")
