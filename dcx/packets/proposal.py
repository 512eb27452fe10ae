"""``decision_proposal_v0``: the advisory reasoning layer (SPEC §8.3).

Objective scores, a recommended decision, alternatives, next actions and a
stop list, bound to one evidence packet. It is never Core truth: it always
requires authority confirmation.
"""

from __future__ import annotations

from dcx.core.fields import (
    Const,
    Int,
    Number,
    Obj,
    Records,
    Ref,
    Shape,
    Summary,
    Text,
    Timestamp,
    Token,
)
from dcx.packets import declare

OBJECTIVE_SCORE = Shape(
    "objective_score",
    {
        "objective_id": Token(doc="An objective of the goal this score is about."),
        "score": Number(lo=0, hi=1, doc="How well the recommendation serves it, 0..1."),
        "rationale": Text(doc="Why, in a sentence or two."),
    },
)
RECOMMENDED = Shape(
    "recommended_decision",
    {
        "option_id": Token(doc="A short id for the option recommended."),
        "summary": Summary(doc="What to do, in one line."),
        "rationale": Text(doc="Why this option, citing the evidence."),
        "confidence": Number(lo=0, hi=1, doc="The agent's confidence, 0..1 (never a score)."),
    },
)
ALTERNATIVE = Shape(
    "alternative",
    {
        "alternative_id": Token(doc="A short id; an outcome may accept it instead."),
        "summary": Summary(doc="The alternative, in one line."),
        "tradeoff": Text(doc="What it would cost or gain against the recommendation."),
        "rank": Int(lo=1, hi=1000, optional=True, doc="Order among the alternatives, 1 first."),
    },
)
NEXT_ACTION = Shape(
    "next_action",
    {
        "action_id": Token(doc="A short id for the action."),
        "owner_ref": Token(doc="Who does it (a person or team token)."),
        "summary": Summary(doc="The action, in one line."),
        "acceptance": Text(doc="How to tell it is done."),
        "stop_condition": Text(doc="When to stop doing it."),
        "rank": Int(lo=1, hi=1000, optional=True, doc="Order among the actions, 1 first."),
    },
)
STOP = Shape(
    "stop",
    {
        "stop_id": Token(doc="A short id."),
        "summary": Summary(doc="What must not be done, in one line."),
        "condition": Text(doc="The condition under which it applies."),
    },
)


SPEC = declare(
    "proposal",
    decision_scoped=True,
    doc="Advisory reasoning bound to one evidence packet; requires authority confirmation.",
    fields={
        "objective_scores": Records(
            shape=OBJECTIVE_SCORE,
            id_field="objective_id",
            min_items=1,
            max_items=64,
            doc="How the recommendation serves each objective (at least one).",
        ),
        "recommended_decision": Obj(shape=RECOMMENDED, doc="The option the agent recommends."),
        "alternatives": Records(
            shape=ALTERNATIVE,
            id_field="alternative_id",
            max_items=32,
            doc="Options weighed and not recommended (may be empty).",
        ),
        "next_actions": Records(
            shape=NEXT_ACTION,
            id_field="action_id",
            max_items=64,
            doc="What should happen next if the recommendation is accepted (may be empty).",
        ),
        "stop_list": Records(
            shape=STOP,
            id_field="stop_id",
            max_items=64,
            doc="What must not be done (may be empty).",
        ),
        "review_at": Timestamp(doc="When to look at this decision again (RFC 3339, UTC)."),
        "evidence_packet_ref": Ref(
            "decision-evidence",
            computed=True,
            doc="The evidence this proposal is bound to (default: the latest of your own chain).",
        ),
        "observed_at": Timestamp(computed=True),
        "proposed_by": Token(computed=True),
        "authority_confirmation_required": Const(value=True, computed=True),
    },
)

# What an agent writes (`dcx propose --from FILE`): the fields dcx does not compute
INPUT = SPEC.input_shape(
    "decision_proposal_input",
    doc="Input of `dcx propose --from`: the agent's advisory reasoning.",
    accepted=("evidence_packet_ref",),
)
