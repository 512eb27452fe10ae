from __future__ import annotations

from typing import Annotated

import typer

from dcx.cli._boundary import run
from dcx.cli._options import AgentOpt, DecisionOpt, FormatOpt, ObservedAtOpt, OutputFormat, WaitOpt
from dcx.core.result import Result


def command(
    ctx: typer.Context,
    decision_id: DecisionOpt,
    summary: Annotated[
        str, typer.Option("--summary", metavar="TEXT", help="Why it was given up (public-safe).")
    ],
    agent_id: AgentOpt = None,
    observed_at: ObservedAtOpt = None,
    wait: WaitOpt = 5.0,
    fmt: FormatOpt = OutputFormat.text,
) -> None:
    """Give a decision up: append an abandon event; status and log stop suggesting next steps.

    The event cites the decision's latest packets and is append-only; a later
    `dcx commit` of the decision is refused (decision_abandoned).

    Example: dcx abandon --decision-id ttl-2026-11 --summary "superseded by the CDN migration"
    """

    def call(g) -> Result:
        from dcx.ops.abandon import abandon

        return abandon(
            ws=g.ws(),
            decision_id=decision_id,
            summary=summary,
            agent_id=agent_id,
            clock=g.clock(observed_at),
            wait=wait,
        )

    def render(console, result: Result) -> None:
        event = result.data["event"]
        verb = "abandoned" if result.data["appended"] else "already abandoned"
        console.print(f"decision {event['causality']['decision_id']} {verb}", markup=False)
        console.print(f"event {event['event_id']}", markup=False, soft_wrap=True)

    run(ctx, fmt, call, render)
