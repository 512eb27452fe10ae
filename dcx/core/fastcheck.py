"""Stored-packet checks compiled from the shape declarations (the verify fast path).

``PacketSpec.check_stored`` is the interpreted checker: it walks a ``Shape``'s
``Field`` objects, building a key path for every value so that an error can name
it. Verifying a history (``dcx verify``, ``dcx report`` over thousands of
decisions) runs it on every packet, and nearly every packet is valid. This module
generates, once per spec, a Python function from the same declarations that
answers only the valid case: it returns exactly the packet the interpreted checker
returns, or raises. Any exception sends the packet to the interpreted checker, so
refusals, their messages and their codes are always the interpreted checker's;
the compiled one only decides, faster, that a packet is fine. What it does not
know (a ``Field`` subclass with its own ``check``, a ``Mapping`` that is not a
``dict``, a ``str`` subclass) it hands to the rule's own ``check`` or refuses, and
the interpreted checker decides.

It runs only on a packet parsed from stored bytes that ``orjson`` proved are
its pretty form (``PacketSpec.check_parsed``, called by ``store.verify_parsed``):
such a value holds only what ``json.loads`` makes, and ``orjson`` spells all of
it as the ``json`` module does. Besides having no key paths, it is cheaper
because:

- **Canonical bytes are ``orjson``'s sorted bytes.** Each rule proves that its
  own leaves are spelled as RFC 8785 spells them — tokens, refs and patterns
  ASCII, text within the BMP (JCS sorts keys by UTF-16 code units), floats
  that ``repr`` writes without exponent or ``.0``, integers within 2^53; an
  opaque value (``Any_``, a rule's own result) is scanned by
  :func:`dcx.core.canonical.parsed_jcs` — so every part's ``orjson`` bytes are
  its JCS bytes: record lists are sorted by them (no RFC 8785 encode per
  record) and the ref is hashed from them (no proof per packet).
- **No forbidden-key search**: every key is seen by the check (shape fields
  named like a forbidden key, map keys, opaque values): one there sends the
  packet to the interpreted checker, whose detector decides.
- **Per-run memos by exact content**: text the public-safety detector accepted
  (for the bound goal root, with no private values bound: the detector is a
  pure function of the three), records of a list and goal-level embedded
  packets (keyed by their ``orjson`` bytes); ``ready`` drops them all when the
  goal root changes, each holds at most ``MEMO_MAX`` entries, and what the
  compiled check returns may be shared, so ``check_parsed`` returns nothing.

``tests/test_fastcheck.py`` is the differential test: generated valid and invalid
packets of every kind (hypothesis), every fixture packet and mutations of them,
checked by both; the verdicts, messages and packets must be identical.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from dcx.core import fields as F
from dcx.core import public
from dcx.core.canonical import digest_hex, parsed_jcs, sort_key_parsed
from dcx.core.clock import normalise_ts
from dcx.core.errors import DcxError

if TYPE_CHECKING:
    from dcx.core.envelope import PacketSpec

MISSING = object()


class NotFast(Exception):
    """The compiled check cannot say the value is valid: the interpreted one decides."""


# -- text the detector accepted, by exact value (per goal root) -------------------------

_TEXT_OK: set[str] = set()
_TEXT_ROOT: list[str | None] = [None]
_TEXT_MAX_ENTRIES = 200_000


def text_ok(value: str) -> bool:
    """``public.unsafe_class(value) is None``, remembered for the bound goal root.

    Remembered only when no private values are bound (stored packets are read under
    ``without_private_values``); otherwise the detector runs every time."""
    if public._private.get() is not None:
        return public.unsafe_class(value) is None
    root = public._goal_root.get()
    if root != _TEXT_ROOT[0]:
        _TEXT_OK.clear()
        _TEXT_ROOT[0] = root
    if value in _TEXT_OK:
        return True
    if public.unsafe_class(value) is not None:
        return False
    if len(_TEXT_OK) >= _TEXT_MAX_ENTRIES:
        _TEXT_OK.clear()
    _TEXT_OK.add(value)
    return True


# -- per-run memos: exact content -> result ----------------------------------------------

_MEMOS: list[dict[bytes, Any]] = []
MEMO_MAX = 1024  # entries of one memo; past it, it starts again (what recurs comes back)


def new_memo() -> dict[bytes, Any]:
    memo: dict[bytes, Any] = {}
    _MEMOS.append(memo)
    return memo


def ready() -> bool:
    """Whether the compiled checks may answer now: no private values bound (the detector
    would depend on them), memos valid for the bound goal root and not too large."""
    if public._private.get() is not None:
        return False
    root = public._goal_root.get()
    if root != _TEXT_ROOT[0]:
        forget()
        _TEXT_ROOT[0] = root
    return True


def forget() -> None:
    """Drop every memo (text, records, nested packets)."""
    _TEXT_OK.clear()
    for memo in _MEMOS:
        memo.clear()


def opaque_ok(value: Any) -> None:
    """Raise unless ``value`` (an opaque value, or what a rule of its own returned) holds no
    forbidden key and is spelled by ``orjson`` as JCS spells it (see ``parsed_jcs``)."""
    if type(value) is str:
        if value.isascii() or bmp(value):
            return
        raise NotFast
    if parsed_jcs(value) is None:
        raise NotFast
    for _ in public.forbidden_keys(value):
        raise NotFast


def bmp(text: str) -> bool:
    """No character beyond the BMP (JCS sorts keys by UTF-16 code units: those differ)."""
    return text.isascii() or not text or max(text) <= "\uffff"


def _dumps() -> Any:
    from dcx.core.canonical import _orjson

    return _orjson().dumps


def _plain_constant(value: Any) -> bool:
    """Whether ``orjson`` writes a declared constant as its JCS bytes (checked, not assumed:
    it comes from a declaration, not from proven stored bytes)."""
    from dcx.core.canonical import canonical_bytes

    try:
        return parsed_jcs(value) == canonical_bytes(value)
    except DcxError:
        return False


def _per_decision(spec: PacketSpec) -> bool:
    """A packet that names its decision is never the same in two assemblies: not remembered."""
    return "decision_id" in spec.shape.fields


def _refuses_null(rule: F.Field) -> bool:
    """Whether the generated check of ``rule`` refuses None by itself (its type test)."""
    from dcx.core.envelope import Nested, NestedList

    return type(rule) in (
        F.Token,
        F.Pattern,
        F.RefPattern,
        F.Text,
        F.PrivateText,
        F.Bool,
        F.Int,
        F.Number,
        F.Enum,
        F.Timestamp,
        F.Obj,
        F.Tokens,
        F.Map,
        F.Records,
        Nested,
        NestedList,
    ) or (type(rule) is F.Const and rule.value is not None)


# -- code generation -------------------------------------------------------------------


class _Gen:
    """One generated module: a function per shape, spec and list rule, sharing globals."""

    def __init__(self) -> None:
        self.lines: list[str] = []  # the function being generated
        self.functions: list[str] = []  # the finished ones
        self.env: dict[str, Any] = {
            "NotFast": NotFast,
            "MISSING": MISSING,
            "TOKEN_FM": public.TOKEN_RE.fullmatch,
            "text_ok": text_ok,
            "normalise_ts": normalise_ts,
            "isfinite": math.isfinite,
            "SORT_KEY": sort_key_parsed(),
            "DUMPS": _dumps(),
            "SECOND": itemgetter(1),
            "MEMO_MAX": MEMO_MAX,
            "digest_hex": digest_hex,
            "FORBIDDEN": public.FORBIDDEN_KEYS,
            "opaque_ok": opaque_ok,
            "bmp": bmp,
            "SAFE": F.SAFE_INT,
        }
        self.names: dict[tuple[str, int], str] = {}  # (kind, id(shape or spec)) -> function name
        self.keep: list[Any] = []  # keeps ids stable while generating
        self.count = 0

    def memo(self) -> str:
        """A per-run memo of one function: exact content (orjson bytes) -> its result."""
        return self.const(new_memo(), "memo")

    def const(self, value: Any, hint: str = "c") -> str:
        self.count += 1
        name = f"_{hint}{self.count}"
        self.env[name] = value
        self.keep.append(value)
        return name

    def emit(self, text: str) -> None:
        self.lines.append(text)

    # A rule's check as statements: read local ``src``, assign local ``dst``.
    def rule(self, rule: F.Field, src: str, dst: str, ind: str, label: str) -> None:
        from dcx.core.envelope import Nested, NestedList

        kind = type(rule)
        e = self.emit
        if kind is F.Token:
            assert isinstance(rule, F.Token)
            e(  # a token passes the detector too (SPEC §3.4 v4)
                f"{ind}if type({src}) is not str or len({src}) > {rule.limit} or TOKEN_FM({src}) is None "
                f"or not text_ok({src}):"
            )
            e(f"{ind}    raise NotFast")
            e(f"{ind}{dst} = {src}")
        elif kind is F.Pattern or kind is F.RefPattern:  # a ref: the same regex, compiled here
            assert isinstance(rule, F.Pattern)
            import re

            fm = self.const(re.compile(rule.regex).fullmatch, "re")
            detect = (
                f" or not text_ok({src})" if rule.detect else ""
            )  # a decision id (SPEC §3.4 v4)
            e(
                f"{ind}if type({src}) is not str or len({src}) > {rule.limit} or {fm}({src}) is None "
                f"or not {src}.isascii(){detect}:"
            )
            e(f"{ind}    raise NotFast")
            e(f"{ind}{dst} = {src}")
        elif kind is F.Text:
            assert isinstance(rule, F.Text)
            e(
                f"{ind}if type({src}) is not str or len({src}) > {rule.limit} "
                f"or not {src}.strip() or not text_ok({src}) or not bmp({src}):"
            )
            e(f"{ind}    raise NotFast")
            e(f"{ind}{dst} = {src}")
        elif kind is F.PrivateText:
            assert isinstance(rule, F.PrivateText)
            empty = "" if rule.allow_empty else f" or not {src}.strip()"
            e(
                f"{ind}if type({src}) is not str or len({src}) > {rule.limit}{empty} "
                f"or not bmp({src}):"
            )
            e(f"{ind}    raise NotFast")
            e(f"{ind}{dst} = {src}")
        elif kind is F.Bool:
            e(f"{ind}if type({src}) is not bool:")
            e(f"{ind}    raise NotFast")
            e(f"{ind}{dst} = {src}")
        elif kind is F.Int or kind is F.Number:
            assert isinstance(rule, F.Int | F.Number)
            ok = f"type({src}) is int"
            if kind is F.Number:
                ok = f"(type({src}) is int or (type({src}) is float and isfinite({src})))"
            bounds = [f"-SAFE <= {src} <= SAFE"]
            if rule.lo is not None:
                bounds.append(f"{src} >= {self.const(rule.lo)}")
            if rule.hi is not None:
                bounds.append(f"{src} <= {self.const(rule.hi)}")
            e(f"{ind}if not ({ok} and {' and '.join(bounds)}):")
            e(f"{ind}    raise NotFast")
            if kind is F.Number:  # a float JCS spells otherwise than repr (1.0, 1e-05)
                e(f"{ind}if type({src}) is float and ({src}.is_integer() or 'e' in repr({src})):")
                e(f"{ind}    raise NotFast")
            e(f"{ind}{dst} = {src}")
        elif kind is F.Const:
            assert isinstance(rule, F.Const)
            value = self.const(rule.value)
            typ = self.const(type(rule.value))
            if not _plain_constant(rule.value):
                e(f"{ind}raise NotFast")
            e(f"{ind}if type({src}) is not {typ} or {src} != {value}:")
            e(f"{ind}    raise NotFast")
            e(f"{ind}{dst} = {src}")
        elif kind is F.Enum:
            assert isinstance(rule, F.Enum)
            values = self.const(frozenset(rule.values))
            if not _plain_constant(list(rule.values)):
                e(f"{ind}raise NotFast")
            e(f"{ind}if type({src}) is not str or {src} not in {values}:")
            e(f"{ind}    raise NotFast")
            e(f"{ind}{dst} = {src}")
        elif kind is F.Timestamp:
            e(f"{ind}if type({src}) is not str:")
            e(f"{ind}    raise NotFast")
            e(f"{ind}{dst} = normalise_ts({src}, field='')")
        elif kind is F.Any_:
            e(f"{ind}opaque_ok({src})")
            e(f"{ind}{dst} = {src}")
        elif kind is F.Obj:
            assert isinstance(rule, F.Obj) and rule.shape is not None
            e(f"{ind}{dst} = {self.shape(rule.shape)}({src})")
        elif kind is F.Tokens:
            e(f"{ind}{dst} = {self.tokens(rule)}({src})")
        elif kind is F.Map:
            e(f"{ind}{dst} = {self.map(rule)}({src})")
        elif kind is F.Records:
            e(f"{ind}{dst} = {self.records(rule)}({src})")
        elif kind is Nested:
            assert isinstance(rule, Nested) and rule.spec is not None
            # a goal-level packet (the manifest) recurs in every assembly: remembered
            check = self.spec(rule.spec) if _per_decision(rule.spec) else self.nested(rule.spec)
            e(f"{ind}{dst} = {check}({src})")
        elif kind is NestedList:
            e(f"{ind}{dst} = {self.nested_list(rule)}({src})")
        else:  # a rule of its own (a Field subclass): its check answers
            check = self.const(rule.check, "rule")
            e(f"{ind}{dst} = {check}({src}, {label!r})")
            e(f"{ind}opaque_ok({dst})")

    def _function(self, key: Any, hint: str, body: Callable[[str], None]) -> str:
        known = self.names.get((hint, id(key)))
        if known is not None:
            return known
        self.keep.append(key)
        self.count += 1
        title = getattr(key, "title", None) or getattr(key, "kind", None) or ""
        name = f"{hint}_{self.count}_{''.join(c if c.isalnum() else '_' for c in title)}"
        self.names[hint, id(key)] = name
        saved, self.lines = self.lines, []
        body(name)  # may generate the functions it calls first
        self.functions.append("\n".join(self.lines))
        self.lines = saved
        return name

    def shape(self, shape: F.Shape) -> str:
        def body(name: str) -> None:
            e = self.emit
            known = self.const(frozenset(shape.fields), "keys")
            required = self.const(shape._required(), "req")
            e(f"def {name}(value):")
            e("    if type(value) is not dict:")
            e("        raise NotFast")
            e("    keys = value.keys()")
            e(f"    if not ({known} >= keys and keys >= {required}):")
            e("        raise NotFast")
            if public.FORBIDDEN_KEYS & shape.fields.keys():  # the detector decides (and refuses)
                forbidden = self.const(public.FORBIDDEN_KEYS & shape.fields.keys(), "forbidden")
                e(f"    if not {forbidden}.isdisjoint(keys):")
                e("        raise NotFast")
            e("    out = {}")
            for index, (field, rule) in enumerate(shape.fields.items()):
                var = f"v{index}"
                lit = repr(field)
                if rule.optional:
                    e(f"    {var} = value.get({lit}, MISSING)")
                    e(f"    if {var} is not MISSING:")
                    ind = "        "
                else:
                    e(f"    {var} = value[{lit}]")
                    ind = "    "
                if rule.nullable:
                    e(f"{ind}if {var} is None:")
                    e(f"{ind}    out[{lit}] = None")
                    e(f"{ind}else:")
                    self.rule(rule, var, f"out[{lit}]", ind + "    ", field)
                elif rule.optional:  # a null optional field is omitted
                    e(f"{ind}if {var} is not None:")
                    self.rule(rule, var, f"out[{lit}]", ind + "    ", field)
                else:  # null where no null is allowed: the interpreted checker says so
                    if not _refuses_null(rule):
                        e(f"{ind}if {var} is None:")
                        e(f"{ind}    raise NotFast")
                    self.rule(rule, var, f"out[{lit}]", ind, field)
            e("    return out")

        return self._function(shape, "shape", body)

    def tokens(self, rule: Any) -> str:
        def body(name: str) -> None:
            e = self.emit
            e(f"def {name}(value):")
            e("    if type(value) is not list:")
            e("        raise NotFast")
            e("    seen = set()")
            e("    for item in value:")
            self.rule(rule.item, "item", "done", "        ", "item")
            e("        seen.add(done)")
            e("    items = sorted(seen)")
            e(f"    if not ({rule.min_items} <= len(items) <= {rule.max_items}):")
            e("        raise NotFast")
            e("    return items")

        return self._function(rule, "tokens", body)

    def map(self, rule: Any) -> str:
        def body(name: str) -> None:
            e = self.emit
            e(f"def {name}(value):")
            e(f"    if type(value) is not dict or len(value) > {rule.max_items}:")
            e("        raise NotFast")
            e("    out = {}")
            e("    for key in sorted(value):")
            e(
                f"        if type(key) is not str or len(key) > {public.TOKEN_MAX} "
                "or TOKEN_FM(key) is None or key in FORBIDDEN:"
            )
            e("            raise NotFast")
            e("        item = value[key]")
            self.rule(rule.value, "item", "out[key]", "        ", "value")
            e("    return out")

        return self._function(rule, "map", body)

    def records(self, rule: Any) -> str:
        def body(name: str) -> None:
            e = self.emit
            check = self.shape(rule.shape)
            memo = self.memo()
            e(f"def {name}(value):")
            e(
                f"    if type(value) is not list or not ({rule.min_items} <= len(value) <= {rule.max_items}):"
            )
            e("        raise NotFast")
            e("    pairs = []")
            e("    for item in value:")
            e("        key = DUMPS(item)")
            e(f"        pair = {memo}.get(key)")
            e("        if pair is None:")
            e(f"            done = {check}(item)")
            # orjson bytes order; the enclosing packet's parsed_jcs proves it canonical
            e(f"            if len({memo}) >= MEMO_MAX:")
            e(f"                {memo}.clear()")
            e(f"            pair = {memo}[key] = (done, SORT_KEY(done))")
            e("        pairs.append(pair)")
            if not rule.ordered:
                e("    if len(pairs) > 1:")
                e("        pairs.sort(key=SECOND)")
            e("    items = [pair[0] for pair in pairs]")
            if rule.id_field:
                e(f"    ids = [item.get({rule.id_field!r}) for item in items]")
                e("    if len(set(ids)) != len(ids):")
                e("        raise NotFast")
            e("    return items")

        return self._function(rule, "records", body)

    def nested(self, spec: PacketSpec) -> str:
        """An embedded packet's check, remembered by exact content (the goal's manifest,
        say, is the same in every assembly)."""

        def body(name: str) -> None:
            e = self.emit
            check = self.spec(spec)
            memo = self.memo()
            e(f"def {name}(value):")
            e("    key = DUMPS(value)")
            e(f"    known = {memo}.get(key)")
            e("    if known is None:")
            e(f"        if len({memo}) >= MEMO_MAX:")
            e(f"            {memo}.clear()")
            e(f"        known = {memo}[key] = {check}(value)")
            e("    return known")

        return self._function(spec, "nested", body)

    def nested_list(self, rule: Any) -> str:
        def body(name: str) -> None:
            e = self.emit
            spec = rule.spec
            check = self.spec(spec) if _per_decision(spec) else self.nested(spec)
            ref = spec.ref_field
            e(f"def {name}(value):")
            e(f"    if type(value) is not list or len(value) > {rule.max_items}:")
            e("        raise NotFast")
            e(f"    items = [{check}(item) for item in value]")
            e(f"    refs = [item[{ref!r}] for item in items]")
            e("    if len(set(refs)) != len(refs):")
            e("        raise NotFast")
            e(f"    return sorted(items, key=lambda item: item[{ref!r}])")

        return self._function(rule, "nested_list", body)

    def spec(self, spec: PacketSpec) -> str:
        def body(name: str) -> None:
            e = self.emit
            check = self.shape(spec.shape)
            ref = spec.ref_field
            e(f"def {name}(value):")
            e(f"    packet = {check}(value)")
            # every leaf above is spelled by orjson as JCS spells it: these bytes are JCS
            e(f"    data = SORT_KEY({{k: v for k, v in packet.items() if k != {ref!r}}})")
            # no needle scan of ``data``: every key of the packet was looked at above (shape
            # fields, map keys, opaque values), so a forbidden key has already sent it back
            e(f"    if packet[{ref!r}] != {spec.prefix + '-'!r} + digest_hex(data):")
            e("        raise NotFast")
            e("    return packet")

        return self._function(spec, "spec", body)


def compile_spec(spec: PacketSpec) -> Callable[[Any], dict[str, Any]]:
    """The compiled ``check_stored`` of ``spec``: the packet, or an exception (any)."""
    gen = _Gen()
    name = gen.spec(spec)
    source = "\n\n".join(gen.functions) + "\n"
    code = compile(source, f"<dcx.fastcheck {spec.schema_version}>", "exec")
    exec(code, gen.env)  # our own generated source, from the shape declarations
    function: Callable[[Any], dict[str, Any]] = gen.env[name]
    function.source = source  # type: ignore[attr-defined]  # for the curious and the tests
    return function
