from __future__ import annotations

from typing import Annotated

import typer

from dcx.cli._boundary import run
from dcx.cli._options import AgentOpt, FormatOpt, OutputFormat
from dcx.result import Result

STATUS_STYLE = {
    "available": "green",
    "provider_unavailable": "yellow",
    "disabled": "dim",
    "agent_not_enabled": "yellow",
    "profile_invalid": "red",
}


def command(
    ctx: typer.Context,
    agent_id: AgentOpt = None,
    fmt: FormatOpt = OutputFormat.text,
    check: Annotated[bool, typer.Option("--check", help="Also run live checks (provider health).")] = False,
) -> None:
    """Show whether decision context is active for this goal and agent, and what is next.

    Reads state only: it never scans, hashes or spawns a provider, so a thin
    host can call it on every wake-up. An invalid profile is shown, then exit 2.

    Example: dcx status --agent-id agent-a --format json
    """

    def call(g) -> Result:
        from dcx.ops.status import status

        return status(ws=g.ws(), agent_id=agent_id, check=check)

    run(ctx, fmt, call, render)


def render(console, result: Result) -> None:
    from rich.table import Table

    act = result.data["activation"]
    ws = result.data["workspace"]
    style = STATUS_STYLE.get(act["status"], "white")
    reason = f" ({act['reason_code']})" if act["reason_code"] else ""
    console.print(f"goal      [cyan]{act['goal_id']}[/]")
    console.print(f"agent     {act['agent_id'] or '-'}", markup=False)
    console.print(f"status    [{style}]{act['status']}[/]{reason}")
    if act.get("error"):
        console.print(f"          {act['error']['message']}", markup=False, style="red")
    console.print(
        f"sources   {act['enabled_source_count']} enabled of {act['source_count']}"
        f" · recall: {act['context_provider']}",
        markup=False,
    )
    if act["unavailable_adapter_count"]:
        console.print(f"          {act['unavailable_adapter_count']} source adapter(s) unavailable", style="yellow")
    console.print(
        f"packets   {ws['packet_count']} · events {ws['events']} · committed cursors "
        f"{ws['committed_cursors']} · pending {ws['pending_assemblies']}",
        markup=False,
    )
    checks = result.data.get("checks")
    if checks:
        for row in checks["sources"]:
            mark = "[green]ok[/]" if row["status"] == "ok" else f"[red]{row['status']}[/] ({row['reason_code']})"
            console.print(f"check     source {row['source_id']}: {mark}", highlight=False)
        recall = checks["recall"]
        if recall:
            mark = "[green]ready[/]" if recall["status"] == "ready" else f"[yellow]{recall['status']}[/]"
            reason = f" ({recall['reason_code']})" if recall.get("reason_code") else ""
            console.print(f"check     recall {recall['provider']}: {mark}{reason}", highlight=False)
    if ws["decisions"]:
        table = Table(title="decisions", title_justify="left", show_edge=False, pad_edge=False)
        table.add_column("decision")
        table.add_column("last observed")
        table.add_column("next step")
        for row in ws["decisions"]:
            nxt = f"dcx {row['next_step']}" if row["next_step"] else "done"
            table.add_row(row["decision_id"], row["last_observed_at"] or "-", nxt)
        console.print(table)
