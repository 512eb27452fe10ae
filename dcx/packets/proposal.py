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
    {"objective_id": Token(), "score": Number(lo=0, hi=1), "rationale": Text()},
)
RECOMMENDED = Shape(
    "recommended_decision",
    {
        "option_id": Token(),
        "summary": Summary(),
        "rationale": Text(),
        "confidence": Number(lo=0, hi=1),
    },
)
ALTERNATIVE = Shape(
    "alternative",
    {
        "alternative_id": Token(),
        "summary": Summary(),
        "tradeoff": Text(),
        "rank": Int(lo=1, hi=1000, optional=True),
    },
)
NEXT_ACTION = Shape(
    "next_action",
    {
        "action_id": Token(),
        "owner_ref": Token(),
        "summary": Summary(),
        "acceptance": Text(),
        "stop_condition": Text(),
        "rank": Int(lo=1, hi=1000, optional=True),
    },
)
STOP = Shape("stop", {"stop_id": Token(), "summary": Summary(), "condition": Text()})


SPEC = declare(
    "proposal",
    decision_scoped=True,
    doc="Advisory reasoning bound to one evidence packet; requires authority confirmation.",
    fields={
        "objective_scores": Records(
            shape=OBJECTIVE_SCORE, id_field="objective_id", min_items=1, max_items=64
        ),
        "recommended_decision": Obj(shape=RECOMMENDED),
        "alternatives": Records(shape=ALTERNATIVE, id_field="alternative_id", max_items=32),
        "next_actions": Records(shape=NEXT_ACTION, id_field="action_id", max_items=64),
        "stop_list": Records(shape=STOP, id_field="stop_id", max_items=64),
        "review_at": Timestamp(),
        "evidence_packet_ref": Ref("decision-evidence", computed=True),
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
