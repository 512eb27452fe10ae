"""The source plane's attempt rule (SPEC §5.5 v4): what counts as a failure, for any adapter.

Expected values are written out from the SPEC: an attempt fails when its scan is not
``completed``/``no_change`` or an exact read its policy required failed transiently
(terminal reads are successes); ``source_failing`` at ``failure_alert_after``
consecutive failures; ``source_stale`` when the last success is older than the
source's ``freshness_seconds``; a success clears both.
"""

from __future__ import annotations

from dcx.sources.alerts import active_alerts, assess
from dcx.sources.base import ReadResult, ScanItem, ScanTelemetry
from dcx.sources.plane import SourceScan
from dcx.state.profile import Source
from dcx.state.source_health import SourceHealth

SOURCE = Source(
    source_id="source:any",
    provider_id="any-adapter",
    source_kind="conversation",
    priority="p1",
    evidence_level="s1",
    objectives=("x",),
    scan_mode="incremental",
    exact_read_policy="always",
    freshness_seconds=600,
    locator={},
)
ITEM = ScanItem("source:any", "item-1", "rev-1", "2026-01-01T00:00:00Z", "text", "added")


def _scan(status: str, at: str, items: tuple[ScanItem, ...] = ()) -> SourceScan:
    return SourceScan(
        source=SOURCE,
        status=status,
        reason_code=None if status in ("completed", "no_change") else "provider_scan_failed",
        items=items,
        cursor_before=None,
        cursor_after="c" if status in ("completed", "no_change") else None,
        provider_version=None,
        observed_at=at,
        requested_limit=1000,
        latency_ms=0,
        telemetry=ScanTelemetry(),
    )


def _read(status: str) -> dict[str, dict[str, ReadResult]]:
    return {"source:any": {"item-1": ReadResult(status, "item-1", "rev-1", "2026-01-01T00:00:00Z")}}


def test_a_transient_read_failure_is_a_failed_attempt_and_a_terminal_read_is_not() -> None:
    before = {"source:any": SourceHealth(2, "2026-01-01T00:00:00Z", ())}
    scan = _scan("completed", "2026-01-01T00:05:00Z", (ITEM,))
    failed = assess([scan], _read("failed"), before, failure_alert_after=3)["source:any"]
    assert (failed.failure_streak, failed.active, failed.raised) == (
        3,
        ("source_failing",),
        ("source_failing",),
    )
    terminal = assess([scan], _read("binary"), before, failure_alert_after=3)["source:any"]
    assert (terminal.failure_streak, terminal.active, terminal.record.last_success_at) == (
        0,
        (),
        "2026-01-01T00:05:00Z",
    )
    # `dcx scan` reads nothing: the scan alone decides
    unread = assess([scan], None, before, failure_alert_after=3)["source:any"]
    assert unread.failure_streak == 0


def test_streak_and_staleness_follow_the_record() -> None:
    record = SourceHealth()
    seen = []
    for at, status in [
        ("2026-01-01T00:00:00Z", "no_change"),
        ("2026-01-01T00:05:00Z", "unavailable"),
        ("2026-01-01T00:10:00Z", "failed"),  # 600 s after the success: not yet stale (>)
        ("2026-01-01T00:10:01Z", "unavailable"),  # 601 s: stale
        ("2026-01-01T00:11:00Z", "completed"),
    ]:
        got = assess([_scan(status, at)], None, {"source:any": record}, failure_alert_after=2)[
            "source:any"
        ]
        record = got.record
        seen.append((got.failure_streak, got.active, got.raised, got.cleared))
    assert seen == [
        (0, (), (), ()),
        (1, (), (), ()),
        (2, ("source_failing",), ("source_failing",), ()),
        (3, ("source_failing", "source_stale"), ("source_stale",), ()),
        (0, (), (), ("source_failing", "source_stale")),
    ]


def test_public_alerts_object_is_absent_when_there_is_nothing_to_say() -> None:
    quiet = assess([_scan("no_change", "2026-01-01T00:00:00Z")], None, {}, failure_alert_after=3)
    assert quiet["source:any"].public() is None


def test_a_never_successful_source_is_failing_never_stale() -> None:
    record = SourceHealth(5, None, ())
    assert active_alerts(SOURCE, record, "2027-01-01T00:00:00Z", 3) == ("source_failing",)
