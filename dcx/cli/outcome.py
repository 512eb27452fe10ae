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
        str | None, typer.Option("--from", help="The outcome JSON file, or - for stdin.")
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
    """Append an outcome receipt: what was accepted, what changed, what was observed.

    Append-only: a later receipt (say verified after pending) is a new packet.
    verification_status verified needs at least one verified observed outcome.
    accepted_by may not be the acting agent unless the profile allows it.

    Start from `dcx outcome --template > outcome.json`, a commented skeleton.

    Example: dcx outcome --decision-id ttl-2026-12 --from outcome.json
    """

    def call(g) -> Result:
        if template:
            from dcx.ops.template import template as skeleton

            return skeleton(kind="outcome", now=g.clock(observed_at).now())
        from dcx.ops._common import require_flag
        from dcx.ops.outcome import record_outcome

        return record_outcome(
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
    packet = result.data["outcome"]
    console.print(f"outcome {packet['packet_ref']} · {packet['verification_status']}", markup=False)
    console.print(
        f"  accepted {packet['accepted_decision']['option_id']} by {packet['accepted_decision']['accepted_by']}",
        markup=False,
    )
    if packet["reward_memory_candidate_eligible"]:
        console.print("  eligible for a Reward Memory candidate (see `dcx feedback`)", markup=False)
