from __future__ import annotations

from dcx.cli._declare import Option, declare
from dcx.cli._globals import Globals
from dcx.cli._options import AGENT, DECISION, FORMAT, OBSERVED_AT, WAIT
from dcx.core.result import Result


def render(page, result: Result) -> None:
    packet = result.data["outcome"]
    page.line(f"outcome {packet['packet_ref']} · {packet['verification_status']}")
    page.line(
        f"  accepted {packet['accepted_decision']['option_id']} by {packet['accepted_decision']['accepted_by']}"
    )
    if packet["reward_memory_candidate_eligible"]:
        page.line("  eligible for a Reward Memory candidate (see `dcx feedback`)")


@declare(
    render=render,
    decision_id=DECISION,
    source=Option(
        "--from", required=True, metavar="FILE", help="The outcome JSON file, or - for stdin."
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
    """Append an outcome receipt: what was accepted, what changed, what was observed.

    Append-only: a later receipt (say verified after pending) is a new packet.
    verification_status verified needs at least one verified observed outcome.
    accepted_by may not be the acting agent unless the profile allows it.

    Example: dcx outcome --decision-id ttl-2026-12 --from outcome.json
    """
    from dcx.ops.outcome import record_outcome

    return record_outcome(
        ws=g.ws(),
        decision_id=decision_id,
        source=source,
        agent_id=agent_id,
        clock=g.clock(observed_at),
        wait=wait,
    )
