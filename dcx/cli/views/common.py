"""Building blocks of the packet views: header, facts grid, tables, short refs.

Views print opaque refs shortened the way git shortens hashes (prefix + 8
hex): every short ref is a unique prefix `dcx show` accepts, and the full
ones are in `dcx show REF --format json`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from dcx.cli._render import styled

TYPE_CHECKING = False  # typing stays unimported at run time (~16 M instructions; issue 18)
if TYPE_CHECKING:
    from typing import Any

if TYPE_CHECKING:
    from rich.console import Console

    from dcx.cli._plain import PlainConsole

# What a reason code means, in words a reviewer reads without the docs.
MEANING: dict[str, str] = {
    # claims (evidence)
    "stale_authority_revision": "the authority changed since this was recalled",
    "unverifiable_recall": "no readable authority confirms it",
    "recall_not_reproduced": "the agent cited a recall result this run did not return",
    "conversation_not_authority": "a conversation is never authority",
    # checkpoint dispositions
    "no_change": "nothing changed",
    "validated_rebase": "every changed item is accounted for",
    "semantic_no_change": "the agent stated nothing material changed",
    "baseline_adopted": "baseline: the current state is adopted whole",
    "rebase_incomplete": "a changed item is not cited by any fact, claim or conflict",
    "cursor_after_missing": "the scan proposed no new cursor",
    "scan_incomplete": "the scan did not complete",
    "exact_read_disabled": "the source's exact-read policy is never",
    "exact_read_incomplete": "a required exact read failed; retry later",
    "snapshot_not_committed": "snapshot sources are never committed",
    # feedback
    "outcome_not_verified": "the outcome is not verified yet",
    "outcome_not_candidate_eligible": "the outcome receipt is not candidate-eligible",
    "no_exact_read_promoted_claim": "no recalled claim was confirmed by exact read",
    "verified_outcome_not_linked_to_evidence": "no verified observed outcome cites this evidence",
    "unresolved_authority_conflict": "an authority conflict is still open",
    "no_current_source_revision": "no source revision is current",
}


PROSE_MIN = 24  # columns of free text never get narrower than this, if they can help it


def short(ref: str | None) -> str:
    """``prefix-<8 hex>``: a unique prefix for `dcx show`, like git's short hashes."""
    if not ref:
        return "-"
    prefix, _, hexpart = ref.rpartition("-")
    if not prefix or len(hexpart) < 16:
        return ref
    return f"{prefix}-{hexpart[:8]}"


def yes(value: Any) -> str:
    return "yes" if value else "no"


def plural(count: int, word: str, many: str | None = None) -> str:
    return f"{count} {word if count == 1 else (many or word + 's')}"


def duration(seconds: int | None) -> str:
    """86400 → '1 d', 5400 → '1 h 30 min', 42 → '42 s'."""
    if seconds is None:
        return "-"
    parts: list[str] = []
    for size, unit in ((86_400, "d"), (3_600, "h"), (60, "min"), (1, "s")):
        if seconds >= size or (size == 1 and not parts):
            amount, seconds = divmod(seconds, size)
            parts.append(f"{amount} {unit}")
        if len(parts) == 2:
            break
    return " ".join(parts)


def header(
    console: Console, title: str, packet: dict[str, Any], ref_field: str, extra: Sequence[str] = ()
) -> None:
    """Title, full ref and schema; then goal, decision, extras, time and key."""
    console.print(
        styled(
            "[bold]{}[/]  {}  [dim]({})[/]",
            title,
            packet.get(ref_field, ""),
            packet.get("schema_version", ""),
        )
    )
    parts = [f"goal {packet.get('goal_id', '-')}"]
    if packet.get("decision_id"):
        parts.append(f"decision {packet['decision_id']}")
    parts.extend(extra)
    if packet.get("observed_at"):
        parts.append(f"observed {packet['observed_at']}")
    parts.append(f"key {packet.get('key_id', '-')}")
    console.print(" · ".join(parts), style="dim", markup=False, highlight=False)


def banner(console: Console, text: str, style: str = "") -> None:
    """The one-paragraph verdict of a packet, boxed."""
    from dcx.cli._plain import plain_mode

    if plain_mode.get():  # piped, no rich (dcx/cli/_plain.py): the same box when no line wraps
        plain: PlainConsole = console  # type: ignore[assignment]
        plain.panel(text)
        return
    from rich.panel import Panel
    from rich.text import Text

    console.print(Panel(Text(text, style=style), expand=False, padding=(0, 1)))


