"""Each source's private health record: its failure streak and its last success (SPEC §5.5 v4).

``private/source-health.json`` = ``{"schema_version": "dcx_source_health_v0",
"sources": {source_id: {"failures": N, "last_success_at": T, "alerts": [code…]}}}``:

- ``failures``: consecutive scan or read attempts that failed (0 after a success);
- ``last_success_at``: when an attempt last succeeded (absent when none ever did);
- ``alerts``: the alerts that were active after the last recorded attempt, so the
  next attempt knows which it raises and which it clears.

The rules that fill it live in the source plane (``dcx.sources.alerts``); this
module keeps the file and says which alerts a record holds at a given time
(``active_alerts``, ``standing``), which ``dcx status`` needs without loading
any plane. It is private (mode 0600, written atomically
through ``fsutil``, under a lock). A damaged file reads as empty: it is a
record of observations, and losing it only restarts the streaks.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from dcx.core.clock import normalise_ts, seconds_between
from dcx.core.errors import InvalidInput
from dcx.core.fsutil import DEFAULT_WAIT, file_lock, write_private
from dcx.core.public import TOKEN_RE
from dcx.core.vocab import SOURCE_ALERTS, SOURCE_FAILING, SOURCE_STALE
from dcx.core.workspace import Workspace
from dcx.state.profile import Source

SCHEMA = "dcx_source_health_v0"
FILE_NAME = "source-health.json"


class SourceHealth(NamedTuple):
    """One source's record; the empty record (no attempt seen) is ``SourceHealth()``."""

    failures: int = 0
    last_success_at: str | None = None
    alerts: tuple[str, ...] = ()


def health_path(ws: Workspace) -> Path:
    return ws.private / FILE_NAME


def _row(raw: object) -> SourceHealth | None:
    if not isinstance(raw, dict):
        return None
    failures = raw.get("failures", 0)
    if isinstance(failures, bool) or not isinstance(failures, int) or failures < 0:
        return None
    stamp = raw.get("last_success_at")
    if stamp is not None:
        try:
            stamp = normalise_ts(stamp)
        except (InvalidInput, TypeError):
            return None
    alerts = raw.get("alerts", [])
    if not isinstance(alerts, list) or any(a not in SOURCE_ALERTS for a in alerts):
        return None
    return SourceHealth(failures, stamp, tuple(sorted(set(alerts))))


def read_source_health(ws: Workspace) -> dict[str, SourceHealth]:
    """Every source's record; a missing or damaged file (or row) is no record."""
    try:
        data = json.loads(health_path(ws).read_bytes())
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    if not isinstance(data, dict) or data.get("schema_version") != SCHEMA:
        return {}
    rows = data.get("sources")
    out: dict[str, SourceHealth] = {}
    for source_id, raw in (rows if isinstance(rows, dict) else {}).items():
        row = _row(raw)
        if row is not None and isinstance(source_id, str) and TOKEN_RE.match(source_id):
            out[source_id] = row
    return out


def _encode(rows: Mapping[str, SourceHealth]) -> bytes:
    body = {
        "schema_version": SCHEMA,
        "sources": {
            source_id: {
                "failures": row.failures,
                **({"last_success_at": row.last_success_at} if row.last_success_at else {}),
                "alerts": list(row.alerts),
            }
            for source_id, row in sorted(rows.items())
        },
    }
    return (json.dumps(body, indent=2, sort_keys=True) + "\n").encode("utf-8")


def record_source_health(
    ws: Workspace, updates: Mapping[str, SourceHealth], *, wait: float = DEFAULT_WAIT
) -> None:
    """Replace the records of the sources in ``updates`` (the others are kept), under the lock."""
    if not updates:
        return
    path = health_path(ws)
    with file_lock(path, wait=wait, display=ws.rel(path)):
        rows = read_source_health(ws)
        rows.update(updates)
        write_private(path, _encode(rows))


def active_alerts(
    source: Source, record: SourceHealth, now: str, failure_alert_after: int
) -> tuple[str, ...]:
    """The alerts ``record`` holds for ``source`` at ``now``, sorted."""
    alerts = []
    if record.failures >= failure_alert_after:
        alerts.append(SOURCE_FAILING)
    if (
        record.last_success_at is not None
        and seconds_between(record.last_success_at, now) > source.freshness_seconds
    ):
        alerts.append(SOURCE_STALE)
    return tuple(sorted(alerts))


def standing(
    sources: Sequence[Source],
    previous: Mapping[str, SourceHealth],
    now: str,
    *,
    failure_alert_after: int,
) -> list[dict[str, Any]]:
    """``dcx status``'s view: each enabled source with an active alert or a failure streak at ``now``."""
    rows: list[dict[str, Any]] = []
    for source in sources:
        record = previous.get(source.source_id)
        if not source.enabled or record is None:
            continue
        active = active_alerts(source, record, now, failure_alert_after)
        if active or record.failures:
            rows.append(
                {
                    "source_id": source.source_id,
                    "source_kind": source.source_kind,
                    "failure_streak": record.failures,
                    "alerts": list(active),
                }
            )
    return rows
