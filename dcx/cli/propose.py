from __future__ import annotations

from dcx.cli._declare import Option, declare
from dcx.cli._globals import Globals
from dcx.cli._options import AGENT, DECISION, FORMAT, OBSERVED_AT, WAIT
from dcx.core.result import Result


def render(page, result: Result) -> None:
    packet = result.data["proposal"]
    rec = packet["recommended_decision"]
    page.line(f"proposal {packet['packet_ref']}")
    page.line(
        f"  recommends {rec['option_id']} (confidence {rec['confidence']:g}): {rec['summary']}"
    )
    page.line(f"  bound to {packet['evidence_packet_ref']} · authority confirmation required")


@declare(
    render=render,
    decision_id=DECISION,
    source=Option(
        "--from", required=True, metavar="FILE", help="The proposal JSON file, or - for stdin."
    ),
    agent_id=AGENT,
    observed_at=OBSERVED_AT,
    wait=WAIT,
    fmt=FORMAT,
)
def command(
    g: Globals,
    *,
    decision_id: str,
    source: str,
    agent_id: str | None,
    observed_at: str | None,
    wait: float,
    fmt: str,
) -> Result:
    """Record the agent's advisory proposal, bound to the decision's latest evidence.

    The input holds exactly objective_scores (at least one), recommended_decision,
    alternatives, next_actions, stop_list, review_at and optionally
    evidence_packet_ref. Every text must be public-safe. The proposal always
    requires authority confirmation.

    Example: dcx propose --decision-id ttl-2026-12 --from proposal.json
    """
    from dcx.ops.propose import propose

    return propose(
        ws=g.ws(),
        decision_id=decision_id,
        source=source,
        agent_id=agent_id,
        clock=g.clock(observed_at),
        wait=wait,
    )
