from __future__ import annotations

from dcx.cli._declare import Option, declare
from dcx.cli._globals import Globals
from dcx.cli._layout import Page
from dcx.cli._options import AGENT, DECISION, FORMAT, OBSERVED_AT, TEMPLATE, WAIT
from dcx.core.result import Result


def render(page: Page, result: Result) -> None:
    if "content" in result.data:  # --template: the skeleton as it is, to redirect into a file
        page.write(result.data["content"])  # dcx's own text, byte for byte
        return
    packet = result.data["outcome"]
    page.line(f"outcome {packet['packet_ref']} · {packet['verification_status']}")
    page.line(
        f"  accepted {packet['accepted_decision']['option_id']} by {packet['accepted_decision']['accepted_by']}"
    )
    if packet["reward_memory_candidate_eligible"]:
        page.line("  eligible for a Reward Memory candidate (see `dcx feedback`)")


@declare(
    render=render,
    decision_id=DECISION.but(required=False),
    source=Option("--from", metavar="FILE", help="The outcome JSON file, or - for stdin."),
    template=TEMPLATE,
    agent_id=AGENT,
    observed_at=OBSERVED_AT,
    wait=WAIT,
    fmt=FORMAT,
)
def command(
    g: Globals,
    *,
    decision_id: str | None,
    source: str | None,
    template: bool,
    agent_id: str | None,
    observed_at: str | None,
    wait: float,
    fmt: str,
) -> Result:
    """Append an outcome receipt: what was accepted, what changed, what was observed.

    Append-only: a later receipt (say verified after pending) is a new packet.
    verification_status verified needs at least one verified observed outcome.
    accepted_by may not be the acting agent unless the profile allows it.

    Start from `dcx outcome --template > outcome.json`, a commented skeleton.

    Example: dcx outcome --decision-id ttl-2026-12 --from outcome.json
    """
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
