"""Time: one clock protocol, RFC 3339 UTC timestamps with ``Z`` (SPEC §3.2).

``DCX_NOW`` fixes the clock for tests and demos; under it every measured
latency is 0 so hashed content never carries wall-clock noise.
"""

from __future__ import annotations

import os
import re
import time
from datetime import UTC, datetime, timedelta, timezone
from typing import Protocol

from dcx.core.errors import InvalidInput


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


# RFC 3339 §5.6 date-time, nothing else: full-date "T" full-time, seconds required,
# a "." fraction, "Z" or a +hh:mm/-hh:mm offset; ASCII digits only ("T"/"Z" in either case).
_RFC3339 = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?"
    r"(?:([Zz])|([+-])([0-9]{2}):([0-9]{2}))"
)


def parse_ts(value: str, *, field: str = "timestamp") -> datetime:
    """Parse an RFC 3339 date-time (with its offset) to UTC; anything else is ``InvalidInput``.

    ISO 8601 forms RFC 3339 leaves out (basic format, week or ordinal dates,
    missing seconds, comma fractions, a space for ``T``) are refused, and so is
    a fraction finer than microseconds that is not zeros: it is never cut.
    """
    example = "e.g. 2026-11-29T18:00:00Z"
    if not isinstance(value, str) or len(value) > 64:
        raise InvalidInput(f"{field}: expected an RFC 3339 timestamp ({example})", field=field)
    match = _RFC3339.fullmatch(value)
    if match is None:
        raise InvalidInput(
            f"{field}: not an RFC 3339 timestamp (expected a date, a time with seconds and "
            f"an offset, {example})",
            field=field,
        )
    year, month, day, hour, minute, second, fraction, zulu, sign, off_h, off_m = match.groups()
    fraction = fraction or ""
    if fraction[6:].strip("0"):
        raise InvalidInput(
            f"{field}: RFC 3339 timestamp with more than 6 fractional digits: dcx keeps "
            "microseconds and will not cut the rest",
            field=field,
        )
    try:
        if int(off_h or 0) > 23 or int(off_m or 0) > 59:
            raise ValueError
        offset = (
            UTC
            if zulu
            else timezone(
                (1 if sign == "+" else -1) * timedelta(hours=int(off_h), minutes=int(off_m))
            )
        )
        moment = datetime(
            int(year),
            int(month),
            int(day),
            int(hour),
            int(minute),
            int(second),
            int(fraction[:6].ljust(6, "0")),
            tzinfo=offset,
        )
    except ValueError:
        raise InvalidInput(f"{field}: not a valid date and time ({example})", field=field) from None
    return moment.astimezone(UTC)


_NORMALISED: dict[
    str, str
] = {}  # value -> its normal form, for values that parsed (a pure function)


def normalise_ts(value: str, *, field: str = "timestamp") -> str:
    if type(value) is str:
        known = _NORMALISED.get(value)
        if known is not None:
            return known
    normal = format_ts(parse_ts(value, field=field))
    if len(_NORMALISED) >= 4096:
        _NORMALISED.clear()
    _NORMALISED[value] = normal
    return normal


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
