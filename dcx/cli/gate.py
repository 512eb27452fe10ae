from __future__ import annotations

from typing import Annotated

import typer

from dcx.cli._boundary import run
from dcx.cli._options import AgentOpt, DecisionOpt, FormatOpt, ObservedAtOpt, OutputFormat, WaitOpt
from dcx.core.errors import InvalidInput
from dcx.core.result import Result


def command(
    ctx: typer.Context,
    decision_id: DecisionOpt,
    by: Annotated[
        str, typer.Option("--by", help="Who decided: a person or another agent (a public token).")
    ],
    summary: Annotated[
        str, typer.Option("--summary", help="Public-safe one-line account of the decision.")
    ],
    approve: Annotated[bool, typer.Option("--approve", help="The proposal is approved.")] = False,
    reject: Annotated[bool, typer.Option("--reject", help="The proposal is rejected.")] = False,
    defer: Annotated[bool, typer.Option("--defer", help="The decision is deferred.")] = False,
    todo_id: Annotated[
        str | None,
        typer.Option("--todo-id", help="The gate's todo id (default gate-<decision id>)."),
    ] = None,
    proposal: Annotated[
        str | None,
        typer.Option("--proposal", help="The proposal decided (default: the decision's latest)."),
    ] = None,
    agent_id: AgentOpt = None,
    observed_at: ObservedAtOpt = None,
    wait: WaitOpt = 5.0,
    fmt: FormatOpt = OutputFormat.text,
) -> None:
    """Record a person's gate on a proposal: approve, reject or defer.

    Appends a user-gate event to events.jsonl in the LoopX rollout-event shape
    (task_class user_gate, decision_scope direction:action:<proposal ref>).
    --by may not be the acting agent unless the profile allows
    self-confirmation (compared ignoring case, width, '-', '_', '.' and
    spaces). Settle it next with `dcx review --gate-event`.

    Example: dcx gate --decision-id ttl-2026-12 --approve --by owner-maria --summary "Keep the 90 s TTL"
    """

    def call(g) -> Result:
        from dcx.ops.gate import gate

        chosen = [
            name
            for name, flag in (("approve", approve), ("reject", reject), ("defer", defer))
            if flag
        ]
        if len(chosen) != 1:
            raise InvalidInput(
                "give exactly one of --approve, --reject or --defer", field="--approve"
            )
        return gate(
            ws=g.ws(),
            decision_id=decision_id,
            disposition=chosen[0],
            by=by,
            summary=summary,
            todo_id=todo_id,
            proposal_ref=proposal,
            agent_id=agent_id,
            clock=g.clock(observed_at),
            wait=wait,
        )

    run(ctx, fmt, call, render)


def render(console, result: Result) -> None:
    event = result.data["event"]
    verb = "appended" if result.data["appended"] else "already recorded"
    actor = event["details"].get("actor_ref", "-")
    console.print(
        f"gate {event['event_id']} {verb} · {result.data['disposition']} by {actor}", markup=False
    )
    decision = event["causality"]["decision_id"]
    console.print(
        f"next: dcx review --decision-id {decision} --gate-event {event['event_id']}", markup=False
    )
