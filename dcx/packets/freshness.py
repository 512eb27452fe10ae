"""``decision_source_freshness_v0``: how long since authority was last read (SPEC §5.5).

One row per enabled source (and per scanned one). Freshness comes from the
last successful exact read (``private/freshness.json``, see ``dcx.state.cursors``),
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

from dcx.core.fields import Bool, Enum, Int, Records, Shape, Timestamp, Token, Tokens
from dcx.core.vocab import PRIORITIES, SCAN_MODES
from dcx.packets import declare

FRESHNESS_STATUSES = ("fresh", "stale", "never_read", "not_scanned")

ROW = Shape(
    "freshness_source",
    {
        "source_id": Token(),
        "priority": Enum(values=PRIORITIES),
        "scan_mode": Enum(values=SCAN_MODES),
        "freshness_seconds": Int(lo=1, hi=31_536_000),
        "last_read_at": Timestamp(
            nullable=True, doc="Last successful exact read; null when never."
        ),
        "staleness_seconds": Int(
            lo=0, nullable=True, doc="observed_at - last_read_at, whole seconds."
        ),
        "status": Enum(values=FRESHNESS_STATUSES),
        "alert": Bool(doc="Anything but fresh."),
    },
)

SPEC = declare(
    "freshness",
    decision_scoped="optional",
    doc="Per-source freshness from the last successful exact read, against each source's window.",
    fields={
        "observed_at": Timestamp(),
        "sources": Records(shape=ROW, id_field="source_id", max_items=64),
        "alert_source_ids": Tokens(max_items=64),
    },
)
