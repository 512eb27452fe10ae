"""``dcx_decision_quality_report_v0``: what ``dcx report --format json`` prints in ``data`` (SPEC §13).

Not a stored packet: a projection computed from public packets. Declared with
the packet spec library so its JSON Schema in docs/schemas/ is generated, never
hand-written. Definitions of every measure: docs/report.md.
"""

from __future__ import annotations

from dcx.core.fields import (
    Any_,
    Bool,
    Const,
    DecisionId,
    Enum,
    Int,
    Map,
    Number,
    Obj,
    Pattern,
    Records,
    Shape,
    Text,
    Timestamp,
    Token,
    Tokens,
)
from dcx.core.vocab import SOURCE_ALERTS, SOURCE_KINDS

MANY = 10**7
COUNT = Int(lo=0)
REF = Pattern(regex="[a-z][a-z0-9-]*[a-z0-9]-[0-9a-f]{32}", limit=160, what="a packet ref")
OUTCOMES = ("verified", "refuted", "inconclusive", "pending", "none")
STOP = ("mattered", "stop", "no_volume")
DISPOSITIONS = ("approve", "reject", "defer", "no_change")


def _n(**kw: object) -> Number:
    return Number(nullable=True, **kw)


AUTHORITY = Shape(
    "report_authority",
    {
        "prepares": COUNT,
        "source_reads": COUNT,
        "exact_reads": COUNT,
        "changed_facts": COUNT,
        "coverage_partial": COUNT,
        "sources": Int(lo=0, optional=True, doc="Distinct source ids (per decision only)."),
    },
)
PROVIDER = Shape(
    "report_provider",
    {
        "goal_id": Token(optional=True),
        "provider": Token(),
        "calls": COUNT,
        "results": COUNT,
        "accepted": COUNT,
        "stale": COUNT,
        "stale_by_reason": Map(),
        "rejected": COUNT,
        "rejected_by_reason": Map(),
        "unavailable": COUNT,
        "unavailable_by_reason": Map(),
        "acceptance_rate": _n(
            lo=0, hi=1, doc="accepted / (accepted + stale + rejected); null without claims."
        ),
        "stop_condition": Enum(
            values=STOP,
            doc="stop: volume that never changed a decision nor reached an outcome receipt.",
        ),
    },
)
BIN = Shape(
    "report_calibration_bin",
    {
        "bin": Token(),
        "lower": Number(lo=0, hi=1),
        "upper": Number(lo=0, hi=1),
        "count": COUNT,
        "mean_confidence": _n(lo=0, hi=1),
        "observed_rate": _n(lo=0, hi=1),
    },
)
CALIBRATION = Shape(
    "report_calibration",
    {
        "scored": COUNT,
        "brier_score": _n(
            lo=0, hi=1, doc="Mean of (confidence - outcome)^2, outcome 1 verified / 0 refuted."
        ),
        "bins": Records(shape=BIN, min_items=5, max_items=5, ordered=True),
        "left_out": Obj(
            shape=Shape(
                "report_calibration_left_out",
                {"pending": COUNT, "inconclusive": COUNT, "none": COUNT, "no_confidence": COUNT},
            )
        ),
    },
)
SUMMARY = Shape(
    "report_summary",
    {
        "decisions": COUNT,
        "authority": Obj(shape=AUTHORITY),
        "recall": Obj(
            shape=Shape(
                "report_recall",
                {
                    "calls": COUNT,
                    "results": COUNT,
                    "accepted": COUNT,
                    "stale": COUNT,
                    "rejected": COUNT,
                    "unavailable": COUNT,
                    "stale_by_reason": Map(),
                    "rejected_by_reason": Map(),
                    "unavailable_by_reason": Map(),
                },
            )
        ),
        "stale_claims": Obj(
            shape=Shape(
                "report_stale_claims",
                {
                    "presented": COUNT,
                    "demoted": COUNT,
                    "accepted_stale": Int(
                        lo=0, doc="Must be 0: any other value makes the report exit 1."
                    ),
                    "rejection_rate": _n(lo=0, hi=1),
                },
            )
        ),
        "decision_changes": Obj(
            shape=Shape(
                "report_decision_changes",
                {
                    "evidence_driven": COUNT,
                    "decisions_changed": COUNT,
                    "without_new_evidence": COUNT,
                },
            )
        ),
        "outcomes": Obj(
            shape=Shape(
                "report_outcomes",
                {
                    **{k: COUNT for k in OUTCOMES},
                    "linked_verified": COUNT,
                    "invalidated_assumptions": COUNT,
                    "time_to_verified_seconds": Obj(
                        shape=Shape(
                            "report_time_to_verified",
                            {"count": COUNT, "median": _n(lo=0), "min": _n(lo=0), "max": _n(lo=0)},
                        )
                    ),
                },
            )
        ),
        "calibration": Obj(shape=CALIBRATION),
        "reviews": Obj(
            shape=Shape(
                "report_reviews",
                {
                    "receipts": Int(lo=0, doc="Review receipts (decision_review_receipt_v0) read."),
                    "decisions_reviewed": Int(
                        lo=0, doc="Decisions with at least one review receipt."
                    ),
                    "by_disposition": Obj(
                        shape=Shape("report_dispositions", {k: COUNT for k in DISPOSITIONS}),
                        doc="Decisions by the disposition of their latest review receipt.",
                    ),
                    "approved_verified": Int(
                        lo=0, doc="Latest review approve and latest outcome verified."
                    ),
                    "approved_refuted": Int(
                        lo=0, doc="Latest review approve and latest outcome refuted."
                    ),
                    "outcome_due": Int(
                        lo=0, doc="Approved, and no outcome receipt with observed outcomes yet."
                    ),
                    "time_to_review_seconds": Obj(
                        shape=Shape(
                            "report_time_to_review",
                            {"count": COUNT, "median": _n(lo=0), "min": _n(lo=0), "max": _n(lo=0)},
                        ),
                        doc="From the reviewed proposal's observed_at to the review's recorded_at.",
                    ),
                },
            )
        ),
    },
)
CHANGE = Shape(
    "report_decision_change",
    {
        "from_option": Token(),
        "to_option": Token(),
        "from_proposal": REF,
        "to_proposal": REF,
        "from_evidence": REF,
        "to_evidence": REF,
        "observed_at": Timestamp(),
        "comparable": Bool(
            doc="false when the two evidence packets carry different key ids (refs not compared)."
        ),
        "facts_added": Records(
            max_items=MANY, shape=Shape("report_fact", {"fact_id": Token(), "summary": Text()})
        ),
        "facts_removed": Records(
            max_items=MANY, shape=Shape("report_fact", {"fact_id": Token(), "summary": Text()})
        ),
        "claims_changed": Records(
            max_items=MANY,
            shape=Shape(
                "report_claim_change",
                {
                    "claim_id": Token(),
                    "summary": Text(),
                    "before": Token(),
                    "after": Token(),
                    "provider_ref": Any_(optional=True),
                },
            ),
        ),
    },
)
STALE_CLAIM = Shape(
    "report_accepted_stale_claim",
    {
        "goal_id": Token(),
        "decision_id": DecisionId(),
        "claim_id": Token(),
        "evidence_ref": REF,
        "summary": Text(),
    },
)
DECISION = Shape(
    "report_decision",
    {
        "goal_id": Token(),
        "decision_id": DecisionId(),
        "agents": Tokens(
            max_items=MANY, doc="agent_id / proposed_by / recorded_by seen on its packets."
        ),
        "started_at": Timestamp(
            nullable=True,
            doc="The proposal the latest outcome links to (else the latest proposal).",
        ),
        "confidence": _n(lo=0, hi=1),
        "recommended_option": Token(nullable=True),
        "proposals": COUNT,
        "outcome_receipts": COUNT,
        "outcome": Enum(values=OUTCOMES),
        "outcome_at": Timestamp(nullable=True),
        "outcome_linked": Bool(),
        "invalidated_assumptions": Records(
            max_items=MANY,
            shape=Shape("report_assumption", {"assumption_id": Token(), "summary": Text()}),
        ),
        "time_to_verified_seconds": Int(lo=0, nullable=True),
        "authority": Obj(shape=AUTHORITY),
        "providers": Records(max_items=MANY, shape=PROVIDER),
        "stale_demoted": COUNT,
        "accepted_stale": Records(max_items=MANY, shape=STALE_CLAIM),
        "changes": Records(max_items=MANY, shape=CHANGE),
        "changes_without_new_evidence": COUNT,
        "review": Obj(
            shape=Shape(
                "report_decision_review",
                {
                    "receipts": COUNT,
                    "disposition": Enum(
                        values=DISPOSITIONS,
                        nullable=True,
                        doc="Of the latest review receipt; null without one.",
                    ),
                    "settled_at": Timestamp(
                        nullable=True, doc="The latest review receipt's recorded_at."
                    ),
                    "proposal_reviewed": Bool(
                        doc="The latest receipt names one of this decision's proposals."
                    ),
                    "time_to_review_seconds": Int(
                        lo=0,
                        nullable=True,
                        doc="From that proposal's observed_at to the receipt's recorded_at.",
                    ),
                    "outcome_due": Bool(
                        doc="Approved, and no outcome receipt with observed outcomes yet."
                    ),
                },
            )
        ),
    },
)
SIGNATURES = Shape(
    "report_signatures",
    {"signed": COUNT, "unsigned": COUNT, "failed": COUNT},
    doc="The measured packets by signature (SPEC §18): signed by their agent, named by no "
    "statement, or named only by statements that fail (or by another agent's).",
)
SOURCE_ALERTS_ROW = Shape(
    "report_source_alerts",
    {
        "source_kind": Enum(values=SOURCE_KINDS),
        "alert": Enum(values=SOURCE_ALERTS),
        "raised": Int(lo=0, doc="Scan receipts that raised this alert for a source of this kind."),
        "cleared": Int(lo=0, doc="Scan receipts that cleared it."),
    },
)
GOAL = Shape(
    "report_goal",
    {
        "goal_id": Token(),
        "summary": Obj(shape=SUMMARY),
        "providers": Records(max_items=MANY, shape=PROVIDER),
        "agents": Tokens(max_items=MANY),
        "key_ids": Map(max_items=MANY, doc="Packets read, by key id."),
        "foreign_key_ids": Tokens(
            max_items=MANY, doc="Key ids other than the goal's: measured, refs not compared."
        ),
        "other_packets": Map(
            max_items=MANY,
            doc="Indexed packets of kinds the report does not measure (commit, feedback, …).",
        ),
        "signatures": Obj(shape=SIGNATURES),
        "source_alerts": Records(
            max_items=len(SOURCE_KINDS) * len(SOURCE_ALERTS),
            shape=SOURCE_ALERTS_ROW,
            optional=True,
            doc="SPEC §5.5 v4: freshness alerts raised and cleared, per source kind (scan receipts).",
        ),
    },
)
GATE = Shape(
    "report_promotion_gate",
    {
        "status": Enum(values=("not_proven", "proven_once", "reproduced")),
        "goals_proving": Tokens(max_items=MANY),
        "goals": Records(
            max_items=MANY,
            shape=Shape(
                "report_gate_goal",
                {
                    "goal_id": Token(),
                    "stale_rejection": Bool(),
                    "outcome_linkage": Bool(),
                    "proves": Bool(),
                },
            ),
        ),
    },
)

