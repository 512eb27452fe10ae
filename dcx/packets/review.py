"""``decision_review_receipt_v0``: how a decision was settled (SPEC §10).

A person approves, rejects or defers a proposal through a recorded user gate
(``dcx gate``, or a LoopX host's gate event), or the quiet path settles a
semantic no-change without a proposal or gate. The receipt binds that gate to
the evidence and proposal; settlement, not the outcome, is the cursor
boundary. It has no wall-clock field of its own (``recorded_at`` is the gate
event's, or the assembly's for ``no_change``), so settling the same gate again
re-derives the same ref.
"""

from __future__ import annotations

from typing import Any

from dcx.core.fields import Bool, Enum, ReasonCode, Ref, Summary, Timestamp, Token
from dcx.packets import declare

DISPOSITIONS = ("approve", "reject", "defer", "no_change")
GATED = ("approve", "reject", "defer")
GATE_FIELDS = ("proposal_packet_ref", "gate_todo_id", "source_event_id")

SPEC = declare(
    "review",
    decision_scoped=True,
    doc="A decision's settlement: a person's gate (approve, reject, defer) or a quiet semantic no-change.",
    fields={
        "disposition": Enum(
            values=DISPOSITIONS,
            doc="approve|reject|defer from the gate event; no_change on the quiet path.",
        ),
        "evidence_packet_ref": Ref(
            "decision-evidence", doc="The evidence this settlement consumed."
        ),
        "proposal_packet_ref": Ref(
            "decision-proposal",
            optional=True,
            doc="The proposal the gate decided (absent for no_change).",
        ),
        "gate_todo_id": Token(
            limit=160, optional=True, doc="The gate's todo id (absent for no_change)."
        ),
        "source_event_id": Token(
            limit=160,
            optional=True,
            doc="The user-gate event that decided it (absent for no_change).",
        ),
        "actor_ref": Token(
            doc="Who decided: the gate's actor, or the agent that settled a no_change."
        ),
        "reason_code": ReasonCode(
            doc="Why, as a code (default owner_approved|owner_rejected|owner_deferred|semantic_no_change)."
        ),
        "summary": Summary(doc="Public-safe one-line account of the settlement."),
        "recorded_at": Timestamp(
            doc="The gate event's recorded_at (the assembly's observed_at for no_change)."
        ),
        "authority_confirmation_required": Bool(
            doc="True for a gated settlement, false for no_change."
        ),
        "authority_confirmed": Bool(
            doc="True for a gated settlement (a person decided), false for no_change."
        ),
        "quiet_noop": Bool(doc="True only for no_change."),
        "outcome_observation_required": Bool(doc="True iff approve: an observed outcome is due."),
        "cursor_commit_allowed": Bool(doc="Always true: settlement is the cursor boundary."),
    },
)

DEFAULT_REASONS = {
    "approve": "owner_approved",
    "reject": "owner_rejected",
    "defer": "owner_deferred",
    "no_change": "semantic_no_change",
}


def flags(disposition: str) -> dict[str, bool]:
    """The constant flags a disposition implies (SPEC §10)."""
    gated = disposition in GATED
    return {
        "authority_confirmation_required": gated,
        "authority_confirmed": gated,
        "quiet_noop": not gated,
        "outcome_observation_required": disposition == "approve",
        "cursor_commit_allowed": True,
    }


def rule_problems(packet: dict[str, Any]) -> list[str]:
    """What a stored receipt breaks of the rules it was built by (verify reads these)."""
    problems = []
    disposition = packet.get("disposition")
    gated = disposition in GATED
    for name in GATE_FIELDS:
        if gated and name not in packet:
            problems.append(f"a gated review ({disposition}) has no {name}")
        if not gated and name in packet:
            problems.append(f"a no_change review carries {name}")
    for name, value in flags(str(disposition)).items():
        if packet.get(name) is not value:
            problems.append(f"{name} must be {str(value).lower()} for {disposition}")
    return problems
