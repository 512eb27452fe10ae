from __future__ import annotations

from typing import Annotated

import typer

from dcx.cli._boundary import run
from dcx.cli._options import AgentOpt, DecisionOpt, FormatOpt, OutputFormat, WaitOpt
from dcx.core.result import Result


def command(
    ctx: typer.Context,
    decision_id: DecisionOpt,
    gate_event: Annotated[
        str | None,
        typer.Option(
            "--gate-event",
            help="The user-gate event that decided the proposal (dcx gate, or a LoopX host's).",
        ),
    ] = None,
    no_change: Annotated[
        bool,
        typer.Option(
            "--no-change", help="The quiet path: settle a semantic no-change without a gate."
        ),
    ] = False,
    reason_code: Annotated[
        str | None,
        typer.Option(
            "--reason-code",
            help="Why, as a code (default owner_approved|owner_rejected|owner_deferred|semantic_no_change).",
        ),
    ] = None,
    summary: Annotated[
        str | None,
        typer.Option(
            "--summary", help="Public-safe one line for the receipt (default: the gate's summary)."
        ),
    ] = None,
    event_log: Annotated[
        str | None,
        typer.Option(
            "--event-log",
            help="Read the gate event from a host log listed in [commit] external_event_logs.",
        ),
    ] = None,
    by: Annotated[
        str | None,
        typer.Option(
            "--by",
            help="Who decided, for a host gate event that does not say (no details.actor_ref).",
        ),
    ] = None,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="Print the receipt, event and commit that would be written; write nothing.",
        ),
    ] = False,
    agent_id: AgentOpt = None,
    wait: WaitOpt = 5.0,
    fmt: FormatOpt = OutputFormat.text,
) -> None:
    """Settle a decision: the review receipt, its validation event and the cursor commit, in one step.

    With --gate-event, exact-reads a person's gate (approve, reject or defer)
    on the decision's latest proposal; with --no-change, settles quietly when
    the latest assembly's rebase says no_material_change. Reject and defer
    still advance the cursors (the material was read); approve leaves an
    observed outcome due. Any refusal is exit 1 with nothing written; running
    it again replays the settlement.

    Example: dcx review --decision-id ttl-2026-12 --gate-event dcx-event-5f0c...
    """

    def call(g) -> Result:
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

    run(ctx, fmt, call, render)


def render(console, result: Result) -> None:
    from dcx.cli.commit import source_result

    data = result.data
    rev, receipt, event = data["review"], data["commit"], data["event"]
    short = lambda ref: ref.rsplit("-", 1)[0] + "-" + ref.rsplit("-", 1)[1][:8]  # noqa: E731
    if data["dry_run"]:
        console.print(
            "dry run: nothing written; this is what `dcx review` would record", markup=False
        )
    who = f"by {rev['actor_ref']}" if rev["disposition"] != "no_change" else "quiet"
    console.print(
        f"review {rev['packet_ref']} · {rev['disposition']} {who} ({rev['reason_code']})",
        markup=False,
    )
    if event is not None:
        console.print(f"event  {event['event_id']} · validation", markup=False)
    moved = sum(1 for row in receipt["sources"] if row["result"] == "advanced")
    state = "replayed (already settled)" if data["replayed"] else receipt["status"]
    if not data["replayed"] and not moved:
        state = "committed · nothing to advance"  # a quiet settlement's first commit: no replay
    console.print(
        f"commit {short(receipt['receipt_ref'])} · {state} · {moved} cursor(s) advanced",
        markup=False,
    )
    for row in receipt["sources"]:
        console.print(f"  {row['source_id']}: {source_result(row)}", markup=False)
    if data["outcome_due"]:
        decision = rev["decision_id"]
        console.print(
            f"outcome due: record what happened with `dcx outcome --decision-id {decision} --from FILE`",
            markup=False,
        )