SHAPE = Shape(
    "dcx_decision_quality_report_v0",
    {
        "schema_version": Const(value="dcx_decision_quality_report_v0"),
        "filters": Obj(
            shape=Shape(
                "report_filters",
                {"decision_id": DecisionId(nullable=True), "since": Timestamp(nullable=True)},
            )
        ),
        "goals": Records(max_items=MANY, shape=GOAL),
        "totals": Obj(shape=SUMMARY),
        "providers": Records(max_items=MANY, shape=PROVIDER),
        "promotion_gate": Obj(shape=GATE),
        "source_alerts": Records(
            max_items=len(SOURCE_KINDS) * len(SOURCE_ALERTS),
            shape=SOURCE_ALERTS_ROW,
            optional=True,
            doc="The goals' source_alerts, summed.",
        ),
        "decisions": Records(max_items=MANY, shape=DECISION),
        "accepted_stale_claims": Records(max_items=MANY, shape=STALE_CLAIM),
        "signatures": Obj(shape=SIGNATURES),
        "left_out": Records(
            max_items=MANY,
            shape=Shape(
                "report_left_out",
                {
                    "goal_id": Token(),
                    "file": Text(limit=1000),
                    "ref": Text(limit=200),
                    "problem": Text(limit=1000),
                },
            ),
        ),
    },
    doc="Decision quality measured from public packets (dcx report --format json: the envelope's data).",
)
