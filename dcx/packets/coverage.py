"""``decision_source_coverage_v0``: did this run see all required authority? (SPEC §5.5)

Required priority is ``p0``. Each enabled source counts once, in its
priority's row. A source is **complete** when its scan is ``completed`` or
``no_change``, not capped by ``max_changes`` (changes were left for later),
and every exact read its policy requires ended verified or terminal
(binary, oversize and deleted do not make coverage incomplete; a transient
failure or a read never made does — ``exact_read_incomplete_count``).
A ``--baseline`` prepare makes no exact reads by design (it adopts each
source's current state): there, a completed scan is complete.
``status_counts`` counts scan statuses plus ``not_selected`` for enabled
sources this run did not scan (e.g. on-demand ones not named). Coverage is
``partial`` when any enabled p0 source is not complete, including one that
was not selected; those ids are listed in ``incomplete_required_source_ids``.
"""

from __future__ import annotations

from dcx.core.fields import Const, Enum, Int, Map, Records, Shape, Tokens
from dcx.core.vocab import PRIORITIES, REQUIRED_PRIORITY
from dcx.packets import declare

NOT_SELECTED = "not_selected"

ROW = Shape(
    "coverage_priority",
    {
        "priority": Enum(values=PRIORITIES),
        "source_count": Int(lo=0, hi=64, doc="Enabled sources of this priority."),
        "complete_count": Int(lo=0, hi=64),
        "exact_read_incomplete_count": Int(
            lo=0, hi=64, doc="Scanned, but a required exact read is missing or failed."
        ),
        "status_counts": Map(
            value=Int(lo=0, hi=64), max_items=8, doc="Scan status (or not_selected) → sources."
        ),
    },
)

SPEC = declare(
    "coverage",
    decision_scoped="optional",
    doc="Whether a run covered every required (p0) source completely, with per-priority counts.",
    fields={
        "required_priority": Const(value=REQUIRED_PRIORITY),
        "status": Enum(values=("complete", "partial")),
        "incomplete_required_source_ids": Tokens(max_items=64),
        "priorities": Records(shape=ROW, id_field="priority", min_items=3, max_items=3),
    },
)
