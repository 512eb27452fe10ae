"""``dcx feedback``: ``decision_outcome_feedback_v0`` for one outcome (SPEC §8.7).

Only canonical, untampered evidence and outcome packets are accepted (the
store re-hashes both). At most one ``procedural_experience`` candidate is
emitted — when the outcome is verified, a verified observed outcome cites
this evidence, a claim was promoted by exact read, a source revision is
current and no conflict is open — and it is never ingested or activated.
Rejected recall is telemetry only.
"""

from __future__ import annotations

from typing import Any

from dcx.chains import read_chains
from dcx.core.clock import Clock
from dcx.core.errors import Refused
from dcx.core.result import Result
from dcx.core.workspace import Workspace
from dcx.ops._common import acting_agent, check_decision_id, packet_context
from dcx.packets import evidence, feedback, outcome, review
from dcx.state import decisions
from dcx.state.statements import signed
from dcx.state.store import Store


def _assembly_retrieval(
    store: Store, ws: Workspace, decision_id: str, evidence_ref: str
) -> dict[str, Any] | None:
    for ref in decisions.refs_of(ws, decision_id, "assembly"):
        packet = store.get(ref, kind="assembly")
        if packet["evidence"]["packet_ref"] == evidence_ref:
            return packet.get("retrieval")
    return None


def evaluate(
    ev: dict[str, Any], out: dict[str, Any], retrieval: dict[str, Any] | None
) -> dict[str, Any]:
    """Telemetry, ineligible reasons and the candidate (pure: easy to test)."""
    recalled = ev["recalled_claims"]
    stale = ev["stale_or_rejected_claims"]
    verified = [o for o in out["observed_outcomes"] if o["status"] == "verified"]
    linked = [o for o in verified if o["evidence_ref"] == ev["packet_ref"]]
    open_conflicts = sum(1 for c in ev["conflicts"] if c["status"] == "open")
    current = sum(1 for r in ev["source_revisions"] if r["freshness"] == "current")
    rejected_by_read = sum(1 for c in stale if c.get("provider_ref"))
    telemetry = {
        "count_mode": "retrieval_receipt" if retrieval else "evidence_records",
        "retrieval_status": retrieval["status"] if retrieval else "not_run",
        "provider_result_count": retrieval["result_count"]
        if retrieval
        else len(recalled) + rejected_by_read,
        "accepted_claim_count": len(recalled),
        "stale_or_rejected_claim_count": len(stale),
        "rejected_by_exact_read_count": rejected_by_read,
        "changed_fact_count": len(ev["changed_facts"]),
        "open_conflict_count": open_conflicts,
        "current_source_revision_count": current,
        "verified_outcome_count": len(verified),
        "linked_verified_outcome_count": len(linked),
        "invalidated_assumption_count": len(out["invalidated_assumptions"]),
        **rejection_counts(stale),
        **provider_health_counts(retrieval),
        **receipt_result_counts(retrieval, recalled, stale),
    }
    reasons = []
    if out["verification_status"] != "verified":
        reasons.append("outcome_not_verified")
    if not out["reward_memory_candidate_eligible"]:
        reasons.append("outcome_not_candidate_eligible")
    if not linked:
        reasons.append("verified_outcome_not_linked_to_evidence")
    if not recalled:
        reasons.append("no_exact_read_promoted_claim")
    if not current:
        reasons.append("no_current_source_revision")
    if open_conflicts:
        reasons.append("unresolved_authority_conflict")
    candidate = None
    if not reasons:
        candidate = {
            "candidate_kind": "procedural_experience",
            "review_required": True,
            "ingested": False,
            "activated": False,
            "summary": f"Exact-read confirmed recall preceded a verified outcome in decision {ev['decision_id']}"[
                :220
            ],
            "evidence_packet_ref": ev["packet_ref"],
            "outcome_packet_ref": out["packet_ref"],
            "claim_ids": [c["claim_id"] for c in recalled],
        }
    return {"telemetry": telemetry, "ineligible_reasons": sorted(reasons), "candidate": candidate}


def rejection_counts(stale: list[dict[str, Any]]) -> dict[str, Any]:
    """The evidence's stale or rejected records by reason code (SPEC §8.7 v4): aggregate records,
    so a provider result rejected twice, or a record citing no provider result, counts each."""
    counts: dict[str, int] = {}
    for claim in stale:
        counts[claim["reason_code"]] = counts.get(claim["reason_code"], 0) + 1
    return {"rejection_reason_counts": counts}


def provider_health_counts(retrieval: dict[str, Any] | None) -> dict[str, Any]:
    """The canonical retrieval receipt's health: completed, partial (completed with items of the
    answer dropped) or unavailable by reason; all zero when no recall ran."""
    health: dict[str, Any] = {
        "completed": 0,
        "partial": 0,
        "unavailable": 0,
        "unavailable_by_reason": {},
    }
    if retrieval is not None:
        if retrieval["status"] != "completed":
            health["unavailable"] = 1
            health["unavailable_by_reason"] = {retrieval["reason_code"]: 1}
        elif retrieval["telemetry"]["items_dropped"]:
            health["partial"] = 1
        else:
            health["completed"] = 1
    return {"provider_health_counts": health}


