"""``decision_outcome_receipt_v0``: the append-only result layer (SPEC §8.4).

A later receipt (e.g. verified after pending) is a new packet, never a rewrite.
Only a verified receipt with a verified observed outcome is eligible to
create a Reward Memory candidate.
"""

from __future__ import annotations

from dcx.core.fields import Bool, Enum, Obj, Records, Ref, Shape, Summary, Timestamp, Token
from dcx.packets import declare

VERIFICATION = ("pending", "verified", "refuted", "inconclusive")

ACCEPTED = Shape(
    "accepted_decision",
    {
        "option_id": Token(),
        "summary": Summary(),
        "accepted_by": Token(),
        "accepted_at": Timestamp(),
    },
)
TRANSITION = Shape(
    "resulting_transition",
    {
        "transition_id": Token(),
        "summary": Summary(),
        "status": Token(),
        "event_ref": Token(optional=True),
    },
)
OBSERVED = Shape(
    "observed_outcome",
    {
        "outcome_id": Token(),
        "summary": Summary(),
        "evidence_ref": Token(limit=160),
        "status": Enum(values=VERIFICATION),
        "observed_at": Timestamp(),
    },
)
INVALIDATED = Shape(
    "invalidated_assumption",
    {
        "assumption_id": Token(),
        "summary": Summary(),
        "evidence_ref": Token(limit=160),
        "invalidated_at": Timestamp(),
    },
)


SPEC = declare(
    "outcome",
    decision_scoped=True,
    doc="Append-only record of the accepted decision, transitions and observed outcomes.",
    fields={
        "accepted_decision": Obj(shape=ACCEPTED),
        "resulting_transitions": Records(shape=TRANSITION, id_field="transition_id", max_items=64),
        "observed_outcomes": Records(shape=OBSERVED, id_field="outcome_id", max_items=64),
        "invalidated_assumptions": Records(
            shape=INVALIDATED, id_field="assumption_id", max_items=64
        ),
        "verification_status": Enum(values=VERIFICATION),
        "review_at": Timestamp(),
        "proposal_packet_ref": Ref("decision-proposal", computed=True),
        "evidence_packet_ref": Ref("decision-evidence", computed=True),
        "observed_at": Timestamp(computed=True),
        "recorded_by": Token(computed=True),
        "reward_memory_candidate_eligible": Bool(computed=True),
    },
)

# What an agent writes (`dcx outcome --from FILE`): the fields dcx does not compute
INPUT = SPEC.input_shape(
    "decision_outcome_input",
    doc="Input of `dcx outcome --from`: what was decided and what was observed.",
    accepted=("proposal_packet_ref",),
)
