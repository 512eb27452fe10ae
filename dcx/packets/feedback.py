"""``decision_outcome_feedback_v0`` (SPEC §8.7).

Closes the loop without making anything authoritative: aggregate retrieval
and outcome telemetry, and at most one ``procedural_experience`` Reward Memory
candidate that is never ingested, reviewed, persisted as memory or activated.
"""

from __future__ import annotations

from dcx.core.fields import (
    Bool,
    Const,
    Enum,
    Int,
    Map,
    Obj,
    Ref,
    Shape,
    Summary,
    Timestamp,
    Tokens,
)
from dcx.packets import declare

INELIGIBLE = (
    "no_current_source_revision",
    "no_exact_read_promoted_claim",
    "outcome_not_candidate_eligible",
    "outcome_not_verified",
    "unresolved_authority_conflict",
    "verified_outcome_not_linked_to_evidence",
)

HEALTH_COUNTS = Shape(
    "feedback_provider_health_counts",
    {
        "completed": Int(lo=0, doc="Retrieval receipts completed with nothing dropped."),
        "partial": Int(
            lo=0,
            doc="Completed, but items of the provider's answer were dropped (telemetry.items_dropped > 0).",
        ),
        "unavailable": Int(lo=0),
        "unavailable_by_reason": Map(doc="Unavailable receipts by reason code."),
    },
)

TELEMETRY = Shape(
    "feedback_telemetry",
    {
        "count_mode": Enum(values=("retrieval_receipt", "evidence_records")),
        "retrieval_status": Enum(values=("completed", "unavailable", "not_run")),
        "provider_result_count": Int(lo=0),
        "accepted_claim_count": Int(lo=0),
        "stale_or_rejected_claim_count": Int(lo=0),
        "rejected_by_exact_read_count": Int(lo=0),
        "changed_fact_count": Int(lo=0),
        "open_conflict_count": Int(lo=0),
        "current_source_revision_count": Int(lo=0),
        "verified_outcome_count": Int(lo=0),
        "linked_verified_outcome_count": Int(lo=0),
        "invalidated_assumption_count": Int(lo=0),
        # SPEC §8.7 v4 (optional: feedback stored before them still verifies)
        "rejection_reason_counts": Map(
            optional=True,
            doc="Stale or rejected claim records of the evidence, by reason code (aggregate records).",
        ),
        "provider_health_counts": Obj(
            shape=HEALTH_COUNTS,
            optional=True,
            doc="The canonical retrieval receipt's health (all zero when no recall ran).",
        ),
        "rejected_provider_result_count": Int(
            lo=0,
            optional=True,
            doc=(
                "With a retrieval receipt only: its results that a stale or rejected record cites "
                "and no accepted claim does — the actual provider results rejected by exact read."
            ),
        ),
        "unjudged_provider_result_count": Int(
            lo=0,
            optional=True,
            doc="With a retrieval receipt only: its results that no claim record cites at all.",
        ),
    },
)

CANDIDATE = Shape(
    "reward_memory_candidate",
    {
        "candidate_kind": Const(value="procedural_experience"),
        "summary": Summary(),
        "evidence_packet_ref": Ref("decision-evidence"),
        "outcome_packet_ref": Ref("decision-outcome"),
        "claim_ids": Tokens(min_items=1, max_items=256),
        "review_required": Const(value=True),
        "ingested": Const(value=False),
        "activated": Const(value=False),
    },
)

SPEC = declare(
    "feedback",
    decision_scoped=True,
    doc="Outcome feedback: telemetry and at most one never-ingested Reward Memory candidate.",
    fields={
        "observed_at": Timestamp(),
        "evidence_packet_ref": Ref("decision-evidence"),
        "outcome_packet_ref": Ref("decision-outcome"),
        "retrieval_ref": Ref("context-retrieval", optional=True),
        "review_packet_ref": Ref(
            "decision-review",
            optional=True,
            doc="The approve that settled the decision, when it was settled by review.",
        ),
        "telemetry": Obj(shape=TELEMETRY),
        "candidate_emitted": Bool(),
        "candidate": Obj(shape=CANDIDATE, optional=True),
        "ineligible_reasons": Tokens(max_items=len(INELIGIBLE), item=Enum(values=INELIGIBLE)),
        "memory_ingested": Const(value=False),
        "authority_granted": Const(value=False),
    },
)
