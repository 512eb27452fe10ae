"""Issue 11 §3: `clock.parse_ts` accepts RFC 3339 date-times only (RFC 3339 §5.6), never cuts digits."""

from __future__ import annotations

import pytest

from dcx.core.clock import normalise_ts
from dcx.core.errors import InvalidInput

NOT_RFC3339 = [
    "20261129T180000Z",  # ISO 8601 basic format
    "2026-W48-7T18:00:00Z",  # week date
    "2026-333T18:00:00Z",  # ordinal date
    "2026-11-29T18Z",  # hour only
    "2026-11-29T18:00Z",  # no seconds
    "2026-11-29T18:00:00,5Z",  # comma fraction
    "2026-11-29T18:00:00.Z",  # empty fraction
    "2026-11-29T18:00:00.1234567Z",  # a 7th digit that would be cut
    "2026-11-29 18:00:00Z",  # space separator (the ABNF says T)
    "2026-11-29T18:00:00+0100",  # offset without colon
    "2026-11-29T18:00:00+01",  # offset without minutes
    "2026-11-29T18:00:00+24:00",  # offset hour out of range
    "2026-11-29T18:00:00+01:60",
    "2026-11-29T24:00:00Z",
    "2026-02-30T18:00:00Z",
    "\uff12026-11-29T18:00:00Z",  # a full-width digit
    "2026-11-29T18:00:00ZZ",
    " 2026-11-29T18:00:00Z",
    "2026-11-29T18:00:00Z\n",
    "+2026-11-29T18:00:00Z",
]


@pytest.mark.parametrize("bad", NOT_RFC3339)
def test_only_rfc3339_is_accepted(bad: str) -> None:
    with pytest.raises(InvalidInput, match="--observed-at"):
        normalise_ts(bad, field="--observed-at")


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("2026-11-29T18:00:00Z", "2026-11-29T18:00:00Z"),
        ("2026-11-29t18:00:00z", "2026-11-29T18:00:00Z"),
        ("2026-11-29T18:00:00.5Z", "2026-11-29T18:00:00.500000Z"),
        ("2026-11-29T18:00:00.123456Z", "2026-11-29T18:00:00.123456Z"),
        (
            "2026-11-29T18:00:00.123456000Z",
            "2026-11-29T18:00:00.123456Z",
        ),  # Go's RFC3339Nano, exact
        ("2026-11-29T19:30:00+01:30", "2026-11-29T18:00:00Z"),
        ("2026-11-29T18:00:00-00:00", "2026-11-29T18:00:00Z"),
    ],
)
def test_rfc3339_normalises_exactly(given: str, expected: str) -> None:
    assert normalise_ts(given) == expected


def test_cli_names_the_flag(dcx, example) -> None:
    result = dcx("-C", str(example), "scan", "--observed-at", "20261129T180000Z")
    assert (
        result.exit_code == 2 and "--observed-at" in result.stderr and "RFC 3339" in result.stderr
    )
