from __future__ import annotations

from typing import Annotated

import typer

from dcx.cli._boundary import run
from dcx.cli._options import AgentOpt, DecisionOpt, FormatOpt, ObservedAtOpt, OutputFormat, WaitOpt
from dcx.core.result import Result


def command(
    ctx: typer.Context,
    decision_id: DecisionOpt,
    source: Annotated[str, typer.Option("--from", help="The outcome JSON file, or - for stdin.")],
    agent_id: AgentOpt = None,
    observed_at: ObservedAtOpt = None,
    wait: WaitOpt = 5.0,
    fmt: FormatOpt = OutputFormat.text,
) -> None:
    """Append an outcome receipt: what was accepted, what changed, what was observed.

    Append-only: a later receipt (say verified after pending) is a new packet.
    verification_status verified needs at least one verified observed outcome.
    accepted_by may not be the acting agent unless the profile allows it.

    Example: dcx outcome --decision-id ttl-2026-12 --from outcome.json
    """

    def call(g) -> Result:
        from dcx.ops.outcome import record_outcome

        return record_outcome(
            ws=g.ws(),
            decision_id=decision_id,
            source=source,
            agent_id=agent_id,
            clock=g.clock(observed_at),
            wait=wait,
        )

    run(ctx, fmt, call, render)


def render(console, result: Result) -> None:
    packet = result.data["outcome"]
    console.print(f"outcome {packet['packet_ref']} · {packet['verification_status']}", markup=False)
    console.print(
        f"  accepted {packet['accepted_decision']['option_id']} by {packet['accepted_decision']['accepted_by']}",
        markup=False,
    )
    if packet["reward_memory_candidate_eligible"]:
        console.print("  eligible for a Reward Memory candidate (see `dcx feedback`)", markup=False)
