"""``decision_source_freshness_v0``: how long since authority was last read (SPEC §5.5).

One row per enabled source (and per scanned one). Freshness comes from the
last successful exact read (``private/freshness.json``, see ``dcx.cursors``),
never from a file's mtime and never from a scan alone: a source that did not
change is not re-read, so it ages until something reads it again.

- ``never_read``: scanned in this run but never exact-read;
- ``not_scanned``: not scanned in this run and never exact-read;
- ``stale``: ``staleness_seconds`` (observed_at - last_read_at) over the
  source's ``freshness_seconds``;
- ``fresh``: otherwise.

``alert`` is true for every status but ``fresh``; ``alert_source_ids`` lists
them. A healthy provider or an enabled profile never implies fresh sources.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from dcx.core.clock import normalise_ts, seconds_between
from dcx.core.envelope import PacketContext, PacketSpec
from dcx.core.fields import Bool, Enum, Int, Records, Shape, Timestamp, Token, Tokens
from dcx.core.vocab import PRIORITIES, SCAN_MODES
from dcx.profile import Registry

if TYPE_CHECKING:
    from dcx.sources.plane import SourceScan

FRESHNESS_STATUSES = ("fresh", "stale", "never_read", "not_scanned")

ROW = Shape(
    "freshness_source",
    {
        "source_id": Token(),
        "priority": Enum(values=PRIORITIES),
        "scan_mode": Enum(values=SCAN_MODES),
        "freshness_seconds": Int(lo=1, hi=31_536_000),
        "last_read_at": Timestamp(nullable=True, doc="Last successful exact read; null when never."),
        "staleness_seconds": Int(lo=0, nullable=True, doc="observed_at - last_read_at, whole seconds."),
        "status": Enum(values=FRESHNESS_STATUSES),
        "alert": Bool(doc="Anything but fresh."),
    },
)

SPEC = PacketSpec(
    kind="freshness",
    schema_version="decision_source_freshness_v0",
    prefix="decision-source-freshness",
    ref_field="freshness_ref",
    decision_scoped="optional",
    doc="Per-source freshness from the last successful exact read, against each source's window.",
    fields={
        "observed_at": Timestamp(),
        "sources": Records(shape=ROW, id_field="source_id", max_items=64),
        "alert_source_ids": Tokens(max_items=64),
    },
)


def freshness_row(source: Any, last_read_at: str | None, observed_at: str, scanned: bool) -> dict[str, Any]:
    staleness = None
    if last_read_at is None:
        status = "never_read" if scanned else "not_scanned"
    else:
        staleness = max(0, int(seconds_between(last_read_at, observed_at)))
        status = "stale" if staleness > source.freshness_seconds else "fresh"
    return {
        "source_id": source.source_id,
        "priority": source.priority,
        "scan_mode": source.scan_mode,
        "freshness_seconds": source.freshness_seconds,
        "last_read_at": last_read_at,
        "staleness_seconds": staleness,
        "status": status,
        "alert": status != "fresh",
    }


def freshness_values(
    registry: Registry, scans: Sequence[SourceScan], last_reads: Mapping[str, str], observed_at: str
) -> dict[str, Any]:
    observed_at = normalise_ts(observed_at)
    scanned = {scan.source_id for scan in scans}
    rows = [
        freshness_row(source, last_reads.get(source.source_id), observed_at, source.source_id in scanned)
        for source in registry.sources
        if source.enabled or source.source_id in scanned
    ]
    return {
        "observed_at": observed_at,
        "sources": rows,
        "alert_source_ids": [row["source_id"] for row in rows if row["alert"]],
    }


def build_freshness(
    ctx: PacketContext,
    registry: Registry,
    scans: Sequence[SourceScan],
    last_reads: Mapping[str, str],
    observed_at: str,
) -> dict[str, Any]:
    """Build (not store) the freshness packet; ``last_reads`` from ``dcx.cursors.read_freshness``."""
    return SPEC.build(ctx, freshness_values(registry, scans, last_reads, observed_at))
