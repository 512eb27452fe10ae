"""The text view of `dcx log`, typer-free: the typer command and the fast path (``dcx.cli._fast``) both print with it."""

from __future__ import annotations

from dcx.cli._plain import plain_mode
from dcx.cli._render import styled
from dcx.core.result import Result

TYPE_CHECKING = False  # typing stays unimported at run time (~16 M instructions; issue 18)
if TYPE_CHECKING:
    from typing import Any


def _lines(console, rows: list[tuple[str, str, Any]]) -> None:
    """Gutter, kind, then text that wraps under itself (the gutter stays on every line)."""
    if plain_mode.get():  # piped: the same grid without rich, when it fits (else NeedRich)
        console.grid(
            [(styled("[yellow]{}[/]", g) if g else "", k, t) for g, k, t in rows], (0, 9, 0)
        )
        return
    from rich.table import Table

    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column(no_wrap=True, min_width=9)
    grid.add_column(overflow="fold")
    for gutter, kind, text in rows:
        grid.add_row(styled("[yellow]{}[/]", gutter) if gutter else "", kind, text)
    console.print(grid)


def render(console, result: Result) -> None:
    decisions = result.data["decisions"]
    if not decisions and not result.data["goal_scans"]:
        console.print(
            "no decisions yet: start one with `dcx prepare --decision-id ID`", markup=False
        )
    for row in decisions:
        if row.get("abandoned"):
            nxt = "abandoned"
        else:
            nxt = f"next: dcx {row['next_step']}" if row["next_step"] else "complete"
            if row.get("outcome_due"):
                nxt = f"outcome due · {nxt}"
            elif row.get("settlement"):
                nxt = f"settled {row['settlement']} · {nxt}"
        console.print(
            styled(
                "[yellow]*[/] [bold]{}[/]  {}  [dim]{}[/]",
                row["decision_id"],
                row["last_observed_at"] or "",
                nxt,
            )
        )
        lines: list[tuple[str, str, Any]] = []
        if row.get("next_hint"):
            lines.append(("|", "", styled("[dim]({})[/]", row["next_hint"])))
        chains = {
            link.get("chain_evidence_ref")
            for link in row["chain"]
            if link.get("chain_evidence_ref")
        }
        current = None
        for link in row["chain"]:
            key = link.get("chain_evidence_ref")
            if (
                len(chains) > 1 and key and key != current
            ):  # two agents' chains of one decision, apart
                current = key
                head, _, hexpart = key.rpartition("-")
                label = f"{head}-{hexpart[:12]}"  # a prefix: `dcx show` resolves it
                lines.append(("|", "", styled("[bold]chain[/] of evidence [cyan]{}[/]", label)))
            by = _by(link)
            lines.append(
                (
                    "|",
                    link["kind"],
                    styled("[cyan]{}[/]  {}[dim]{}[/]", link["short_ref"], link["status"], by),
                )
            )
        _lines(console, lines)
        console.print(styled("[yellow]|[/]"))
    scans = result.data["goal_scans"]
    if scans:
        console.print(styled("[bold]goal-level scans[/] ({})", len(scans)))
        _lines(
            console,
            [
                (
                    "",
                    "   scan",
                    styled(
                        "[cyan]{}[/]  {} · {} · {} change(s) · {}",
                        scan["short_ref"],
                        scan["source_id"],
                        scan["status"],
                        scan["changed_count"],
                        scan["observed_at"],
                    ),
                )
                for scan in scans[:10]
            ],
        )


def _by(link: dict[str, Any]) -> str:
    """ "by agent-x ✓" when a signed statement of agent-x names it (SPEC §18), else what is missing."""
    agent = link.get("agent_id")
    sig = (link.get("signature") or {}).get("verdict")
    if sig == "signed":
        signer = link["signature"]["signer_agent_id"]
        return f"  by {agent} ✓" if agent else f"  signed by {signer} ✓"
    if not agent:
        return ""
    if sig in (None, "unsigned"):
        return f"  by {agent} (unsigned)" if sig else f"  by {agent}"
    if sig == "unchecked":
        return f"  by {agent} (signature not checked yet: dcx verify)"
    return f"  by {agent} ✗ {sig}"


render.plain = True  # type: ignore[attr-defined]  # PlainConsole prints it when piped (dcx/cli/_plain.py)
