"""Time: one clock protocol, RFC 3339 UTC timestamps with ``Z`` (SPEC §3.2).

``DCX_NOW`` fixes the clock for tests and demos; under it every measured
latency is 0 so hashed content never carries wall-clock noise.
"""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime
from typing import Protocol

from dcx.errors import InvalidInput


class Clock(Protocol):
    def now(self) -> str: ...

    def monotonic(self) -> float: ...

    def elapsed_ms(self, since: float) -> int: ...


class SystemClock:
    def now(self) -> str:
        return format_ts(datetime.now(UTC))

    def monotonic(self) -> float:
        return time.monotonic()

    def elapsed_ms(self, since: float) -> int:
        return max(0, round((time.monotonic() - since) * 1000))


class FixedClock:
    """A clock stuck at one instant. Deadlines still use real time; latencies
    read 0 unless ``measure`` (``--observed-at`` stamps time but is no test clock)."""

    def __init__(self, instant: str, measure: bool = False) -> None:
        self.instant = instant
        self.measure = measure

    def now(self) -> str:
        return self.instant

    def monotonic(self) -> float:
        return time.monotonic()

    def elapsed_ms(self, since: float) -> int:
        if not self.measure:
            return 0
        return max(0, round((time.monotonic() - since) * 1000))


def format_ts(moment: datetime) -> str:
    moment = moment.astimezone(UTC)
    if moment.microsecond:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_ts(value: str, *, field: str = "timestamp") -> datetime:
    """Parse an RFC 3339 timestamp with an explicit offset; reject naive ones."""
    if not isinstance(value, str) or len(value) > 40:
        raise InvalidInput(f"{field}: expected an RFC 3339 timestamp", field=field)
    text = value.strip()
    if text[-1:] in ("z", "Z"):
        text = text[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise InvalidInput(
            f"{field}: not an RFC 3339 timestamp (expected e.g. 2026-11-29T18:00:00Z)",
            field=field,
        ) from None
    if "T" not in text.upper() or moment.tzinfo is None:
        raise InvalidInput(
            f"{field}: a timestamp needs a date, a time and an offset (e.g. 2026-11-29T18:00:00Z)",
            field=field,
        )
    return moment.astimezone(UTC)


def normalise_ts(value: str, *, field: str = "timestamp") -> str:
    return format_ts(parse_ts(value, field=field))


def seconds_between(earlier: str, later: str) -> float:
    return (parse_ts(later) - parse_ts(earlier)).total_seconds()


def clock_from_env(observed_at: str | None = None) -> Clock:
    """The clock a command uses: ``--observed-at`` wins, then ``DCX_NOW``, then the system."""
    fixed = os.environ.get("DCX_NOW")
    if observed_at:
        return FixedClock(normalise_ts(observed_at, field="--observed-at"), measure=not fixed)
    if fixed:
        return FixedClock(normalise_ts(fixed, field="DCX_NOW"))
    return SystemClock()
