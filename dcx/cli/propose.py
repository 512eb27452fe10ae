from __future__ import annotations

from typing import Annotated

import typer

from dcx.cli._boundary import run
from dcx.cli._options import AgentOpt, DecisionOpt, FormatOpt, ObservedAtOpt, OutputFormat, WaitOpt
from dcx.core.result import Result


def command(
    ctx: typer.Context,
    decision_id: DecisionOpt,
    source: Annotated[str, typer.Option("--from", help="The proposal JSON file, or - for stdin.")],
    agent_id: AgentOpt = None,
    observed_at: ObservedAtOpt = None,
    wait: WaitOpt = 5.0,
    fmt: FormatOpt = OutputFormat.text,
) -> None:
    """Record the agent's advisory proposal, bound to the decision's latest evidence.

    The input holds exactly objective_scores (at least one), recommended_decision,
    alternatives, next_actions, stop_list, review_at and optionally
    evidence_packet_ref. Every text must be public-safe. The proposal always
    requires authority confirmation.

    Example: dcx propose --decision-id ttl-2026-12 --from proposal.json
    """

    def call(g) -> Result:
        from dcx.ops.propose import propose

        return propose(
            ws=g.ws(),
            decision_id=decision_id,
            source=source,
            agent_id=agent_id,
            clock=g.clock(observed_at),
            wait=wait,
        )

    run(ctx, fmt, call, render)


def render(console, result: Result) -> None:
    packet = result.data["proposal"]
    rec = packet["recommended_decision"]
    console.print(f"proposal {packet['packet_ref']}", markup=False)
    console.print(
        f"  recommends {rec['option_id']} (confidence {rec['confidence']:g}): {rec['summary']}",
        markup=False,
    )
    console.print(
        f"  bound to {packet['evidence_packet_ref']} · authority confirmation required",
        markup=False,
    )
