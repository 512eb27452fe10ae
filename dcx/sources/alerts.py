"""Freshness alerts and failure streaks, for every adapter alike (SPEC §5.5 v4).

An **attempt** is one source's scan in a run, with the exact reads its policy
asked for when the run reads (``dcx prepare``; ``dcx scan`` reads nothing). It
**succeeds** when the scan is ``completed`` or ``no_change`` and no required
read failed transiently (terminal reads — binary, oversize, deleted — are
successes); anything else is a failure. Each source keeps privately
(``dcx.state.source_health``) its consecutive failures and the time of its
last success. From them, at a time ``now``:

- ``source_failing``: ``failures >= failure_alert_after`` (profile key, default 3);
- ``source_stale``: the last success is older than the source's
  ``freshness_seconds`` (a source that never succeeded is not stale: it is
  failing, or it was never scanned).

A success clears both. An attempt's alerts are the *active* ones after it, the
ones it *raised* (active now, not after the previous attempt) and the ones it
*cleared*. The scan receipt carries them as codes and counts (``public``),
never a locator; ``dcx status`` shows the active ones as of now, from the
record alone (``dcx.state.source_health.standing``: status imports no
plane). The rules apply to whatever an adapter answered, once the plane
has made it a ``SourceScan``: no adapter implements any of this.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

from dcx.state.source_health import SourceHealth, active_alerts

if TYPE_CHECKING:
    from dcx.sources.base import ReadResult
    from dcx.sources.plane import SourceScan


class Assessment(NamedTuple):
    """One attempt's alerts, and the record to keep after it."""

    source_id: str
    source_kind: str
    failure_streak: int
    failure_alert_after: int
    active: tuple[str, ...]
    raised: tuple[str, ...]
    cleared: tuple[str, ...]
    record: SourceHealth

    def public(self) -> dict[str, object] | None:
        """The scan receipt's ``alerts`` object; None when there is nothing to say."""
        if not (self.failure_streak or self.active or self.raised or self.cleared):
            return None
        return {
            "source_kind": self.source_kind,
            "failure_streak": self.failure_streak,
            "failure_alert_after": self.failure_alert_after,
            "active": list(self.active),
            "raised": list(self.raised),
            "cleared": list(self.cleared),
        }


def attempt_succeeded(scan: SourceScan, reads: Mapping[str, ReadResult] | None) -> bool:
    """The scan answered, and (when this run reads) every required read ended verified or terminal."""
    from dcx.sources.plane import read_complete

    return scan.ok and (reads is None or read_complete(scan, reads))


def assess(
    scans: Sequence[SourceScan],
    reads: Mapping[str, Mapping[str, ReadResult]] | None,
    previous: Mapping[str, SourceHealth],
    *,
    failure_alert_after: int,
) -> dict[str, Assessment]:
    """Each scanned source's attempt judged against its previous record (pure).

    ``reads`` is None when the run reads nothing (``dcx scan``, a baseline),
    else the reads by source id. The attempt's time is its scan's ``observed_at``.
    """
    out: dict[str, Assessment] = {}
    for scan in scans:
        before = previous.get(scan.source_id, SourceHealth())
        source_reads = None if reads is None else reads.get(scan.source_id, {})
        if attempt_succeeded(scan, source_reads):
            after = SourceHealth(0, scan.observed_at, ())
        else:
            after = SourceHealth(before.failures + 1, before.last_success_at, ())
        active = active_alerts(scan.source, after, scan.observed_at, failure_alert_after)
        after = after._replace(alerts=active)
        out[scan.source_id] = Assessment(
            source_id=scan.source_id,
            source_kind=scan.source.source_kind,
            failure_streak=after.failures,
            failure_alert_after=failure_alert_after,
            active=active,
            raised=tuple(a for a in active if a not in before.alerts),
            cleared=tuple(a for a in before.alerts if a not in active),
            record=after,
        )
    return out


def records(assessments: Mapping[str, Assessment]) -> dict[str, SourceHealth]:
    """What to keep for each assessed source (for ``record_source_health``)."""
    return {source_id: a.record for source_id, a in assessments.items()}
