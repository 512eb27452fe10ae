"""What rich prints to a pipe, for the few calls the simple text views make, without importing rich.

Piped (not a terminal), dcx's consoles soft-wrap, print no colour and read no
markup (``_render.console``), so ``console.print(x)`` writes ``x``'s plain text
and a newline, a ``Table.grid`` that fits the width writes each row as its
cells padded to their column's width, and a ``Panel`` that fits writes its
rounded box around lines padded to the longest. :class:`PlainConsole` writes
exactly that for the views that declare ``render.plain = True`` (``dcx
verify``, ``dcx log``, ``dcx sources``, ``dcx show``'s packet views through
``views.common``'s ``grid``, ``banner`` and ``facts``): rich's import is most of
their cost (issue 18). Anything it is not sure to write as rich would (a grid
or box wider than the width, a character whose cell width is not 1, an empty
box, an object it does not know, a stream that is not UTF-8) raises
:class:`NeedRich` before a byte is written, and the view is rendered by rich
instead. ``tests/cli/test_plain_console.py`` compares the two outputs.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from contextvars import ContextVar

TYPE_CHECKING = False  # typing stays unimported at run time (~16 M instructions; issue 18)
if TYPE_CHECKING:
    from typing import Any, TextIO

PIPED_WIDTH = 400  # as _render.PIPED_WIDTH

# Characters whose terminal cell width is 1 (what rich measures grid cells in):
# printable ASCII and the few punctuation marks dcx's own views use. Sets, not
# regexes: compiling those cost more than the views they check (issue 18).
_NARROW = frozenset(map(chr, range(0x20, 0x7F))) | frozenset(
    "\u00a7\u00b7\u2013\u2014\u2018\u2019\u201c\u201d\u2026\u2190\u2192\u2713\u2717"
)
# dcx's own markup in styled() templates: a style tag (a colour or emphasis, then
# colours or bold/dim, one space apart) or the closing [/].
_FIRST = frozenset(
    (
        "bold",
        "dim",
        "italic",
        "underline",
        "red",
        "green",
        "yellow",
        "blue",
        "cyan",
        "magenta",
        "white",
    )
)
_LATER = _FIRST - {"italic", "underline"}


def single_width(text: str) -> bool:
    """Every character of ``text`` is one cell wide for rich (printable ASCII, or a listed mark)."""
    return _NARROW.issuperset(text)


def _is_tag(body: str) -> bool:
    if body == "/":
        return True
    words = body.split(" ")
    return words[0] in _FIRST and all(word in _LATER for word in words[1:])


def untagged(template: str) -> str:
    """``template`` without dcx's style tags (left to right, as ``re.sub`` of the tag pattern)."""
    out: list[str] = []
    pos = 0
    while (start := template.find("[", pos)) >= 0:
        end = template.find("]", start)
        if end < 0:
            break
        if _is_tag(template[start + 1 : end]):
            out.append(template[pos:start])
            pos = end + 1
        else:
            out.append(template[pos : start + 1])
            pos = start + 1
    out.append(template[pos:])
    return "".join(out)


plain_mode: ContextVar[bool] = ContextVar("dcx_plain_console", default=False)


class NeedRich(Exception):
    """This view (or this width) needs rich's layout: render it with rich."""


class Plain(str):
    """A styled() template with its style tags dropped: the text rich would print."""


def styled_plain(template: str, values: Sequence[str]) -> Plain:
    bare = untagged(template)
    if "[" in bare or "]" in bare or any("\\" in value for value in values):
        raise NeedRich  # a bracket that is not one of dcx's tags, or a backslash: markup escaping applies
    return Plain(bare.format(*values))


def pipe_width(stream: TextIO) -> int | None:
    """The width rich would use for ``stream`` if it would treat it as a pipe, else None."""
    env = os.environ
    if any(
        name in env
        for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "JUPYTER_COLUMNS")
    ):
        return None
    try:
        if stream.isatty():
            return None
    except (AttributeError, ValueError):
        return None
    if not (getattr(stream, "encoding", None) or "utf-8").lower().startswith("utf"):
        return (
            None  # rich draws ASCII boxes (and cannot write "·") on such a stream: its own output
        )
    columns = env.get("COLUMNS")
    if columns is None or columns == "":
        return PIPED_WIDTH
    return int(columns) if columns.isdigit() and int(columns) > 0 else None


