from __future__ import annotations

from typing import Annotated

import typer

from dcx.cli._boundary import run
from dcx.cli._options import AgentOpt, DecisionOpt, FormatOpt, ObservedAtOpt, OutputFormat, WaitOpt
from dcx.core.result import Result


def command(
    ctx: typer.Context,
    decision_id: DecisionOpt,
    kind: Annotated[
        str,
        typer.Option("--kind", help="validation|todo_add|todo_update|todo_complete|refresh_state"),
    ],
    summary: Annotated[
        str, typer.Option("--summary", help="Public-safe one-line summary of the transition.")
    ],
    artifact: Annotated[
        list[str] | None,
        typer.Option("--artifact", help="A packet ref (repeatable); replaces the default."),
    ] = None,
    agent_id: AgentOpt = None,
    observed_at: ObservedAtOpt = None,
    wait: WaitOpt = 5.0,
    fmt: FormatOpt = OutputFormat.text,
) -> None:
    """Append one lifecycle event to events.jsonl: the writeback commit needs.

    The event references the decision's latest evidence, proposal and outcome
    unless --artifact names others. Re-running with the same decision, kind,
    summary and artifacts returns the existing event instead of appending.

    Example: dcx writeback --decision-id ttl-2026-12 --kind validation --summary "TTL kept at 90 s"
    """

    def call(g) -> Result:
        from dcx.ops.writeback import writeback

        return writeback(
            ws=g.ws(),
            decision_id=decision_id,
            kind=kind,
            summary=summary,
            artifacts=list(artifact or []),
            agent_id=agent_id,
            clock=g.clock(observed_at),
            wait=wait,
        )

    run(ctx, fmt, call, render)


def render(console, result: Result) -> None:
    event = result.data["event"]
    verb = "appended" if result.data["appended"] else "already recorded"
    console.print(f"event {event['event_id']} {verb}", markup=False)
    decision = event["causality"]["decision_id"]
    console.print(
        f"next: dcx commit --decision-id {decision} --event-id {event['event_id']}", markup=False
    )
