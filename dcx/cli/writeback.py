from __future__ import annotations

from dcx.cli._declare import Option, declare
from dcx.cli._globals import Globals
from dcx.cli._options import AGENT, DECISION, FORMAT, OBSERVED_AT, WAIT
from dcx.core.result import Result


def render(page, result: Result) -> None:
    event = result.data["event"]
    verb = "appended" if result.data["appended"] else "already recorded"
    page.line(f"event {event['event_id']} {verb}")
    decision = event["causality"]["decision_id"]
    page.line(f"next: dcx commit --decision-id {decision} --event-id {event['event_id']}")


@declare(
    render=render,
    decision_id=DECISION,
    kind=Option(
        "--kind",
        required=True,
        metavar="KIND",
        help="validation|todo_add|todo_update|todo_complete|refresh_state",
    ),
    summary=Option(
        "--summary",
        required=True,
        metavar="TEXT",
        help="Public-safe one-line summary of the transition.",
    ),
    artifact=Option(
        "--artifact",
        multiple=True,
        metavar="REF",
        help="A packet ref (repeatable); replaces the default.",
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
    kind: str,
    summary: str,
    artifact: list[str] | None,
    agent_id: str | None,
    observed_at: str | None,
    wait: float,
    fmt: str,
) -> Result:
    """Append one lifecycle event to events.jsonl: the writeback commit needs.

    The event references the decision's latest evidence, proposal and outcome
    unless --artifact names others. Re-running with the same decision, kind,
    summary and artifacts returns the existing event instead of appending.

    Example: dcx writeback --decision-id ttl-2026-12 --kind validation --summary "TTL kept at 90 s"
    """
    from dcx.ops.writeback import writeback

    return writeback(
        ws=g.ws(),
        decision_id=decision_id,
        kind=kind,
        summary=summary,
        artifacts=list(artifact or []),
        agent_id=agent_id,
        clock=g.clock(observed_at),
        wait=wait,
    )
