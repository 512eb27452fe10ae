"""Building blocks of the packet views: header, facts grid, tables, short refs.

Views print opaque refs shortened the way git shortens hashes (prefix + 8
hex): every short ref is a unique prefix `dcx show` accepts, and the full
ones are in `dcx show REF --format json`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from dcx.cli._layout import Page, styled

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
    page: Page, title: str, packet: dict[str, Any], ref_field: str, extra: Sequence[str] = ()
) -> None:
    """Title, full ref and schema; then goal, decision, extras, time and key."""
    page.line(
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
    page.line(" · ".join(parts), style="dim")


def banner(page: Page, text: str, style: str = "") -> None:
    """The one-paragraph verdict of a packet, boxed on a terminal."""
    page.panel(text, style)


def facts(page: Page, rows: Iterable[tuple[str, Any]]) -> None:
    """Label: value lines, labels dim."""
    page.grid([(label, str(value)) for label, value in rows], styles=("dim",), gap=2)


def table(
    page: Page,
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
    time).
    """
    page.blank()
    if not rows:
        page.line(styled("[bold]{}[/]: {}", title, empty))
        return
    cells = [["-" if cell is None else cell for cell in row] for row in rows]
    keep = [
        i
        for i, name in enumerate(columns)
        if not (
            constant
            and name in constant
            and all(str(row[i]) == str(constant[name]) for row in cells)
        )
    ]
    page.line(styled("[bold]{}[/]", title))
    page.table([columns[i] for i in keep], [[row[i] for i in keep] for row in cells])


def legend(page: Page, codes: Iterable[str | None]) -> None:
    """One line per distinct reason code shown above: what it means."""
    seen = [c for c in dict.fromkeys(codes) if c and c in MEANING]
    for code in seen:
        page.line(f"  {code}: {MEANING[code]}", style="dim")


def never_captured(page: Page, packet: dict[str, Any], names: dict[str, str]) -> None:
    """One closing line from the packet's constant flags (``*_captured: false`` …)."""
    held = [label for field, label in names.items() if packet.get(field) is False]
    if held:
        page.blank()
        page.line(f"never recorded: {', '.join(held)}", style="dim")


def meaning(code: str | None) -> str:
    return MEANING.get(code or "", "")