class PlainConsole:
    """The calls of rich's Console the plain views make; output is buffered until :meth:`flush`."""

    def __init__(self, width: int) -> None:
        self.width = width
        self.parts: list[str] = []

    def print(self, *objects: Any, **options: Any) -> None:
        # markup and highlighting are off on dcx's consoles, and a style prints nothing on a pipe;
        # any other option (end, sep, justify, width, ...) is rich's to honour
        if not options.keys() <= {"markup", "highlight", "style"}:
            raise NeedRich
        for item in objects:
            if type(item) not in (str, Plain):
                raise NeedRich
        self.parts.append(" ".join(objects) + "\n")

    def __getattr__(self, name: str) -> Any:
        raise NeedRich  # anything else of rich's Console (is_terminal, print_json, rule, ...)

    def grid(self, rows: Sequence[Sequence[str]], min_widths: Sequence[int], gap: int = 1) -> None:
        """``Table.grid(padding=(0, gap))`` of columns (each at least ``min_widths``), when it fits whole."""
        if not rows:
            return
        widths = list(min_widths)
        for row in rows:
            for index, cell in enumerate(row):
                if type(cell) not in (str, Plain) or not single_width(cell):
                    raise NeedRich
                widths[index] = max(widths[index], len(cell))
        if 0 in widths or sum(widths) + gap * (len(widths) - 1) > self.width:
            raise NeedRich  # an empty column or a grid rich would fold: its own layout
        for row in rows:
            self.parts.append(
                (" " * gap).join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
                + "\n"
            )

    def panel(self, text: str) -> None:
        """``Panel(Text(text), expand=False, padding=(0, 1))`` (rich's rounded box) when no line wraps."""
        if type(text) not in (str, Plain):
            raise NeedRich
        lines = text.split("\n")
        for line in lines:
            if not single_width(line):
                raise NeedRich
        inner = max(len(line) for line in lines)
        if inner == 0 or inner + 4 > self.width:
            raise NeedRich  # rich draws an empty box without body lines, and wraps a long line
        self.parts.append("\u256d" + "\u2500" * (inner + 2) + "\u256e\n")
        for line in lines:
            self.parts.append("\u2502 " + line.ljust(inner) + " \u2502\n")
        self.parts.append("\u2570" + "\u2500" * (inner + 2) + "\u256f\n")

    def table(self, headers: Sequence[str], rows: Sequence[Sequence[str]], *, narrow: int) -> None:
        """``views.common.grid``'s table (``box.SIMPLE_HEAD``, no edge, collapsed padding) when it fits whole."""
        if len(headers) > 2 and self.width < narrow:
            raise NeedRich  # one record per block: rich's layout
        widths = [len(h) for h in headers]
        for row in (headers, *rows):
            for index, cell in enumerate(row):
                if type(cell) not in (str, Plain) or not single_width(cell):
                    raise NeedRich
                widths[index] = max(widths[index], len(cell))
        total = sum(widths) + 2 * (len(widths) - 1)
        if total > self.width:
            raise NeedRich  # rich wraps or folds cells
        self.parts.append(
            "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)) + "\n"
        )
        self.parts.append("\u2500" * total + "\n")
        for row in rows:
            self.parts.append(
                "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + "\n"
            )

    def flush(self, stream: TextIO) -> None:
        try:
            stream.write("".join(self.parts))
            stream.flush()
        except BrokenPipeError:  # the reader left (`| head -1`): as rich's Console.on_broken_pipe
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            raise SystemExit(1) from None


def render_plain(render: Any, result: Any, stream: TextIO) -> bool:
    """Render ``result`` with ``render`` as plain text on ``stream``; False when rich is needed."""
    width = pipe_width(stream)
    if width is None or not getattr(render, "plain", False):
        return False
    out = PlainConsole(width)
    token = plain_mode.set(True)
    try:
        render(out, result)
    except NeedRich:
        return False
    finally:
        plain_mode.reset(token)
    out.flush(stream)
    return True