def facts(console: Console, rows: Iterable[tuple[str, Any]]) -> None:
    """Label: value lines, labels dim."""
    from dcx.cli._plain import plain_mode

    if plain_mode.get():  # piped, no rich: the same grid when it fits (else NeedRich)
        plain: PlainConsole = console  # type: ignore[assignment]
        plain.grid([(label, str(value)) for label, value in rows], (0, 0), gap=2)
        return
    from rich.table import Table

    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="dim", no_wrap=True)
    grid.add_column(overflow="fold")
    for label, value in rows:
        grid.add_row(label, str(value))
    console.print(grid)


def table(
    console: Console,
    title: str,
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    empty: str = "none",
    constant: dict[str, Any] | None = None,
) -> None:
    """A titled table; an empty one prints as one line (``title: none``).

    A column named in ``constant`` whose every cell equals the value given is
    left out (say an ``observed`` column that only repeats the packet's own
    time). The rows are laid out by :func:`grid`.
    """
    console.print()
    if not rows:
        console.print(styled("[bold]{}[/]: {}", title, empty))
        return
    cells = [["-" if cell is None else str(cell) for cell in row] for row in rows]
    keep = [
        i
        for i, name in enumerate(columns)
        if not (
            constant and name in constant and all(row[i] == str(constant[name]) for row in cells)
        )
    ]
    console.print(styled("[bold]{}[/]", title))
    grid(console, [columns[i] for i in keep], [[row[i] for i in keep] for row in cells])


NARROW = 48  # below this many columns, a table of several columns prints one record per block


def grid(
    console: Console,
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    styles: dict[str, str] | None = None,
) -> None:
    """Rows under a header, laid out for the console's width; every column is kept.

    Columns of single tokens (refs, ids, reason codes, times) never wrap when
    the table fits, so refs stay copyable; prose columns wrap instead. When it
    does not fit, every cell folds rather than being cut (no ``…``), and below
    ``NARROW`` columns each row prints as its own block of ``column  value``
    lines. ``styles`` colours a column's cells (dcx's own styling).
    """
    from dcx.cli._plain import plain_mode

    if (
        plain_mode.get()
    ):  # piped, no rich (dcx/cli/_plain.py): the same table when it fits, else NeedRich
        plain: PlainConsole = console  # type: ignore[assignment]  # the plain console stands in for rich's
        plain.table(
            columns,
            [["-" if value is None else str(value) for value in row] for row in rows],
            narrow=NARROW,
        )
        return
    from rich import box
    from rich.table import Table
    from rich.text import Text

    given = [["-" if value is None else value for value in row] for row in rows]
    cells = [
        [value.plain if isinstance(value, Text) else str(value) for value in row] for row in given
    ]
    indices = range(len(columns))
    atomic = {i: all(" " not in row[i] and len(row[i]) <= 40 for row in cells) for i in indices}
    natural = {i: max([len(columns[i]), *(len(row[i]) for row in cells)]) for i in indices}

    def cell(i: int, row: int) -> Text:
        value = given[row][i]
        if isinstance(value, Text):  # dcx's own styled text (see _render.styled)
            return value
        return Text(cells[row][i], style=(styles or {}).get(columns[i]) or "")

    if len(columns) > 2 and console.width < NARROW:
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
    # Keep tokens whole only when they fit beside a readable share of the prose;
    # on a narrow terminal everything folds rather than a column disappearing.
    needed = sum(natural[i] if atomic[i] else min(natural[i], PROSE_MIN) for i in indices) + 2 * (
        len(columns) - 1
    )
    whole = needed <= console.width
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
            min_width=None if atomic[i] else min(natural[i], PROSE_MIN),
        )
    for number in range(len(cells)):
        out.add_row(*(cell(i, number) for i in indices))
    console.print(out)


def legend(console: Console, codes: Iterable[str | None]) -> None:
    """One line per distinct reason code shown above: what it means."""
    seen = [c for c in dict.fromkeys(codes) if c and c in MEANING]
    for code in seen:
        console.print(f"  {code}: {MEANING[code]}", style="dim", markup=False, highlight=False)


def never_captured(console: Console, packet: dict[str, Any], names: dict[str, str]) -> None:
    """One closing line from the packet's constant flags (``*_captured: false`` …)."""
    held = [label for field, label in names.items() if packet.get(field) is False]
    if held:
        console.print()
        console.print(
            f"never recorded: {', '.join(held)}", style="dim", markup=False, highlight=False
        )


def meaning(code: str | None) -> str:
    return MEANING.get(code or "", "")
