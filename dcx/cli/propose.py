from __future__ import annotations

from typing import Annotated

import typer

from dcx.cli._boundary import run
from dcx.cli._options import AgentOpt, FormatOpt, ObservedAtOpt, OutputFormat, WaitOpt
from dcx.core.result import Result


def command(
    ctx: typer.Context,
    decision_id: Annotated[
        str | None,
        typer.Option("--decision-id", help="The decision: [a-z0-9][a-z0-9._-]{0,127}."),
    ] = None,
    source: Annotated[
        str | None, typer.Option("--from", help="The proposal JSON file, or - for stdin.")
    ] = None,
    template: Annotated[
        bool,
        typer.Option(
            "--template", help="Print a commented skeleton of the input (it validates) and exit."
        ),
    ] = False,
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

    Start from `dcx propose --template > proposal.json`, a commented skeleton.

    Example: dcx propose --decision-id ttl-2026-12 --from proposal.json
    """

    def call(g) -> Result:
        if template:
            from dcx.ops.template import template as skeleton

            return skeleton(kind="proposal", now=g.clock(observed_at).now())
        from dcx.ops._common import require_flag
        from dcx.ops.propose import propose

        return propose(
            decision_id=require_flag(decision_id, "--decision-id"),
            ws=g.ws(),
            source=source,
            agent_id=agent_id,
            clock=g.clock(observed_at),
            wait=wait,
        )

    run(ctx, fmt, call, render)


def render(console, result: Result) -> None:
    if "content" in result.data:  # --template: the skeleton as it is, to redirect into a file
        import sys

        sys.stdout.write(result.data["content"])  # dcx's own text, byte for byte
        return
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
