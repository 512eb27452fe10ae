from __future__ import annotations

from typing import Annotated, Optional

import typer

from dcx.cli._boundary import run
from dcx.cli._options import FormatOpt, OutputFormat
from dcx.result import Result


def command(
    ctx: typer.Context,
    decision_id: Annotated[Optional[str], typer.Option("--decision-id", help="Only this decision.")] = None,  # noqa: UP045
    limit: Annotated[Optional[int], typer.Option("--limit", min=1, help="At most N decisions.")] = None,  # noqa: UP045
    fmt: FormatOpt = OutputFormat.text,
) -> None:
    """List decisions newest first, each with its chain of packets, like git log.

    The chain runs assembly → evidence → proposal → outcomes → events →
    commit receipt → feedback (or, settled by review: proposal → gate →
    review → validation event → commit; "outcome due" after an approve), with short refs (give any of them to `dcx show`).
    Goal-level scans are listed apart.

    Example: dcx log --limit 5
    """

    def call(g) -> Result:
        from dcx.ops.log import log

        return log(ws=g.ws(), decision_id=decision_id, limit=limit)

    run(ctx, fmt, call, render)


def render(console, result: Result) -> None:
    from rich.markup import escape

    decisions = result.data["decisions"]
    if not decisions and not result.data["goal_scans"]:
        console.print("no decisions yet: start one with `dcx prepare --decision-id ID`", markup=False)
    for row in decisions:
        nxt = f"next: dcx {row['next_step']}" if row["next_step"] else "complete"
        if row.get("outcome_due"):
            nxt = f"outcome due · {nxt}"
        elif row.get("settlement"):
            nxt = f"settled {row['settlement']} · {nxt}"
        console.print(f"[yellow]*[/] [bold]{row['decision_id']}[/]  {row['last_observed_at'] or ''}  [dim]{nxt}[/]")
        for link in row["chain"]:
            # a status can carry text read back from public files (event summaries, a host gate's actor)
            console.print(f"[yellow]|[/]   {link['kind']:<9} [cyan]{escape(link['short_ref'])}[/]  "
                          f"{escape(link['status'])}", highlight=False)
        console.print("[yellow]|[/]")
    scans = result.data["goal_scans"]
    if scans:
        console.print(f"[bold]goal-level scans[/] ({len(scans)})")
        for scan in scans[:10]:
            console.print(f"    scan      [cyan]{scan['short_ref']}[/]  {scan['source_id']} · {scan['status']}"
                          f" · {scan['changed_count']} change(s) · {scan['observed_at']}", highlight=False)
