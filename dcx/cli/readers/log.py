"""The text view of `dcx log`, typer-free: the typer command and the fast path (``dcx.cli._fast``) both print with it."""

from __future__ import annotations

from dcx.cli._render import styled
from dcx.result import Result


def render(console, result: Result) -> None:

    decisions = result.data["decisions"]
    if not decisions and not result.data["goal_scans"]:
        console.print("no decisions yet: start one with `dcx prepare --decision-id ID`", markup=False)
    for row in decisions:
        if row.get("abandoned"):
            nxt = "abandoned"
        else:
            nxt = f"next: dcx {row['next_step']}" if row["next_step"] else "complete"
            if row.get("outcome_due"):
                nxt = f"outcome due · {nxt}"
            elif row.get("settlement"):
                nxt = f"settled {row['settlement']} · {nxt}"
        console.print(styled("[yellow]*[/] [bold]{}[/]  {}  [dim]{}[/]", row["decision_id"],
                             row["last_observed_at"] or "", nxt))
        if row.get("next_hint"):
            console.print(styled("[yellow]|[/]   [dim]({})[/]", row["next_hint"]))
        for link in row["chain"]:
            console.print(styled("[yellow]|[/]   {} [cyan]{}[/]  {}", f"{link['kind']:<9}", link["short_ref"],
                                 link["status"]))
        console.print(styled("[yellow]|[/]"))
    scans = result.data["goal_scans"]
    if scans:
        console.print(styled("[bold]goal-level scans[/] ({})", len(scans)))
        for scan in scans[:10]:
            console.print(styled("    scan      [cyan]{}[/]  {} · {} · {} change(s) · {}", scan["short_ref"],
                                 scan["source_id"], scan["status"], scan["changed_count"], scan["observed_at"]))
