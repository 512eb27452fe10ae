from __future__ import annotations

from dcx.cli._declare import Option, declare
from dcx.cli._globals import Globals
from dcx.cli._options import AGENT, DECISION, FORMAT, WAIT
from dcx.core.result import Result


def render(page, result: Result) -> None:
    data = result.data
    rev, receipt, event = data["review"], data["commit"], data["event"]
    short = lambda ref: ref.rsplit("-", 1)[0] + "-" + ref.rsplit("-", 1)[1][:8]  # noqa: E731
    if data["dry_run"]:
        page.line("dry run: nothing written; this is what `dcx review` would record")
    who = f"by {rev['actor_ref']}" if rev["disposition"] != "no_change" else "quiet"
    page.line(f"review {rev['packet_ref']} · {rev['disposition']} {who} ({rev['reason_code']})")
    if event is not None:
        page.line(f"event  {event['event_id']} · validation")
    moved = sum(1 for row in receipt["sources"] if row["result"] == "advanced")
    state = "replayed (already settled)" if data["replayed"] else receipt["status"]
    page.line(f"commit {short(receipt['receipt_ref'])} · {state} · {moved} cursor(s) advanced")
    for row in receipt["sources"]:
        page.line(f"  {row['source_id']}: {row['result']}")
    if data["outcome_due"]:
        decision = rev["decision_id"]
        page.line(
            f"outcome due: record what happened with `dcx outcome --decision-id {decision} --from FILE`"
        )


@declare(
    render=render,
    decision_id=DECISION,
    gate_event=Option(
        "--gate-event",
        help="The user-gate event that decided the proposal (dcx gate, or a LoopX host's).",
    ),
    no_change=Option(
        "--no-change", type=bool, help="The quiet path: settle a semantic no-change without a gate."
    ),
    reason_code=Option(
        "--reason-code",
        help="Why, as a code (default owner_approved|owner_rejected|owner_deferred|semantic_no_change).",
    ),
    summary=Option(
        "--summary",
        metavar="TEXT",
        help="Public-safe one line for the receipt (default: the gate's summary).",
    ),
    event_log=Option(
        "--event-log",
        help="Read the gate event from a host log listed in [commit] external_event_logs.",
    ),
    by=Option(
        "--by", help="Who decided, for a host gate event that does not say (no details.actor_ref)."
    ),
    dry_run=Option(
        "--dry-run",
        type=bool,
        help="Print the receipt, event and commit that would be written; write nothing.",
    ),
    agent_id=AGENT,
    wait=WAIT,
    fmt=FORMAT,
)
def command(
    g: Globals,
    *,
    decision_id: str,
    gate_event: str | None,
    no_change: bool,
    reason_code: str | None,
    summary: str | None,
    event_log: str | None,
    by: str | None,
    dry_run: bool,
    agent_id: str | None,
    wait: float,
    fmt: str,
) -> Result:
    """Settle a decision: the review receipt, its validation event and the cursor commit, in one step.

    With --gate-event, exact-reads a person's gate (approve, reject or defer)
    on the decision's latest proposal; with --no-change, settles quietly when
    the latest assembly's rebase says no_material_change. Reject and defer
    still advance the cursors (the material was read); approve leaves an
    observed outcome due. Any refusal is exit 1 with nothing written; running
    it again replays the settlement.

    Example: dcx review --decision-id ttl-2026-12 --gate-event dcx-event-5f0c...
    """
    from dcx.ops.review import review_decision

    return review_decision(
        clock=g.clock(),
        ws=g.ws(),
        decision_id=decision_id,
        gate_event=gate_event,
        no_change=no_change,
        reason_code=reason_code,
        summary=summary,
        event_log=event_log,
        agent_id=agent_id,
        dry_run=dry_run,
        wait=wait,
        by=by,
    )
