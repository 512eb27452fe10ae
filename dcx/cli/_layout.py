"""dcx's one layout model for text output: a view fills a :class:`Page` with blocks.

A view (``render(page, result)``) says *what* to show — lines of styled
spans, grids of cells, tables under a header, a boxed verdict, a rule, text
already laid out — and never how wide the screen is. The page is then
written once, by one of two writers:

- on a terminal, rich lays the blocks out at the terminal's width, with
  colour (``write_rich``): it wraps prose, folds a table that does not fit,
  and below ``NARROW`` columns prints a table one record per block;
- piped or redirected, each block is written plainly (``write_plain``): no
  colour, no wrapping, columns padded to their widest cell, no trailing
  spaces, so a ref is never split and ``grep``/``cut`` see whole lines.

Terminal safety (SPEC §3.4.1): nothing here reads markup. dcx's own styling
is written as :func:`styled` templates, parsed from dcx's constant template
only; the values put into them are spans of their own, made visible
(``dcx.core.terminal.visible``) and never parsed, so a planted ``[bold]`` or
an escape sequence prints as itself. Every span is made visible again as it
is written.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, TextIO

from dcx.core.terminal import visible

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

# A style tag of dcx's templates: words of rich's style grammar (``bold``, ``dim red``), or ``[/]``.
_TAG = re.compile(r"\[(/|(?:bold|dim|italic|red|green|yellow|blue|cyan|magenta)(?: [a-z]+)*)\]")

# Below this many terminal columns, a table of several columns prints one record per block.
NARROW = 48
# Columns of free text never get narrower than this on a terminal, if they can help it.
PROSE_MIN = 24


class Styled:
    """Text as spans of (text, style); ``str(styled)`` is its plain text."""

    __slots__ = ("spans",)

    def __init__(self, spans: Sequence[tuple[str, str]]) -> None:
        self.spans = tuple(spans)

    def __str__(self) -> str:
        return "".join(text for text, _ in self.spans)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Styled) and other.spans == self.spans

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Styled({self.spans!r})"


Cell = str | Styled


def styled(template: str, *values: Any) -> Styled:
    """dcx's styling in ``template`` (``"[bold]{}[/] {}"``); each ``{}`` is a value, made visible.

    Only ``{}`` placeholders: the values are never formatted into the template's
    text, so nothing in a value is read as a tag.
    """
    spans: list[tuple[str, str]] = []
    style = ""
    given = iter(values)
    pos = 0
    for match in (*_TAG.finditer(template), None):
        end = match.start() if match else len(template)
        chunks = template[pos:end].split("{}")
        for index, chunk in enumerate(chunks):
            if index:
                spans.append((visible(str(next(given))), style))
            if chunk:
                spans.append((chunk, style))
        if match is None:
            break
        style = "" if match.group(1) == "/" else match.group(1)
        pos = match.end()
    return Styled([span for span in spans if span[0]])


def _spans(parts: Iterable[Cell], style: str = "") -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for part in parts:
        if isinstance(part, Styled):
            out.extend((text, " ".join(s for s in (style, own) if s)) for text, own in part.spans)
        elif part:
            out.append((str(part), style))
    return out


class Page:
    """The blocks a view produces, in order; written by :func:`write_plain` or :func:`write_rich`.

    ``terminal`` and ``colour`` say where the page will go, for the few views
    that lay out text of their own (``dcx status``).
    """

    def __init__(self, *, terminal: bool = False, colour: bool = False) -> None:
        self.terminal = terminal
        self.colour = colour
        self.blocks: list[tuple[Any, ...]] = []

    def line(self, *parts: Cell, style: str = "") -> None:
        """One line of text (prose: wrapped on a terminal at word breaks, never when piped)."""
        self.blocks.append(("line", _spans(parts, style)))

    def blank(self) -> None:
        self.blocks.append(("line", []))

    def block(self, text: str) -> None:
        """Content as it is (newlines and tabs kept): file content, recalled text."""
        self.blocks.append(("block", visible(text, block=True)))

    def grid(
        self,
        rows: Sequence[Sequence[Cell]],
        *,
        styles: Sequence[str] = (),
        min_widths: Sequence[int] = (),
        gap: int = 1,
    ) -> None:
        """Cells in columns without a header; every column but the last stays whole."""
        if rows:
            self.blocks.append(("grid", [list(row) for row in rows], styles, min_widths, gap))

    def table(
        self,
        columns: Sequence[str],
        rows: Sequence[Sequence[Cell | None]],
        *,
        styles: dict[str, str] | None = None,
        right: Sequence[int] = (),
    ) -> None:
        """Rows under a header; ``styles`` colours a column's cells, ``right`` aligns columns right.

        On a terminal, columns of single tokens (refs, ids, codes, times) never
        wrap when the table fits, prose columns wrap; a table that does not fit
        folds every cell rather than cutting one. Piped, it takes its natural width.
        """
        cells = [["-" if cell is None else cell for cell in row] for row in rows]
        self.blocks.append(("table", list(columns), cells, styles or {}, tuple(right)))

    def panel(self, text: str, style: str = "") -> None:
        """A verdict: boxed on a terminal, its lines as they are when piped."""
        self.blocks.append(("panel", visible(text, block=True), style))

    def rule(self, title: str) -> None:
        """A dim separator titled ``title``."""
        self.blocks.append(("rule", visible(title)))

    def write(self, text: str) -> None:
        """Text the view laid out itself, written as it is (``dcx status``, ``dcx key export``)."""
        self.blocks.append(("raw", text))


# -- piped: plain text ---------------------------------------------------------------


def _plain(cell: Cell) -> str:
    return visible(str(cell))


def _padded(rows: list[list[str]], gap: int, min_widths: Sequence[int] = ()) -> list[str]:
    """Rows of cells padded to their column's widest cell; the last cell is never padded."""
    count = max(len(row) for row in rows)
    widths = [max([0, *(len(row[i]) for row in rows if i < len(row))]) for i in range(count)]
    for index, least in enumerate(min_widths[:count]):
        widths[index] = max(widths[index], least)
    out = []
    for row in rows:
        text = (" " * gap).join(
            cell if i == len(row) - 1 else cell.ljust(widths[i]) for i, cell in enumerate(row)
        )
        out.append(text.rstrip(" "))
    return out


