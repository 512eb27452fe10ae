"""The fast canonical encoder against the reference one (differential).

``dcx.canonical.canonical_bytes`` answers from the C ``json`` encoder when it
can show the bytes are RFC 8785 and asks ``rfc8785`` otherwise. The oracle
here is ``rfc8785`` itself: for generated JSON values (deep nesting, every kind
of character, integers at and beyond 2^53, floats of every layout, keys that
sort differently by UTF-16 code units than by code points) and for every
packet stored under ``fixtures/`` (real cycles, written by dcx), the bytes are
identical, and a value the reference refuses is refused the same way.
``DCX_HYPOTHESIS_PROFILE=deep`` runs many more examples.
"""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path

import pytest
import rfc8785
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from dcx import canonical
from dcx.canonical import canonical_bytes
from dcx.errors import InvalidInput

REPO = Path(__file__).resolve().parents[1]
DEEP = os.environ.get("DCX_HYPOTHESIS_PROFILE") == "deep"
EXAMPLES = 5000 if DEEP else 300


def reference(value: object) -> tuple[str, object]:
    """What canonical_bytes must do for ``value``, from rfc8785 alone."""
    try:
        return "bytes", rfc8785.dumps(value)
    except rfc8785.CanonicalizationError:
        return "refused", "not_canonical"
    except Exception as exc:  # the kind of refusal is what is compared
        return "raised", type(exc).__name__


def ours(value: object) -> tuple[str, object]:
    try:
        return "bytes", canonical_bytes(value)
    except InvalidInput as exc:
        return "refused", exc.code
    except Exception as exc:
        return "raised", type(exc).__name__


# Characters from every region that matters: ASCII, C0/C1 controls, DEL, the
# escapes, BMP letters, the private-use area above the surrogates (U+E000..U+FFFF,
# which sorts *after* astral characters by UTF-16 and *before* them by code point),
# astral characters, and lone surrogates (not UTF-8: refused).
chars = st.one_of(
    st.characters(min_codepoint=0, max_codepoint=0x7F),
    st.sampled_from(['"', "\\", "\b", "\f", "\n", "\r", "\t", "\x00", "\x1f", "\x7f", "\x85", "\u2028", "/"]),
    st.characters(min_codepoint=0x80, max_codepoint=0xD7FF),
    st.characters(min_codepoint=0xE000, max_codepoint=0xFFFF),
    st.characters(min_codepoint=0x10000, max_codepoint=0x10FFFF),
    st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF, categories=["Cs"]),
)
text = st.text(chars, max_size=12)
safe_text = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=12)
ints = st.one_of(
    st.integers(-1000, 1000),
    st.integers(-(2**53) - 3, -(2**53) + 3),
    st.integers(2**53 - 3, 2**53 + 3),
    st.integers(-(2**70), 2**70),
)
floats = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 1.0, -1.0, 10.0, 1e21, 1e20, 1e-7, 1e-6, 5e-324, 1.7976931348623157e308,
                     0.1, 1 / 3, 123456789012345.6, 1e15, 1e16, 9007199254740992.0, 2.5e-5, -7.25]),
    st.integers(-(2**60), 2**60).map(float),
)
scalars = st.one_of(st.none(), st.booleans(), ints, floats, text)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(text, inner, max_size=5)),
    max_leaves=40,
)
# Values the fast path should answer (no refusal expected): UTF-8 text, safe numbers.
clean_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**53) + 1, 2**53 - 1),
              st.floats(allow_nan=False, allow_infinity=False), safe_text),
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(safe_text, inner, max_size=5)),
    max_leaves=40,
)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_values)
@example({"\ue000": 1, "\U0001f600": 2})  # UTF-16 order: U+1F600 (D83D DE00) before U+E000
@example({"a": float("nan")})
@example({"a": [2**53]})
@example({"b": -0.0, "a": 1e21, "c": 5e-324})
@example({"\ud800": 1})
@example(["\udfff"])
@example({"k:1.0,\\\"": [1.0, "x\\\\\":2.0"], "z": 2.0})
def test_generated_values_match_the_reference(value: object) -> None:
    assert ours(value) == reference(value)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clean_values)
def test_fast_path_when_taken_is_the_reference(value: object) -> None:
    fast = canonical._fast_jcs(value)
    if fast is not None:
        assert fast == rfc8785.dumps(value)
    assert canonical_bytes(value) == rfc8785.dumps(value)


def test_non_json_inputs_are_refused_like_the_reference() -> None:
    cases = [
        {1: "int key"},
        {"a": 1, 2: "mixed keys"},
        {(1, 2): "tuple key"},
        {None: 1},
        {True: 1},
        (1, "tuple"),
        [{1, 2}],
        [b"bytes"],
        [float("inf")],
        [-float("inf")],
        [object()],
        [2**53],
        [-(2**53)],
    ]
    for value in cases:
        assert ours(value) == reference(value), value


def test_deep_nesting() -> None:
    for depth in (50, 400):
        value: object = "leaf"
        for index in range(depth):
            value = [value] if index % 2 else {"k": value, "\U0001f600": index, "\ue000": 1.0}
        assert ours(value) == reference(value)
    value = []
    for _ in range(sys.getrecursionlimit() * 2):
        value = [value]
    assert ours(value)[0] == reference(value)[0] == "raised"


def test_types_json_coerces_are_the_references_answer() -> None:
    import enum

    class Colour(enum.IntEnum):
        RED = 1

    class Name(enum.StrEnum):
        A = "a"

    for value in ([Colour.RED], {"k": Name.A}, {Name.A: 1}, [(1, 2), ()], {"t": (1.0, -0.0)}):
        assert ours(value) == reference(value), value


def _fixture_json() -> list[Path]:
    roots = [REPO / "fixtures", REPO / ".dcx-example"]
    return sorted(p for root in roots for p in root.rglob("*.json"))


def test_every_fixture_packet_matches_and_takes_the_fast_path() -> None:
    """Every JSON file under fixtures/ (the report fixture is real cycles written by dcx)."""
    fast = total = 0
    for path in _fixture_json():
        try:
            value = json.loads(path.read_bytes())
        except ValueError:
            continue
        total += 1
        assert canonical_bytes(value) == rfc8785.dumps(value), path
        fast += canonical._fast_jcs(value) is not None
    assert total > 100
    # dcx's packets hold no exponent floats, big ints or astral characters; a few fixture
    # inputs (public-safety corpora) do, and take the reference path
    assert fast >= 0.95 * total, (fast, total)


def test_packet_records_sort_like_the_reference() -> None:
    """Record lists are sorted by canonical bytes: the order must be the reference's."""
    rows = [{"a": s, "n": n} for s in ("\ue000", "\U0001f600", "z", "é", "") for n in (1.0, 0.5, 10, -0.0)]
    assert sorted(rows, key=canonical_bytes) == sorted(rows, key=rfc8785.dumps)


@pytest.mark.parametrize("value", [1e21, 1e-7, 5e-324, 1.7976931348623157e308, -0.0, 0.0, 100.0, 1e16])
def test_float_layouts(value: float) -> None:
    assert canonical_bytes([value]) == rfc8785.dumps([value])
    assert math.isfinite(value)
