from __future__ import annotations

from typing import Annotated

import typer

from dcx.cli._boundary import run
from dcx.cli._options import AgentOpt, DecisionOpt, FormatOpt, ObservedAtOpt, OutputFormat, WaitOpt
from dcx.core.result import Result


def command(
    ctx: typer.Context,
    decision_id: DecisionOpt,
    outcome: Annotated[
        str | None, typer.Option("--outcome", help="An outcome ref (default: the latest).")
    ] = None,
    agent_id: AgentOpt = None,
    observed_at: ObservedAtOpt = None,
    wait: WaitOpt = 5.0,
    fmt: FormatOpt = OutputFormat.text,
) -> None:
    """Record outcome feedback: retrieval telemetry and at most one memory candidate.

    Without --outcome it takes the latest outcome of the acting agent's own
    chain on this host (SPEC §16).

    Verifies the outcome and its evidence are canonical and untampered. A
    procedural_experience candidate appears only for a verified outcome linked
    to this evidence, with an exact-read promoted claim, a current source
    revision and no open conflict; otherwise the reasons are listed. Nothing
    is ingested or activated.

    Example: dcx feedback --decision-id ttl-2026-12
    """

    def call(g) -> Result:
        from dcx.ops.feedback import record_feedback

        return record_feedback(
            ws=g.ws(),
            decision_id=decision_id,
            outcome_ref=outcome,
            clock=g.clock(observed_at),
            wait=wait,
            agent_id=agent_id,
        )

    run(ctx, fmt, call, render)


def render(console, result: Result) -> None:
    packet = result.data["feedback"]
    t = packet["telemetry"]
    verb = (
        "recorded"
        if result.data.get("recorded", True)
        else "already recorded (same outcome and evidence)"
    )
    console.print(f"feedback {packet['feedback_ref']} {verb}", markup=False)
    console.print(
        f"  recall: {t['provider_result_count']} result(s), {t['accepted_claim_count']} accepted by exact read, "
        f"{t['stale_or_rejected_claim_count']} stale or rejected",
        markup=False,
    )
    reasons = t.get("rejection_reason_counts")  # SPEC §8.7 v4; absent on older feedback
    if reasons:
        shown = ", ".join(f"{code} {n}" for code, n in sorted(reasons.items()))
        console.print(f"  stale or rejected by reason: {shown}", markup=False)
    if "rejected_provider_result_count" in t:
        console.print(
            f"  provider results rejected by exact read: {t['rejected_provider_result_count']}"
            f" of {t['provider_result_count']} ({t['unjudged_provider_result_count']} not judged)",
            markup=False,
        )
    if packet["candidate_emitted"]:
        console.print(
            "  candidate: procedural_experience (review required; not ingested)", markup=False
        )
    else:
        console.print(f"  no candidate: {', '.join(packet['ineligible_reasons'])}", markup=False)
