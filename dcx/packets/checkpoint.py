"""``decision_cursor_checkpoint_v0``: which sources may advance after writeback (SPEC §8.2).

Per source the first rule that applies: no cursor_after → preserve/
cursor_after_missing; no_change → ready; not completed → preserve/
scan_incomplete; policy never → preserve/exact_read_disabled; a transient
exact-read failure → preserve/exact_read_incomplete; semantic no change →
ready; an item no fact, claim or conflict accounts for → preserve/
rebase_incomplete; else ready_after_writeback/validated_rebase.
"""

from __future__ import annotations

from dcx.core.fields import Enum, Int, ReasonCode, Records, Ref, Shape, Timestamp, Token
from dcx.packets import declare

DISPOSITIONS = ("ready_after_writeback", "preserve")

ROW = Shape(
    "checkpoint_row",
    {
        "source_id": Token(),
        "scan_receipt_ref": Ref("decision-source-scan"),
        "cursor_before_ref": Ref("source-cursor"),
        "cursor_after_ref": Ref("source-cursor", optional=True),
        "disposition": Enum(values=DISPOSITIONS),
        "reason_code": ReasonCode(),
    },
)

SPEC = declare(
    "checkpoint",
    decision_scoped=True,
    doc="Per-source cursor dispositions of one prepare run; commit advances only ready rows.",
    fields={
        "observed_at": Timestamp(),
        "rows": Records(shape=ROW, id_field="source_id", max_items=64),
        "ready_count": Int(lo=0, hi=64),
        "preserve_count": Int(lo=0, hi=64),
    },
)
