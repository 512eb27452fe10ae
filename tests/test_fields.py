"""The one packet checker (``dcx.core.fields``, ``dcx.core.envelope``): paths built on failure.

A rule made of rules compiles once into a closure that carries no key path; a refusal
collects its path on the way out. ``PacketSpec.check_parsed`` (the store's read path)
runs the same closures with ``orjson``'s bytes for record order and refs, remembers
checked records, and answers only what it proves; anything else goes to ``check_stored``.
The oracles:

- a hand table of refusals deep inside packets, their messages and fields written out
  from the rules (SPEC §3.1: strict shapes, record lists, nested packets and their refs);
- ``check_stored`` itself, for ``check_parsed``: packets of every stored kind generated from
  their declarations (hypothesis; valid ones with their refs computed, and mutations: a leaf
  replaced by any JSON value, a key dropped or added, a forbidden key, unsafe text, a list
  reversed, a null), checked by both: the same verdict and message, always; and the first
  pass answers for a valid packet with nothing to leave to the exact check (it is not vacuous);
- the plain read path, written out here (``reference_verify``: ``json``'s parse, the pretty
  check, ``check_stored``), for ``store.verify_parsed`` on the stored bytes of every generated
  packet and mutation, bytes edited by hand, every packet under ``fixtures/`` and edits of them;
- a synthetic spec with every rule (and a rule with its own check, an opaque value, nullable
  fields, a field named like a forbidden key).

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

from dcx.core import canonical, public
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

canonical._orjson()  # the store's read path offers orjson's parse only once orjson is imported


@pytest.fixture(autouse=True)
def _goal_root():
    bind_goal_root(ROOT)
    yield
    bind_goal_root("")


# -- the plain read path: the oracle for store.verify_parsed --------------------------------


def reference_verify(kind: str, name: str, data: bytes) -> tuple[str | None, Any]:
    """``store.verify_parsed`` without ``orjson``: ``json``'s parse, the pretty check, the exact check."""
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


def exact(spec: PacketSpec, value: Any) -> tuple[str, Any]:
    try:
        with without_private_values():
            return "ok", spec.check_stored(value)
    except DcxError as exc:
        return "refused", (type(exc).__name__, exc.code, exc.message, exc.field)


def parsed(spec: PacketSpec, value: Any) -> tuple[str, Any]:
    try:
        with without_private_values():
            spec.check_parsed(value)
        return "ok", None
    except DcxError as exc:
        return "refused", (type(exc).__name__, exc.code, exc.message, exc.field)


