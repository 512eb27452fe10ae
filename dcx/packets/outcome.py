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
        "option_id": Token(
            doc="The proposal's recommended option_id or one of its alternative_ids."
        ),
        "summary": Summary(doc="What was accepted, in one line."),
        "accepted_by": Token(
            doc="Who decided (not the acting agent, unless the profile allows it)."
        ),
        "accepted_at": Timestamp(doc="When it was decided (RFC 3339, UTC)."),
    },
)
TRANSITION = Shape(
    "resulting_transition",
    {
        "transition_id": Token(doc="A short id for the change that followed."),
        "summary": Summary(doc="The change, in one line."),
        "status": Token(doc="Where it stands (a token, e.g. planned, done)."),
        "event_ref": Token(optional=True, doc="The lifecycle event that records it, if any."),
    },
)
OBSERVED = Shape(
    "observed_outcome",
    {
        "outcome_id": Token(doc="A short id for what was observed."),
        "summary": Summary(doc="What was observed, in one line."),
        "evidence_ref": Token(limit=160, doc="What shows it (a packet ref, a ticket id)."),
        "status": Enum(values=VERIFICATION, doc="How it stands now."),
        "observed_at": Timestamp(doc="When it was observed (RFC 3339, UTC)."),
    },
)
INVALIDATED = Shape(
    "invalidated_assumption",
    {
        "assumption_id": Token(doc="A short id for the assumption."),
        "summary": Summary(doc="The assumption that no longer holds, in one line."),
        "evidence_ref": Token(limit=160, doc="What shows it (a packet ref, a ticket id)."),
        "invalidated_at": Timestamp(doc="When it was found not to hold (RFC 3339, UTC)."),
    },
)


SPEC = declare(
    "outcome",
    decision_scoped=True,
    doc="Append-only record of the accepted decision, transitions and observed outcomes.",
    fields={
        "accepted_decision": Obj(shape=ACCEPTED, doc="What a person accepted."),
        "resulting_transitions": Records(
            shape=TRANSITION,
            id_field="transition_id",
            max_items=64,
            doc="What changed because of it (may be empty).",
        ),
        "observed_outcomes": Records(
            shape=OBSERVED,
            id_field="outcome_id",
            max_items=64,
            doc="What was observed since (may be empty while pending).",
        ),
        "invalidated_assumptions": Records(
            shape=INVALIDATED,
            id_field="assumption_id",
            max_items=64,
            doc="Assumptions found not to hold (may be empty).",
        ),
        "verification_status": Enum(
            values=VERIFICATION,
            doc="The outcome as a whole; verified needs a verified observed outcome.",
        ),
        "review_at": Timestamp(doc="When to look at this outcome again (RFC 3339, UTC)."),
        "proposal_packet_ref": Ref(
            "decision-proposal",
            computed=True,
            doc="The proposal this outcome answers (default: the latest of your own chain).",
        ),
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