def _plain_block(kind: str, *args: Any) -> list[str]:
    """One block as plain lines (without their newlines)."""
    if kind == "line":
        return [visible("".join(text for text, _ in args[0]))]
    if kind in ("block", "panel"):
        return args[0].split("\n")
    if kind == "grid":
        rows, _, min_widths, gap = args
        return _padded([[_plain(c) for c in row] for row in rows], gap, min_widths)
    if kind == "table":
        columns, rows, _, right = args
        body = [list(columns), *([_plain(c) for c in row] for row in rows)]
        for i in right:  # right-aligned columns (and their header): padded to their width first
            width = max(len(row[i]) for row in body)
            for row in body:
                row[i] = row[i].rjust(width)
        lines = _padded(body, 2)
        return [lines[0], "─" * max(len(line) for line in lines), *lines[1:]]
    if kind == "rule":
        return [f"── {args[0]} ──"]
    return args[0].removesuffix("\n").split("\n")  # raw


def plain_text(page: Page) -> str:
    """The page as plain text; a raw block exactly as the view wrote it."""
    parts: list[str] = []
    for kind, *args in page.blocks:
        if kind == "raw":
            parts.append(args[0])
        else:
            parts.extend(line + "\n" for line in _plain_block(kind, *args))
    return "".join(parts)


def write_plain(page: Page, stream: TextIO) -> None:
    stream.write(plain_text(page))


# -- a terminal: rich ----------------------------------------------------------------


def _text(cell: Cell, style: str = "") -> Text:
    from rich.text import Text

    if isinstance(cell, Styled):
        return Text.assemble(*((visible(t), s) for t, s in cell.spans), style=style)
    return Text(_plain(cell), style=style)


def write_rich(page: Page, console: Console) -> None:
    """The page laid out by rich for ``console``'s width (a terminal)."""
    for kind, *args in page.blocks:
        if kind == "raw":
            console.file.write(args[0])
        elif kind == "line":
            console.print(_text(Styled(args[0])))
        elif kind == "block":
            from rich.text import Text

            console.print(Text(args[0]))
        elif kind == "grid":
            _rich_grid(console, *args)
        elif kind == "table":
            _rich_table(console, *args)
        elif kind == "panel":
            from rich.panel import Panel
            from rich.text import Text

            console.print(Panel(Text(args[0], style=args[1]), expand=False, padding=(0, 1)))
        elif kind == "rule":
            if console.width <= 100:
                console.rule(args[0], style="dim")
            else:  # a wide terminal: no 200-column rules
                console.print(_text(f"── {args[0]} ──", "dim"))


def _rich_grid(
    console: Console,
    rows: list[list[Cell]],
    styles: Sequence[str],
    min_widths: Sequence[int],
    gap: int,
) -> None:
    from rich.table import Table

    count = max(len(row) for row in rows)
    grid = Table.grid(padding=(0, gap))
    for index in range(count):
        last = index == count - 1
        grid.add_column(
            style=styles[index] if index < len(styles) else None,
            no_wrap=not last,
            overflow="fold" if last else "ellipsis",
            min_width=min_widths[index] if index < len(min_widths) else None,
        )
    for row in rows:
        grid.add_row(*(_text(cell) for cell in row))
    console.print(grid)


def _rich_table(
    console: Console,
    columns: list[str],
    rows: list[list[Cell]],
    styles: dict[str, str],
    right: tuple[int, ...],
) -> None:
    from rich import box
    from rich.table import Table

    cells = [[_plain(cell) for cell in row] for row in rows]
    indices = range(len(columns))

    def cell(i: int, row: int) -> Text:
        return _text(rows[row][i], styles.get(columns[i], ""))

    if len(columns) > 2 and console.width < NARROW:  # one record per block
        label = max(len(c) for c in columns)
        for number in range(len(cells)):
            if number:
                console.print()
            block = Table.grid(padding=(0, 2))
            block.add_column(style="dim", no_wrap=True, min_width=label)
            block.add_column(overflow="fold")
            for i in indices:
                block.add_row(columns[i], cell(i, number))
            console.print(block)
        return
    atomic = {i: all(" " not in row[i] and len(row[i]) <= 40 for row in cells) for i in indices}
    natural = {i: max([len(columns[i]), *(len(row[i]) for row in cells)]) for i in indices}
    # Keep tokens whole only when they fit beside a readable share of the prose;
    # on a narrow terminal everything folds rather than a column disappearing.
    needed = sum(natural[i] if atomic[i] else min(natural[i], PROSE_MIN) for i in indices)
    whole = needed + 2 * (len(columns) - 1) <= console.width
    out = Table(
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        expand=False,
        padding=(0, 1),
        collapse_padding=True,
    )
    for i in indices:
        out.add_column(
            columns[i],
            no_wrap=whole and atomic[i],
            overflow="fold",
            justify="right" if i in right else "left",
            min_width=None if atomic[i] else min(natural[i], PROSE_MIN),
        )
    for number in range(len(cells)):
        out.add_row(*(cell(i, number) for i in indices))
    console.print(out)


def is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def wants_colour(no_color: bool) -> bool:
    return not no_color and not os.environ.get("NO_COLOR") and is_terminal(sys.stdout)
