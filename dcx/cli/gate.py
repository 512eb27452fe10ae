from __future__ import annotations

from dcx.cli._declare import Option, declare
from dcx.cli._globals import Globals
from dcx.cli._options import AGENT, DECISION, FORMAT, OBSERVED_AT, WAIT
from dcx.core.errors import InvalidInput
from dcx.core.result import Result


def render(page, result: Result) -> None:
    event = result.data["event"]
    verb = "appended" if result.data["appended"] else "already recorded"
    actor = event["details"].get("actor_ref", "-")
    page.line(f"gate {event['event_id']} {verb} · {result.data['disposition']} by {actor}")
    decision = event["causality"]["decision_id"]
    page.line(f"next: dcx review --decision-id {decision} --gate-event {event['event_id']}")


@declare(
    render=render,
    decision_id=DECISION,
    by=Option(
        "--by", required=True, help="Who decided: a person or another agent (a public token)."
    ),
    summary=Option(
        "--summary",
        required=True,
        metavar="TEXT",
        help="Public-safe one-line account of the decision.",
    ),
    approve=Option("--approve", type=bool, help="The proposal is approved."),
    reject=Option("--reject", type=bool, help="The proposal is rejected."),
    defer=Option("--defer", type=bool, help="The decision is deferred."),
    todo_id=Option("--todo-id", help="The gate's todo id (default gate-<decision id>)."),
    proposal=Option("--proposal", help="The proposal decided (default: the decision's latest)."),
    agent_id=AGENT,
    observed_at=OBSERVED_AT,
    wait=WAIT,
    fmt=FORMAT,
)
def command(
    g: Globals,
    *,
    decision_id: str,
    by: str,
    summary: str,
    approve: bool,
    reject: bool,
    defer: bool,
    todo_id: str | None,
    proposal: str | None,
    agent_id: str | None,
    observed_at: str | None,
    wait: float,
    fmt: str,
) -> Result:
    """Record a person's gate on a proposal: approve, reject or defer.

    Appends a user-gate event to events.jsonl in the LoopX rollout-event shape
    (task_class user_gate, decision_scope direction:action:<proposal ref>).
    --by may not be the acting agent unless the profile allows
    self-confirmation (compared ignoring case, width, '-', '_', '.' and
    spaces). Settle it next with `dcx review --gate-event`.

    Example: dcx gate --decision-id ttl-2026-12 --approve --by owner-maria --summary "Keep the 90 s TTL"
    """
    from dcx.ops.gate import gate

    chosen = [
        name for name, flag in (("approve", approve), ("reject", reject), ("defer", defer)) if flag
    ]
    if len(chosen) != 1:
        raise InvalidInput("give exactly one of --approve, --reject or --defer", field="--approve")
    return gate(
        ws=g.ws(),
        decision_id=decision_id,
        disposition=chosen[0],
        by=by,
        summary=summary,
        todo_id=todo_id,
        proposal_ref=proposal,
        agent_id=agent_id,
        clock=g.clock(observed_at),
        wait=wait,
    )
