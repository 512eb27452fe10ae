from __future__ import annotations

from dcx.cli._declare import Option, declare
from dcx.cli._globals import Globals
from dcx.cli._options import AGENT, DECISION, FORMAT, OBSERVED_AT, WAIT
from dcx.core.result import Result


def render(page, result: Result) -> None:
    event = result.data["event"]
    verb = "abandoned" if result.data["appended"] else "already abandoned"
    page.line(f"decision {event['causality']['decision_id']} {verb}")
    page.line(f"event {event['event_id']}")


@declare(
    render=render,
    decision_id=DECISION,
    summary=Option(
        "--summary", required=True, metavar="TEXT", help="Why it was given up (public-safe)."
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
    summary: str,
    agent_id: str | None,
    observed_at: str | None,
    wait: float,
    fmt: str,
) -> Result:
    """Give a decision up: append an abandon event; status and log stop suggesting next steps.

    The event cites the decision's latest packets and is append-only; a later
    `dcx commit` of the decision is refused (decision_abandoned).

    Example: dcx abandon --decision-id ttl-2026-11 --summary "superseded by the CDN migration"
    """
    from dcx.ops.abandon import abandon

    return abandon(
        ws=g.ws(),
        decision_id=decision_id,
        summary=summary,
        agent_id=agent_id,
        clock=g.clock(observed_at),
        wait=wait,
    )
