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
    packet = result.data["proposal"]
    rec = packet["recommended_decision"]
    page.line(f"proposal {packet['packet_ref']}")
    page.line(
        f"  recommends {rec['option_id']} (confidence {rec['confidence']:g}): {rec['summary']}"
    )
    page.line(f"  bound to {packet['evidence_packet_ref']} · authority confirmation required")


@declare(
    render=render,
    decision_id=DECISION.but(required=False),
    source=Option("--from", metavar="FILE", help="The proposal JSON file, or - for stdin."),
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
    """Record the agent's advisory proposal, bound to the decision's latest evidence.

    The input holds exactly objective_scores (at least one), recommended_decision,
    alternatives, next_actions, stop_list, review_at and optionally
    evidence_packet_ref. Every text must be public-safe. The proposal always
    requires authority confirmation.

    Start from `dcx propose --template > proposal.json`, a commented skeleton.

    Example: dcx propose --decision-id ttl-2026-12 --from proposal.json
    """
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