def receipt_result_counts(
    retrieval: dict[str, Any] | None, recalled: list[dict[str, Any]], stale: list[dict[str, Any]]
) -> dict[str, Any]:
    """With a retrieval receipt, its own results judged: the ones rejected by exact read (a stale
    or rejected record cites them, no accepted claim does) and the ones no record cites. Kept apart
    from the aggregate records, which can cite one result twice or a result of another run."""
    if retrieval is None:
        return {}
    accepted = {c["provider_ref"] for c in recalled}
    rejected = {c["provider_ref"] for c in stale if c.get("provider_ref")} - accepted
    results = {r["provider_ref"] for r in retrieval["results"]}
    return {
        "rejected_provider_result_count": len(results & rejected),
        "unjudged_provider_result_count": len(results - accepted - rejected),
    }


@signed("feedback")  # one signed statement of what it read and wrote (SPEC §18)
def record_feedback(
    *,
    ws: Workspace,
    decision_id: str,
    outcome_ref: str | None,
    clock: Clock,
    wait: float,
    agent_id: str | None = None,
) -> Result:
    check_decision_id(decision_id)
    store = Store(ws)
    agent = acting_agent(ws, agent_id)
    known = decisions.refs_of(ws, decision_id, "outcome")
    chains = read_chains(ws, store, decision_id, agent)
    reviews = [
        store.get(ref, kind=review.SPEC.kind)
        for ref in decisions.refs_of(ws, decision_id, "review")
    ]
    if outcome_ref is None:
        if not known:
            settled = reviews[-1]["disposition"] if reviews else None
            if settled in ("reject", "defer", "no_change"):
                raise Refused(
                    f"decision {decision_id} was settled by review ({settled}): no outcome is expected, "
                    "so there is nothing to learn from",
                    code="outcome_missing",
                )
            due = " (the approve left an observed outcome due)" if settled == "approve" else ""
            raise Refused(
                f"decision {decision_id} has no outcome{due}",
                code="outcome_missing",
                hint=f"run `dcx outcome --decision-id {decision_id}` first",
            )
        own = chains.own("outcome") if chains.why != "latest" else []
        outcome_ref = own[-1] if own else known[-1]  # the own chain's latest outcome (SPEC §16)
    else:
        outcome_ref = store.resolve(outcome_ref)
        if outcome_ref not in known:
            raise Refused(
                f"{outcome_ref} is not an outcome of decision {decision_id}",
                code="outcome_not_in_decision",
            )
    out = store.get(outcome_ref, kind=outcome.SPEC.kind)
    ev = store.get(out["evidence_packet_ref"], kind=evidence.SPEC.kind)
    retrieval = _assembly_retrieval(store, ws, decision_id, ev["packet_ref"])
    verdict = evaluate(ev, out, retrieval)
    approved = [
        r
        for r in reviews
        if r["disposition"] == "approve"
        and r.get("proposal_packet_ref") == out["proposal_packet_ref"]
    ]
    values = {
        "evidence_packet_ref": ev["packet_ref"],
        "outcome_packet_ref": out["packet_ref"],
        "retrieval_ref": retrieval["retrieval_ref"] if retrieval else None,
        "review_packet_ref": approved[-1]["packet_ref"] if approved else None,
        "telemetry": verdict["telemetry"],
        "candidate_emitted": verdict["candidate"] is not None,
        "candidate": verdict["candidate"],
        "ineligible_reasons": verdict["ineligible_reasons"],
    }
    existing = _same_feedback(store, ws, decision_id, values)
    if existing is not None:  # same inputs, same packet: the time of asking is not an input
        return Result(
            "feedback", {"feedback": existing, "recorded": False}, warnings=chains.warnings
        )
    values["observed_at"] = clock.now()
    packet = store.put(feedback.SPEC, packet_context(ws, decision_id, agent), values)
    decisions.append(
        ws, decision_id, "feedback", packet["feedback_ref"], packet["observed_at"], wait=wait
    )
    return Result("feedback", {"feedback": packet, "recorded": True}, warnings=chains.warnings)


def _same_feedback(
    store: Store, ws: Workspace, decision_id: str, values: dict[str, Any]
) -> dict[str, Any] | None:
    """The decision's stored feedback that says exactly ``values`` (every field but the time), if any."""
    for ref in reversed(decisions.refs_of(ws, decision_id, "feedback")):
        packet = store.get(ref, kind=feedback.SPEC.kind)
        if all(packet.get(key) == value for key, value in values.items()):
            return packet
    return None
