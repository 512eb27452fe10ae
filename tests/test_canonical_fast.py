"""The fast canonical encoder against the reference one (differential).

``dcx.core.canonical.canonical_bytes`` answers from the C ``json`` encoder when it
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

from dcx.core import canonical
from dcx.core.canonical import canonical_bytes
from dcx.core.errors import InvalidInput

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
    st.sampled_from(
        ['"', "\\", "\b", "\f", "\n", "\r", "\t", "\x00", "\x1f", "\x7f", "\x85", "\u2028", "/"]
    ),
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
    st.sampled_from(
        [
            0.0,
            -0.0,
            1.0,
            -1.0,
            10.0,
            1e21,
            1e20,
            1e-7,
            1e-6,
            5e-324,
            1.7976931348623157e308,
            0.1,
            1 / 3,
            123456789012345.6,
            1e15,
            1e16,
            9007199254740992.0,
            2.5e-5,
            -7.25,
        ]
    ),
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
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**53) + 1, 2**53 - 1),
        st.floats(allow_nan=False, allow_infinity=False),
        safe_text,
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=5), st.dictionaries(safe_text, inner, max_size=5)
    ),
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
@example({'k:1.0,\\"': [1.0, 'x\\\\":2.0'], "z": 2.0})
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
    rows = [
        {"a": s, "n": n}
        for s in ("\ue000", "\U0001f600", "z", "é", "")
        for n in (1.0, 0.5, 10, -0.0)
    ]
    assert sorted(rows, key=canonical_bytes) == sorted(rows, key=rfc8785.dumps)


@pytest.mark.parametrize(
    "value", [1e21, 1e-7, 5e-324, 1.7976931348623157e308, -0.0, 0.0, 100.0, 1e16]
)
def test_float_layouts(value: float) -> None:
    assert canonical_bytes([value]) == rfc8785.dumps([value])
    assert math.isfinite(value)


# -- the stored-file check: is_pretty against pretty_bytes ----------------------------


def _pretty_answer(data: bytes) -> tuple[bool, bool] | None:
    """(fast answer, reference answer) for ``data``, or None when it is not JSON or not UTF-8-encodable."""
    try:
        value, repr_floats = canonical.load_stored(data)
    except ValueError:
        return None
    try:
        expected = canonical.pretty_bytes(value) == data
    except UnicodeEncodeError:
        return None
    return canonical.is_pretty(data, value, repr_floats=repr_floats), expected


def _respell(data: bytes, draw_index: int) -> list[bytes]:
    """Layouts and spellings a hand edit could produce, each still JSON."""
    text = data.decode("utf-8")
    variants = [
        text.replace("\n  ", "\n   ", 1),  # one line indented one space too far
        text.replace("\n", "\n ", 1),
        text.replace(",\n", ", \n", 1),
        text.replace(": ", ":", 1),
        text.replace(",\n  ", ",", 1),  # two entries on one line
        text.replace("[]", "[\n]", 1),
        text.replace("{}", "{\n}", 1),
        text.replace("\n}", "}", 1),
        text.rstrip("\n"),
        text + "\n",
        text.replace("e+", "e", 1),  # orjson's spelling of an exponent
        text.replace("e-0", "e-", 1),
        text.replace(".0,", ",", 1),
        text.replace(".5", ".50", 1),
        text.replace("1e+16", "10000000000000000.0", 1),
        text.replace("\\u0000", "\\u0000".upper(), 1),
        text.replace("\\n", "\\u000a", 1),
        text.replace("é", "\\u00e9", 1),
        text.replace("/", "\\/", 1),
        text.replace("true", "1", 1),
        text.replace(" 0\n", " -0\n", 1),
    ]
    lines = text.split("\n")
    if len(lines) > 3:
        i = 1 + draw_index % (len(lines) - 3)
        swapped = [*lines[:i], lines[i + 1], lines[i], *lines[i + 2 :]]
        variants.append("\n".join(swapped))
    return [v.encode("utf-8") for v in variants if v != text]


pretty_values = st.dictionaries(
    safe_text,
    st.recursive(
        st.one_of(
            st.none(),
            st.booleans(),
            st.integers(-(2**70), 2**70),
            st.floats(allow_nan=True, allow_infinity=True),
            safe_text,
            st.sampled_from([1e16, 1e-5, 0.5, 10.0, -0.0, 1e300, 5e-324, 0]),
        ),
        lambda inner: st.one_of(
            st.lists(inner, max_size=4), st.dictionaries(safe_text, inner, max_size=4)
        ),
        max_leaves=30,
    ),
    max_size=6,
)


@pytest.mark.parametrize("with_orjson", [True, False])
@settings(
    max_examples=EXAMPLES // 2,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(value=pretty_values, index=st.integers(0, 1000))
def test_is_pretty_matches_the_pretty_encoder(
    value: dict, index: int, with_orjson: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not with_orjson:
        monkeypatch.setattr(canonical, "_ORJSON", [None])
    else:
        monkeypatch.setattr(canonical, "_CHECKED", [canonical.ORJSON_AFTER])
    data = canonical.pretty_bytes(value)
    assert _pretty_answer(data) == (True, True)
    for variant in _respell(data, index):
        answer = _pretty_answer(variant)
        if answer is not None:
            assert answer[0] == answer[1], variant


output_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**70), 2**70),
        st.floats(allow_nan=True, allow_infinity=True),
        safe_text,
        st.sampled_from([1e16, 1e-5, 2e-05, 0.5, 10.0, -0.0, 1e300, 5e-324, 0, 1e-9]),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.tuples(inner, inner),
        st.dictionaries(safe_text, inner, max_size=4),
        st.dictionaries(st.integers(0, 3), inner, max_size=2),
    ),
    max_leaves=30,
)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=output_values)
def test_pretty_json_is_the_json_modules_text(value: object) -> None:
    """The oracle is json.dumps itself (orjson imported, so its answer is tried first)."""
    canonical._orjson()
    try:
        expected = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        with pytest.raises(type(exc)):
            canonical.pretty_json(value)
        return
    assert canonical.pretty_json(value) == expected


def test_pretty_json_on_every_fixture_json() -> None:
    canonical._orjson()
    for path in _fixture_json():
        try:
            value = json.loads(path.read_bytes())
        except ValueError:
            continue
        assert canonical.pretty_json(value) == json.dumps(
            value, indent=2, sort_keys=True, ensure_ascii=False
        ), path


def test_is_pretty_on_every_stored_fixture_and_their_edits() -> None:
    checked = 0
    for path in _fixture_json():
        data = path.read_bytes()
        answer = _pretty_answer(data)
        if answer is None:
            continue
        assert answer[0] == answer[1], path
        for variant in _respell(data, checked):
            edited = _pretty_answer(variant)
            if edited is not None:
                assert edited[0] == edited[1], (path, variant[:200])
        checked += 1
    assert checked > 100


def test_orjson_layout_is_the_json_modules() -> None:
    """The premise of is_pretty: orjson's indented, sorted layout and escapes are json's."""
    orjson = pytest.importorskip("orjson")
    every_char = "".join(chr(c) for c in range(0x20000) if not 0xD800 <= c < 0xE000)
    value = {
        "text": every_char,
        "\U0001f600": 1,
        "\ue000": [],
        "é": {},
        "a": [{"b": [1, -2, True, None]}],
        "z": {"y": {"x": ["deep", 2**63 - 1, -(2**63)]}},
    }
    keys = {
        chr(c): c
        for c in (0x41, 0x7F, 0xE9, 0x7FF, 0x800, 0xFFFF, 0x10000, 0x10FFFF, 0xE000, 0xD7FF)
    }
    for probe in (value, keys, {}, {"a": {}}, {"a": [[]]}):
        assert orjson.dumps(
            probe, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS
        ) + b"\n" == canonical.pretty_bytes(probe)
