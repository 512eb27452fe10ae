from __future__ import annotations

from dcx.cli._declare import Option, declare
from dcx.cli._globals import Globals
from dcx.cli._options import AGENT, DECISION, FORMAT, OBSERVED_AT, WAIT
from dcx.core.result import Result


def render(page, result: Result) -> None:
    packet = result.data["feedback"]
    t = packet["telemetry"]
    verb = (
        "recorded"
        if result.data.get("recorded", True)
        else "already recorded (same outcome and evidence)"
    )
    page.line(f"feedback {packet['feedback_ref']} {verb}")
    page.line(
        f"  recall: {t['provider_result_count']} result(s), {t['accepted_claim_count']} accepted by exact read, "
        f"{t['stale_or_rejected_claim_count']} stale or rejected"
    )
    reasons = t.get("rejection_reason_counts")  # SPEC §8.7 v4; absent on older feedback
    if reasons:
        shown = ", ".join(f"{code} {n}" for code, n in sorted(reasons.items()))
        page.line(f"  stale or rejected by reason: {shown}")
    if "rejected_provider_result_count" in t:
        page.line(
            f"  provider results rejected by exact read: {t['rejected_provider_result_count']}"
            f" of {t['provider_result_count']} ({t['unjudged_provider_result_count']} not judged)"
        )
    if packet["candidate_emitted"]:
        page.line("  candidate: procedural_experience (review required; not ingested)")
    else:
        page.line(f"  no candidate: {', '.join(packet['ineligible_reasons'])}")


@declare(
    render=render,
    decision_id=DECISION,
    outcome=Option("--outcome", metavar="REF", help="An outcome ref (default: the latest)."),
    agent_id=AGENT,
    observed_at=OBSERVED_AT,
    wait=WAIT,
    fmt=FORMAT,
)
def command(
    g: Globals,
    *,
    decision_id: str,
    outcome: str | None,
    agent_id: str | None,
    observed_at: str | None,
    wait: float,
    fmt: str,
) -> Result:
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
    from dcx.ops.feedback import record_feedback

    return record_feedback(
        ws=g.ws(),
        decision_id=decision_id,
        outcome_ref=outcome,
        clock=g.clock(observed_at),
        wait=wait,
        agent_id=agent_id,
    )
