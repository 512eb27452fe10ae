"""``decision_cursor_commit_receipt_v0`` (SPEC §8.6).

A pure function of the checkpoint, the event and the per-source before/after
refs: it has no wall-clock field, so a replayed commit re-derives the same ref.
"""

from __future__ import annotations

from dcx.core.fields import Const, Enum, Records, Ref, Shape, Token
from dcx.packets import declare

SOURCE_ROW = Shape(
    "commit_source",
    {
        "source_id": Token(),
        "cursor_before_ref": Ref("source-cursor"),
        "cursor_after_ref": Ref("source-cursor"),
        "result": Enum(values=("advanced", "replayed")),
    },
)

SPEC = declare(
    "commit",
    decision_scoped=True,
    doc="Proof that private cursors advanced after a verified writeback event (legacy chain) or review settlement.",
    fields={
        "assembly_ref": Ref("decision-context-assembly"),
        "checkpoint_ref": Ref("decision-cursor-checkpoint"),
        "evidence_packet_ref": Ref("decision-evidence"),
        "proposal_packet_ref": Ref(
            "decision-proposal",
            optional=True,
            doc="The chain's proposal (absent for a no_change review).",
        ),
        "outcome_packet_ref": Ref(
            "decision-outcome", optional=True, doc="The legacy chain's outcome."
        ),
        "review_packet_ref": Ref(
            "decision-review", optional=True, doc="The review chain's settlement receipt."
        ),
        "event_id": Token(),
        "status": Enum(values=("committed", "replayed")),
        "sources": Records(shape=SOURCE_ROW, id_field="source_id", min_items=1, max_items=64),
        "readback_verified": Const(value=True),
        "cursor_values_captured": Const(value=False),
    },
)
