"""The compiled stored-packet check against the interpreted one (differential).

``dcx.core.fastcheck`` generates, from the shape declarations, a check that only
says "valid" (returning the normalised packet) or raises; ``PacketSpec.check_parsed``
falls back to the interpreted ``check_stored`` on any doubt. The oracles here:

- the interpreted checker itself: for packets of every stored kind generated from
  their declarations (hypothesis; valid ones with their refs computed, and
  mutations of them: a leaf replaced by any JSON value, a key dropped or added, a
  forbidden key, unsafe text, a tampered ref, a list reversed), the compiled check
  returns exactly the interpreted result whenever it answers, and answers for every
  valid packet (it is not vacuous);
- the previous read path, written out here (``reference_verify``: ``load_stored``,
  ``is_pretty``, ``check_stored``): ``store.verify_parsed`` (``orjson``'s read and the
  compiled check) gives the same problem and the same parse for the stored bytes of
  every generated packet and mutation, for bytes edited by hand (floats respelled,
  whitespace, NaN, big integers, duplicate keys), and for every packet under
  ``fixtures/`` and edits of them;
- a synthetic spec with every rule the compiler knows and some it does not
  (``Any_``, a ``Field`` subclass, private text, nullable fields, a field named like
  a forbidden key).

``DCX_HYPOTHESIS_PROFILE=deep`` runs many more examples.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dcx.core import canonical, fastcheck
from dcx.core import fields as F
from dcx.core.canonical import is_pretty, load_stored, packet_ref, pretty_bytes
from dcx.core.envelope import Nested, NestedList, PacketSpec
from dcx.core.errors import DcxError
from dcx.core.public import bind_goal_root, without_private_values
from dcx.packets import KINDS, all_specs, spec_for
from dcx.packets.rebase import Citation
from dcx.state import store
from dcx.state.redaction import check_stub, is_stub

REPO = Path(__file__).resolve().parents[1]
DEEP = os.environ.get("DCX_HYPOTHESIS_PROFILE") == "deep"
EXAMPLES = 1500 if DEEP else 12
SPECS = all_specs()
ROOT = "/srv/goal-root"  # the bound goal root: text holding it is refused

canonical._orjson()  # the compiled check and orjson's read need orjson imported


@pytest.fixture(autouse=True)
def _goal_root():
    bind_goal_root(ROOT)
    fastcheck.forget()
    yield
    bind_goal_root("")


# -- the previous read path: the oracle for store.verify_parsed -------------------------


def reference_verify(kind: str, name: str, data: bytes) -> tuple[str | None, Any]:
    """``store.verify_parsed`` as it was before the compiled check (interpreted, json)."""
    if kind not in KINDS:
        return f"unknown packet folder {kind!r}", None
    try:
        packet, repr_floats = load_stored(data)
    except (ValueError, UnicodeDecodeError):
        return "not valid JSON", None
    if not isinstance(packet, dict):
        return "not a JSON object", None
    if not is_pretty(data, packet, repr_floats=repr_floats):
        return "bytes differ from the canonical pretty form (edited by hand?)", packet
    meta = KINDS[kind]
    if is_stub(packet):
        return check_stub(packet, kind, name), packet
    if packet.get("schema_version") != meta.schema_version:
        return (
            f"schema_version is not {meta.schema_version} (wrong folder or unknown version)",
            packet,
        )
    if packet.get(meta.ref_field) != name:
        return f"file name does not match its {meta.ref_field}", packet
    try:
        with without_private_values():
            spec_for(kind).check_stored(packet)
    except DcxError as exc:
        return exc.message, packet
    return None, packet


def interpreted(spec: PacketSpec, value: Any) -> tuple[str, Any]:
    try:
        with without_private_values():
            return "ok", spec.check_stored(value)
    except DcxError as exc:
        return "refused", (exc.code, exc.message)


def compiled(spec: PacketSpec, value: Any) -> tuple[str, Any]:
    try:
        with without_private_values():
            fastcheck.ready()
            return "ok", spec.compiled()(value)
    except Exception as exc:  # any exception sends it to the interpreted checker
        return "unsure", type(exc).__name__


def assert_same(spec: PacketSpec, value: Any, *, must_answer: bool = False) -> None:
    slow = interpreted(spec, value)
    fast = compiled(spec, value)
    if fast[0] == "ok":
        assert slow == fast, "the compiled check accepted what the interpreted one did not"
        # twice: the second answer comes from the memos, and must be the same
        assert compiled(spec, value) == fast
    elif must_answer:
        assert slow[0] != "ok", f"the compiled check did not answer for a valid packet: {fast}"
    # the combined check (what the store runs) decides as the interpreted one
    try:
        with without_private_values():
            spec.check_parsed(value)
        combined: tuple[str, Any] = ("ok", None)
    except DcxError as exc:
        combined = ("refused", (exc.code, exc.message))
    assert combined[0] == slow[0] and (slow[0] == "ok" or combined == slow)


# -- generating packets from their declarations --------------------------------------------

SAFE_TEXTS = [
    "Cache TTL kept at 300 s",
    "version 2.0, released",
    "Tiny float 0.00001 in prose",
    "docs-runbook: step 3",
    "ünïcödé text — fine",
    "  padded  ",
    "emoji \U0001f600 here",  # beyond the BMP: left to the interpreted checker (key order)
]
UNSAFE_TEXTS = [
    "see /home/alice/notes",
    f"under {ROOT}/docs",
    "mail bob@example.com",
    "https://example.com/x",
    "line\nbreak",
    "",
    "   ",
    "x" * 400,
]
TIMESTAMPS = [
    "2026-11-02T09:05:00Z",
    "2026-11-02T09:05:00.250Z",
    "2026-11-02T11:05:00+02:00",
    "2026-11-02 09:05:00Z",
    "not a time",
]
json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**60), max_value=2**60),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([1.0, -0.0, 1e-05, 1.5e-07, 1e16, 2.5, 0.1]),
    st.text(max_size=12),
    st.sampled_from(SAFE_TEXTS + UNSAFE_TEXTS),
)
any_json = st.recursive(
    json_leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["a", "b", "content", "token", "x"]), inner, max_size=3),
    ),
    max_leaves=8,
)
tokens = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,12}", fullmatch=True)


def value_of(rule: F.Field, depth: int = 0) -> st.SearchStrategy[Any]:
    """Valid values of ``rule`` (``mutated`` makes the invalid ones)."""
    kind = type(rule)
    if kind is F.Token:
        return tokens
    if kind is F.Pattern or kind is F.RefPattern:
        assert isinstance(rule, F.Pattern)
        return st.from_regex(rule.regex, fullmatch=True).filter(lambda s: len(s) <= rule.limit)
    if kind is F.Text:
        return st.sampled_from(SAFE_TEXTS)
    if kind is F.PrivateText:
        return st.text(max_size=20)
    if kind is F.Bool:
        return st.booleans()
    if kind is F.Int:
        assert isinstance(rule, F.Int)
        lo = rule.lo if rule.lo is not None else -(2**53)
        hi = rule.hi if rule.hi is not None else 2**53
        return st.one_of(st.integers(lo, min(hi, lo + 1000)), st.integers(lo, hi))
    if kind is F.Number:
        assert isinstance(rule, F.Number)
        lo = rule.lo if rule.lo is not None else -1e6
        hi = rule.hi if rule.hi is not None else 1e6
        return st.one_of(
            st.floats(lo, hi),
            st.sampled_from([v for v in (1.0, 0.0, 0.5, 1e-05, 2e-7, 3) if lo <= v <= hi] or [lo]),
            st.integers(int(lo), int(hi)) if hi - lo >= 1 else st.just(lo),
        )
    if kind is F.Const:
        assert isinstance(rule, F.Const)
        return st.just(rule.value)
    if kind is F.Enum:
        assert isinstance(rule, F.Enum)
        return st.sampled_from(list(rule.values))
    if kind is F.Timestamp:
        return st.sampled_from(TIMESTAMPS[:3])
    if kind is F.Tokens:
        assert isinstance(rule, F.Tokens)
        return st.lists(
            value_of(rule.item, depth), min_size=rule.min_items, max_size=rule.min_items + 3
        ).filter(lambda items: len(set(items)) >= rule.min_items)
    if kind is F.Map:
        assert isinstance(rule, F.Map)
        return st.dictionaries(tokens, value_of(rule.value, depth), max_size=min(3, rule.max_items))
    if kind is F.Obj:
        return shape_value(rule.shape, depth + 1)  # type: ignore[attr-defined]
    if kind is F.Records:
        assert isinstance(rule, F.Records)
        low, ident = rule.min_items, rule.id_field
        return st.lists(
            shape_value(rule.shape, depth + 1),
            min_size=low,
            max_size=low + 3,
            unique_by=(lambda r: json.dumps(r.get(ident))) if ident else None,
        )
    if kind is Nested:
        return stored_packet(rule.spec, depth + 1)  # type: ignore[attr-defined]
    if kind is NestedList:
        return st.lists(stored_packet(rule.spec, depth + 1), max_size=2)  # type: ignore[attr-defined]
    if kind is F.Any_:
        return any_json
    if kind is Citation:
        return st.one_of(
            st.from_regex(r"source-change-[0-9a-f]{32}", fullmatch=True),
            st.fixed_dictionaries({"source_id": tokens, "path": st.sampled_from(["a.md", ""])}),
        )
    raise AssertionError(f"no strategy for {kind.__name__}")


def shape_value(shape: Any, depth: int = 0) -> st.SearchStrategy[dict[str, Any]]:
    @st.composite
    def build(draw: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, rule in shape.fields.items():
            if rule.optional or rule.nullable:
                choice = draw(st.sampled_from(["value", "value", "absent", "null"]))
                if choice == "absent" and rule.optional:
                    continue
                if choice == "null":
                    out[name] = None
                    continue
            out[name] = draw(value_of(rule, depth))
        return out

    return build()


def stored_packet(spec: PacketSpec, depth: int = 0) -> st.SearchStrategy[dict[str, Any]]:
    """A packet of ``spec`` as dcx stores it (normalised, its ref computed) when the drawn
    values are valid; else the drawn values as they are (an invalid packet)."""

    @st.composite
    def build(draw: Any) -> dict[str, Any]:
        raw = draw(shape_value(spec.shape, depth))
        raw[spec.ref_field] = f"{spec.prefix}-{'0' * 32}"
        try:
            with without_private_values():
                packet = spec.shape.check(raw, spec.schema_version)
            packet[spec.ref_field] = packet_ref(spec.prefix, packet, spec.ref_field)
        except DcxError:  # invalid values, or an opaque value JCS refuses (2^60)
            return raw
        return packet

    return build()


def as_read(packet: Any) -> Any:
    """``packet`` as the store reads it back (its pretty bytes, parsed)."""
    return json.loads(pretty_bytes(packet))


# -- mutations ----------------------------------------------------------------------------


def _paths(value: Any, here: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [here]
    if isinstance(value, dict):
        for key, item in value.items():
            out += _paths(item, (*here, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out += _paths(item, (*here, index))
    return out


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        value = value[step]
    return value


@st.composite
def mutated(draw: Any, packet: dict[str, Any]) -> dict[str, Any]:
    value = json.loads(json.dumps(packet))
    paths = [p for p in _paths(value) if p]
    if not paths:
        return value
    path = draw(st.sampled_from(paths))
    parent, last = _at(value, path[:-1]), path[-1]
    how = draw(
        st.sampled_from(["replace", "drop", "add", "forbidden", "unsafe", "reverse", "null"])
    )
    if how == "replace":
        parent[last] = draw(any_json)
    elif how == "drop":
        del parent[last]
    elif how == "add" and isinstance(parent, dict):
        parent[draw(st.sampled_from(["extra", "summary", "content"]))] = draw(any_json)
    elif how == "forbidden" and isinstance(parent, dict):
        parent["token"] = "x"
    elif how == "unsafe" and isinstance(parent[last], str):
        parent[last] = draw(st.sampled_from(UNSAFE_TEXTS))
    elif how == "reverse" and isinstance(parent[last], list):
        parent[last].reverse()
    elif how == "null":
        parent[last] = None
    return value


# -- the tests ----------------------------------------------------------------------------

STORED_KINDS = sorted(SPECS)


@pytest.mark.parametrize("kind", STORED_KINDS)
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_compiled_check_matches_the_interpreted_one(kind: str, data: Any) -> None:
    spec = SPECS[kind]
    packet = data.draw(stored_packet(spec))
    read = as_read(packet)
    assert_same(spec, read, must_answer=_plain(read))
    assert_same(spec, as_read(data.draw(mutated(read))))


@pytest.mark.parametrize("kind", STORED_KINDS)
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_store_read_matches_the_previous_read(kind: str, data: Any) -> None:
    spec = SPECS[kind]
    packet = data.draw(stored_packet(spec))
    for value in (packet, data.draw(mutated(as_read(packet)))):
        blob = pretty_bytes(value)
        name = value.get(spec.ref_field) if isinstance(value.get(spec.ref_field), str) else "x"
        for _ in range(2):  # the second read goes through the compiled check and its memos
            assert store.verify_parsed(kind, name, blob) == reference_verify(kind, name, blob)


EDITS = [
    lambda b: b.replace(b": 1.0", b": 1"),
    lambda b: b.replace(b"\n  ", b"\n   ", 1),
    lambda b: b.rstrip(b"\n"),
    lambda b: b.replace(b'"schema_version"', b'"schema_version": 1, "schema_version"', 1),
    lambda b: b[:-2] + b',\n  "zz": NaN\n}\n',
    lambda b: b[:-2] + b',\n  "zz": 123456789012345678901234567890\n}\n',
    lambda b: b[:-2] + b',\n  "zz": 1e-05\n}\n',
    lambda b: b[:-2] + b',\n  "zz": 0.00001\n}\n',
    lambda b: b[:-2] + b',\n  "zz": 1e+16\n}\n',
    lambda b: b[:-2] + b',\n  "zz": 1e16\n}\n',
    lambda b: b"\xef\xbb\xbf" + b,
    lambda b: b.replace(b'"', b"'", 1),
]


@pytest.mark.parametrize("number", ["1e-05", "0.00001", "1.5e-07", "1e+16", "1e16", "2.5", "1.0"])
def test_float_spellings_read_as_before(number: str) -> None:
    """orjson writes 1e-05 as 0.00001 and 1e-07 as 1e-7: such bytes are never trusted to it."""
    blob = b'{\n  "a": ' + number.encode() + b',\n  "b": [\n    ' + number.encode() + b"\n  ]\n}\n"
    assert store.verify_parsed("scan", "x", blob) == reference_verify("scan", "x", blob)
    trusted = canonical.load_pretty(blob)
    if trusted is not None:  # orjson's read is offered only when json would agree on the bytes
        assert is_pretty(blob, *load_stored(blob)[:1], repr_floats=load_stored(blob)[1])
        assert trusted == json.loads(blob)


def _fixture_packets() -> list[Path]:
    return sorted(
        p
        for p in (REPO / "fixtures").rglob("*.json")
        if p.parent.parent.name == "packets" and p.parent.name in KINDS
    )


def test_every_fixture_packet_and_its_edits_read_as_before() -> None:
    paths = _fixture_packets()
    assert len(paths) > 50
    answered = 0
    for path in paths:
        kind, name, blob = path.parent.name, path.stem, path.read_bytes()
        for candidate in [blob, *(edit(blob) for edit in EDITS)]:
            for _ in range(2):
                assert store.verify_parsed(kind, name, candidate) == reference_verify(
                    kind, name, candidate
                ), (path, candidate[:80])
        packet = json.loads(blob)
        if not is_stub(packet):
            assert_same(spec_for(kind), packet, must_answer=_plain(packet))
            answered += _plain(packet)
    assert answered > 50  # nearly every real packet is answered by the compiled check


# -- a spec with every rule --------------------------------------------------------------

_INNER = F.Shape(
    "inner",
    {
        "name": F.Token(),
        "note": F.Text(optional=True),
        "weight": F.Number(lo=0, hi=1, nullable=True),
    },
)
SYNTHETIC = PacketSpec(
    kind="scan",  # the kind only names the spec; nothing is stored
    schema_version="dcx_synthetic_v0",
    prefix="dcx-synthetic",
    ref_field="packet_ref",
    decision_scoped="optional",
    fields={
        "opaque": F.Any_(optional=True),
        "citation": Citation(optional=True),
        "private": F.PrivateText(optional=True),
        "private_empty": F.PrivateText(optional=True, allow_empty=True),
        "content": F.Text(optional=True),  # named like a forbidden key: the detector decides
        "nullable_token": F.Token(nullable=True),
        "count": F.Int(lo=0, hi=10),
        "flag": F.Const(value=True),
        "none_const": F.Const(value=None, optional=True),
        "seen": F.Timestamp(),
        "tags": F.Tokens(min_items=1, max_items=3),
        "counts": F.Map(max_items=2),
        "inner": F.Obj(shape=_INNER, optional=True),
        "rows": F.Records(shape=_INNER, id_field="name", max_items=4),
        "ranked": F.Records(shape=_INNER, ordered=True, optional=True),
        "kind_of": F.Enum(values=("a", "b")),
        "ref": F.Ref("source-change", optional=True),
    },
)


@settings(
    max_examples=EXAMPLES * 5,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_every_rule_against_the_interpreted_checker(data: Any) -> None:
    packet = data.draw(stored_packet(SYNTHETIC))
    read = as_read(packet)
    assert_same(SYNTHETIC, read, must_answer=_plain(read))
    assert_same(SYNTHETIC, as_read(data.draw(mutated(read))))


def _plain(packet: Any) -> bool:
    """Whether the compiled check must answer for this valid packet: nothing it leaves to
    the interpreted one on purpose (a forbidden key anywhere, a float JCS respells, a
    character beyond the BMP, an integer beyond 2^53)."""
    if isinstance(packet, dict) and "content" in packet:
        return False
    if any(True for _ in fastcheck.public.forbidden_keys(packet)):
        return False
    blob = pretty_bytes(packet)  # trusted as the store trusts it: orjson proved its bytes
    value, repr_floats = load_stored(blob)
    if not canonical.pretty_by_orjson(blob, value, repr_floats=repr_floats):
        return False
    return canonical.parsed_jcs(packet) is not None


def test_compiled_source_is_generated_once_per_spec() -> None:
    spec = spec_for("assembly")
    assert spec.compiled() is spec.compiled()
    assert "def " in spec.compiled().source


def test_private_values_bound_leave_it_to_the_interpreted_checker() -> None:
    from dcx.core import public

    class Everything:
        def find(self, text: str) -> str | None:
            return text

    public.bind_private_values(Everything())
    try:
        assert not fastcheck.ready()
    finally:
        public.bind_private_values(None)
    assert fastcheck.ready()


def test_a_new_goal_root_forgets_what_the_detector_accepted() -> None:
    spec = spec_for("manifest")
    path = next(p for p in _fixture_packets() if p.parent.name == "manifest")
    packet = json.loads(path.read_bytes())
    assert compiled(spec, packet)[0] == "ok"
    assert fastcheck._TEXT_OK or fastcheck._MEMOS
    bind_goal_root("/elsewhere")
    fastcheck.ready()
    assert not fastcheck._TEXT_OK and not any(fastcheck._MEMOS)