class Fallbacks:
    """Counts the packets ``check_parsed`` hands to ``check_stored``."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        original = PacketSpec.check_stored

        def counting(spec: PacketSpec, value: Any, path: str = "") -> Any:
            if not path:
                self.count += 1
            return original(spec, value, path)

        monkeypatch.setattr(PacketSpec, "check_stored", counting)


def assert_same(spec: PacketSpec, value: Any) -> None:
    """``check_parsed`` decides as ``check_stored``, twice (the second from the memos)."""
    slow = exact(spec, value)
    for _ in range(2):
        fast = parsed(spec, value)
        assert fast[0] == slow[0], (fast, slow)
        if slow[0] == "refused":
            assert fast == slow


def _plain(packet: Any) -> bool:
    """Whether the first pass of ``check_parsed`` must answer for this valid packet: nothing
    in it that it leaves to the exact check on purpose (a forbidden key anywhere, a float
    JCS may respell, a character beyond the BMP, an integer beyond 2^53)."""
    if not isinstance(packet, dict) or "content" in packet:
        return False
    if any(True for _ in public.forbidden_keys(packet)):
        return False
    return canonical.parsed_jcs(packet) is not None


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


# -- refusals deep inside a packet: a hand table ----------------------------------------------


def _assembly() -> dict[str, Any]:
    """A stored assembly of the fixtures with changed facts and a scan receipt."""
    for path in _fixture_packets():
        if path.parent.name == "assembly":
            packet = json.loads(path.read_bytes())
            if packet["evidence"]["changed_facts"] and packet["scan_receipts"]:
                return packet
    raise AssertionError("no assembly with changed facts under fixtures/")


DEEP_REFUSALS = [
    # (edit of a stored assembly, code, the field, the message) — written from the rules
    (
        lambda a: a["evidence"]["changed_facts"][0].update(fact_id="not a token"),
        "invalid_token",
        "decision_context_assembly_v0.evidence.changed_facts[0].fact_id",
        "decision_context_assembly_v0.evidence.changed_facts[0].fact_id: expected a token "
        "([A-Za-z0-9][A-Za-z0-9_.:-]*, at most 128 characters)",
    ),
    (
        lambda a: a["evidence"].update(surplus=1),
        "unknown_field",
        "decision_context_assembly_v0.evidence.surplus",
        "decision_context_assembly_v0.evidence.surplus: unknown field(s): surplus",
    ),
    (
        lambda a: a["evidence"].pop("changed_facts"),
        "missing_field",
        "decision_context_assembly_v0.evidence",
        "decision_context_assembly_v0.evidence: missing field(s): changed_facts",
    ),
    (
        lambda a: a["scan_receipts"][0].update(goal_id=None),
        "invalid_type",
        "decision_context_assembly_v0.scan_receipts[0].goal_id",
        "decision_context_assembly_v0.scan_receipts[0].goal_id: must not be null",
    ),
    (
        lambda a: a["evidence"].update(packet_ref=a["evidence"]["packet_ref"][:-32] + "0" * 32),
        "ref_mismatch",
        "decision_context_assembly_v0.evidence.packet_ref",
        "decision_context_assembly_v0.evidence: packet_ref does not match the content",
    ),
    (
        lambda a: a.update(decision_id="Upper"),
        "invalid_field",
        "decision_context_assembly_v0.decision_id",
        "decision_context_assembly_v0.decision_id: expected a decision id ([a-z0-9][a-z0-9._-]{0,127})",
    ),
]


@pytest.mark.parametrize("case", range(len(DEEP_REFUSALS)))
def test_a_refusal_deep_inside_names_its_whole_path(case: int) -> None:
    edit, code, field, message = DEEP_REFUSALS[case]
    packet = _assembly()
    edit(packet)
    spec = spec_for("assembly")
    with pytest.raises(DcxError) as raised:
        spec.check_stored(packet)
    assert (raised.value.code, raised.value.message) == (code, message)
    assert raised.value.field == field
    assert parsed(spec, packet) == exact(spec, packet)


def test_the_path_given_is_the_start_of_every_path() -> None:
    rows = F.Records(shape=F.Shape("row", {"n": F.Int(lo=0)}), id_field="n")
    with pytest.raises(DcxError) as raised:
        rows.check([{"n": 1}, {"n": -1}], "outer.rows")
    assert raised.value.message == "outer.rows[1].n: -1 is outside 0..inf"
    with pytest.raises(DcxError) as raised:
        rows.check([{"n": 1}, {"n": 1}], "outer.rows")
    assert raised.value.message == "outer.rows[1].n: duplicate id 1"
    counts = F.Map(max_items=4)
    with pytest.raises(DcxError) as raised:
        counts.check({"ok": 1, "bad key": 2}, "outer.counts")
    assert raised.value.field == "outer.counts.'bad key'"
    with pytest.raises(DcxError) as raised:
        counts.check({"ok": "one"}, "outer.counts")
    assert raised.value.message == "outer.counts.ok: expected an integer, got string"


def test_a_rule_with_a_check_of_its_own_names_its_path_too() -> None:
    shape = F.Shape("cites", {"cite": Citation()})
    with pytest.raises(DcxError) as raised:
        shape.check({"cite": {"source_id": "bad id", "path": "a.md"}}, "input")
    assert raised.value.message.startswith("input.cite.source_id: expected a token")


# -- check_parsed against check_stored ------------------------------------------------------

STORED_KINDS = sorted(SPECS)


@pytest.mark.parametrize("kind", STORED_KINDS)
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_check_parsed_and_the_store_read_decide_as_the_exact_check(kind: str, data: Any) -> None:
    spec = SPECS[kind]
    read = as_read(data.draw(stored_packet(spec)))
    for value in (read, as_read(data.draw(mutated(read)))):
        assert_same(spec, value)
        blob = pretty_bytes(value)
        name = value.get(spec.ref_field) if isinstance(value.get(spec.ref_field), str) else "x"
        for _ in range(2):  # the second read is answered from the memos
            assert store.verify_parsed(kind, name, blob) == reference_verify(kind, name, blob)


@settings(
    max_examples=EXAMPLES * 5,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_every_rule_parsed_and_exact(data: Any) -> None:
    read = as_read(data.draw(stored_packet(SYNTHETIC)))
    assert_same(SYNTHETIC, read)
    assert_same(SYNTHETIC, as_read(data.draw(mutated(read))))


def test_the_first_pass_answers_for_plain_valid_packets(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every real packet with nothing to leave to the exact check is answered by the first
    pass (else ``dcx report`` would check each packet twice)."""
    fallbacks = Fallbacks(monkeypatch)
    answered = 0
    for path in _fixture_packets():
        packet = json.loads(path.read_bytes())
        if is_stub(packet) or not _plain(packet):
            continue
        before = fallbacks.count
        assert parsed(spec_for(path.parent.name), packet) == ("ok", None), path
        assert fallbacks.count == before, f"{path} went to the exact check"
        answered += 1
    assert answered > 50


