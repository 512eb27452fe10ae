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

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from dcx.core.envelope import PacketContext, PacketSpec
from dcx.core.fields import Const, Enum, Int, Map, Records, Shape, Tokens
from dcx.core.vocab import PRIORITIES, REQUIRED_PRIORITY
from dcx.profile import Registry

if TYPE_CHECKING:
    from dcx.sources.base import ReadResult
    from dcx.sources.plane import SourceScan

NOT_SELECTED = "not_selected"

ROW = Shape(
    "coverage_priority",
    {
        "priority": Enum(values=PRIORITIES),
        "source_count": Int(lo=0, hi=64, doc="Enabled sources of this priority."),
        "complete_count": Int(lo=0, hi=64),
        "exact_read_incomplete_count": Int(lo=0, hi=64, doc="Scanned, but a required exact read is missing or failed."),
        "status_counts": Map(value=Int(lo=0, hi=64), max_items=8, doc="Scan status (or not_selected) → sources."),
    },
)

SPEC = PacketSpec(
    kind="coverage",
    schema_version="decision_source_coverage_v0",
    prefix="decision-source-coverage",
    ref_field="coverage_ref",
    decision_scoped="optional",
    doc="Whether a run covered every required (p0) source completely, with per-priority counts.",
    fields={
        "required_priority": Const(value=REQUIRED_PRIORITY),
        "status": Enum(values=("complete", "partial")),
        "incomplete_required_source_ids": Tokens(max_items=64),
        "priorities": Records(shape=ROW, id_field="priority", min_items=3, max_items=3),
    },
)


def source_complete(scan: SourceScan, reads: Mapping[str, ReadResult], *,
                    reads_required: bool = True) -> tuple[bool, bool]:
    """(complete, exact_read_incomplete) for one scanned source."""
    from dcx.sources.plane import read_complete

    if not scan.ok:
        return False, False
    reads_ok = read_complete(scan, reads) if reads_required else True
    return reads_ok and not scan.telemetry.result_cap_applied, not reads_ok


def coverage_values(
    registry: Registry, scans: Sequence[SourceScan], reads: Mapping[str, Mapping[str, ReadResult]],
    *, reads_required: bool = True,
) -> dict[str, Any]:
    by_id = {scan.source_id: scan for scan in scans}
    rows = {p: {"priority": p, "source_count": 0, "complete_count": 0, "exact_read_incomplete_count": 0,
                "status_counts": {}} for p in PRIORITIES}
    incomplete: list[str] = []
    counted = [s for s in registry.sources if s.enabled or s.source_id in by_id]
    for source in counted:
        row = rows[source.priority]
        row["source_count"] += 1
        scan = by_id.get(source.source_id)
        status = scan.status if scan is not None else NOT_SELECTED
        row["status_counts"][status] = row["status_counts"].get(status, 0) + 1
        complete = False
        if scan is not None:
            complete, read_incomplete = source_complete(scan, reads.get(source.source_id, {}),
                                                        reads_required=reads_required)
            row["exact_read_incomplete_count"] += read_incomplete
        row["complete_count"] += complete
        if not complete and source.priority == REQUIRED_PRIORITY:
            incomplete.append(source.source_id)
    return {
        "required_priority": REQUIRED_PRIORITY,
        "status": "partial" if incomplete else "complete",
        "incomplete_required_source_ids": incomplete,
        "priorities": list(rows.values()),
    }


def build_coverage(
    ctx: PacketContext,
    registry: Registry,
    scans: Sequence[SourceScan],
    reads: Mapping[str, Mapping[str, ReadResult]],
    *,
    reads_required: bool = True,
) -> dict[str, Any]:
    """Build (not store) the coverage packet; ``reads`` is ``{source_id: {resource_ref: ReadResult}}``.

    ``reads_required=False`` for a baseline, which adopts without reading."""
    return SPEC.build(ctx, coverage_values(registry, scans, reads, reads_required=reads_required))
