from __future__ import annotations

import pytest

from dcx.core.clock import FixedClock, clock_from_env, normalise_ts
from dcx.core.errors import InvalidInput


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("2026-11-29T18:00:00Z", "2026-11-29T18:00:00Z"),
        ("2026-11-29T19:30:00+01:30", "2026-11-29T18:00:00Z"),
        ("2026-11-29T18:00:00.250000Z", "2026-11-29T18:00:00.250000Z"),
        ("2026-11-29t18:00:00z", "2026-11-29T18:00:00Z"),
    ],
)
def test_timestamps_normalise_to_utc_z(given: str, expected: str) -> None:
    assert normalise_ts(given) == expected


@pytest.mark.parametrize("bad", ["2026-11-29T18:00:00", "2026-11-29", "yesterday", ""])
def test_timestamps_without_offset_are_rejected(bad: str) -> None:
    with pytest.raises(InvalidInput, match="observed_at"):
        normalise_ts(bad, field="observed_at")


def test_dcx_now_fixes_clock_and_zeroes_latency(monkeypatch) -> None:
    monkeypatch.setenv("DCX_NOW", "2026-01-01T00:00:00+00:00")
    clock = clock_from_env()
    assert clock.now() == "2026-01-01T00:00:00Z"
    assert clock.elapsed_ms(clock.monotonic() - 5) == 0


def test_observed_at_wins_over_dcx_now(monkeypatch) -> None:
    monkeypatch.setenv("DCX_NOW", "2026-01-01T00:00:00Z")
    assert clock_from_env("2026-02-02T00:00:00Z").now() == "2026-02-02T00:00:00Z"


def test_observed_at_alone_still_measures_latency(monkeypatch) -> None:
    monkeypatch.delenv("DCX_NOW")
    clock = clock_from_env("2026-02-02T00:00:00Z")
    assert isinstance(clock, FixedClock) and clock.measure
    assert clock.elapsed_ms(clock.monotonic() - 1) >= 900