def test_every_fixture_packet_and_its_edits_read_as_before() -> None:
    paths = _fixture_packets()
    assert len(paths) > 50
    for path in paths:
        kind, name, blob = path.parent.name, path.stem, path.read_bytes()
        for candidate in [blob, *(edit(blob) for edit in EDITS)]:
            for _ in range(2):
                assert store.verify_parsed(kind, name, candidate) == reference_verify(
                    kind, name, candidate
                ), (path, candidate[:80])
        packet = json.loads(blob)
        if not is_stub(packet):
            assert_same(spec_for(kind), packet)


def test_text_refused_for_a_new_goal_root_is_refused_after_a_pass() -> None:
    """A remembered record is the verdict for the bound goal root: a new root forgets it."""
    spec = spec_for("assembly")
    packet = _assembly()
    assert parsed(spec, packet) == ("ok", None)
    summary = packet["evidence"]["changed_facts"][0]["summary"]
    bind_goal_root(f"{summary}")  # now that very text holds the goal root: a local path
    assert parsed(spec, packet) == exact(spec, packet)
    assert exact(spec, packet)[0] == "refused"


def test_private_values_bound_are_checked_every_time() -> None:
    """With private values bound (a writer's check), nothing is remembered: a record that
    passed before is refused once it holds a value the workspace keeps private."""
    spec = spec_for("assembly")
    packet = _assembly()
    assert parsed(spec, packet) == ("ok", None)
    summary = packet["evidence"]["changed_facts"][0]["summary"]

    class Private:
        def find(self, text: str) -> str | None:
            return text if text == summary else None

    public.bind_private_values(Private())
    try:
        spec.check_parsed(packet)  # not under without_private_values: the matcher is read
    except DcxError as exc:
        assert "private value" in exc.message
    else:
        raise AssertionError("a record holding a private value passed from the memo")
    finally:
        public.bind_private_values(None)


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
    if trusted is not None:  # orjson's read is offered only when json would agree
        assert is_pretty(blob, *load_stored(blob)[:1], repr_floats=load_stored(blob)[1])
        assert trusted == json.loads(blob)


def _fixture_packets() -> list[Path]:
    return sorted(
        p
        for p in (REPO / "fixtures").rglob("*.json")
        if p.parent.parent.name == "packets" and p.parent.name in KINDS
    )
