"""Field rules: every packet and protocol object is declared once, here-shaped.

A ``Shape`` is an ordered set of named ``Field``s. From it derive validation
(strict: unknown and missing keys are listed), normalisation (record lists
sorted by canonical JSON, token lists de-duplicated and sorted, timestamps in
UTC ``Z`` form, null optional fields omitted), and the JSON Schema in
``docs/schemas/``. ``dcx.core.envelope`` adds the stored-packet envelope
(``PacketSpec``): schema token, goal, key id, decision id and the content-derived ref.

A rule made of rules (``Shape``, ``Obj``, ``Records``, ``Tokens``, ``Map`` and the
envelope's nested packets) compiles, once, into a closure over its parts' closures
(``checker``) that takes no key path: nearly every value checked is valid (a history
read back by ``dcx verify`` or ``dcx report``), and a path per value would cost more
than the checks. A refusal raises :class:`Refusal`, which collects the keys and
indexes it passes through on its way out; the outermost ``check(value, path)`` then
builds the one error naming the whole path — the same error, word for word, as a
check that carried the path down. A rule with a ``check`` of its own (a leaf) is run
with no path; when it refuses, it is run again with its path to make that error.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from operator import itemgetter
from typing import Any

from dcx.core import public
from dcx.core.canonical import canonical_bytes, sort_key_parsed
from dcx.core.clock import normalise_ts
from dcx.core.errors import DcxError, InvalidInput

DECISION_ID_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,127}$")


def type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict | Mapping):
        return "object"
    return type(value).__name__


def shown_key(key: object) -> str:
    """A key as it may appear in a one-line message: tokens as they are, anything else escaped."""
    text = str(key)
    if public.TOKEN_RE.fullmatch(text) and len(text) <= 64:
        return text
    return repr(text[:40])


def bad(path: str, message: str, code: str = "invalid_field") -> InvalidInput:
    return InvalidInput(f"{path}: {message}", field=path, code=code)


class Refusal(Exception):
    """A compiled check's refusal: the error it means, made once its key path is known.

    ``make(path)`` returns the error for the value at ``path``; ``steps`` are the keys
    and indexes passed on the way out, innermost first: a shape's field name (joined
    with a dot, or alone at the top) or a raw suffix (``[3]``, ``.key``)."""

    def __init__(self, make: Callable[[str], DcxError]) -> None:
        super().__init__()
        self.make = make
        self.steps: list[str] = []

    def error(self, path: str) -> DcxError:
        """The error for this refusal when the checked value stands at ``path``."""
        for step in reversed(self.steps):
            if step[0] in "[.":
                path += step
            else:
                path = f"{path}.{step}" if path else step
        return self.make(path)

    def based(self, base: Callable[[str], str]) -> Refusal:
        """This refusal, for a check that runs its part at ``base(path)``."""
        return Refusal(lambda path: self.error(base(path)))


def raised(call: Callable[..., object], *args: Any, **kwargs: Any) -> DcxError:
    """The error ``call(*args, **kwargs)`` raises (a refusal made again, now with its path)."""
    try:
        call(*args, **kwargs)
    except DcxError as exc:
        return exc
    raise AssertionError(f"{call!r} accepted a value it refused a moment ago")


class Unproven(Exception):
    """A ``parsed`` check met a value whose ``orjson`` bytes may not be its canonical bytes:
    the exact check decides (``PacketSpec.check_parsed``)."""


# The lead bytes of a UTF-8 character beyond the BMP: JCS orders keys by UTF-16 code units,
# ``orjson`` by code points, and the two differ only for such characters.
_ASTRAL_LEADS = (b"\xf0", b"\xf1", b"\xf2", b"\xf3", b"\xf4")


def within_bmp(data: bytes) -> bool:
    """Whether the UTF-8 ``data`` holds no character beyond the BMP."""
    return not any(lead in data for lead in _ASTRAL_LEADS)


def _leaf(check: Callable[[Any, str], Any]) -> Callable[[Any], Any]:
    """A rule whose ``check`` uses its path only for its error: run with none; on a refusal,
    run again with the path to make the error (checks are pure, so it refuses again)."""

    def run(value: Any) -> Any:
        try:
            return check(value, "")
        except DcxError:
            raise Refusal(lambda path: raised(check, value, path)) from None

    return run


def refuse(message: str, code: str = "invalid_field") -> Refusal:
    """:func:`bad` at the path of the value being checked."""
    return Refusal(lambda path: bad(path, message, code))


def _step(refused: Refusal, step: str) -> Refusal:
    refused.steps.append(step)
    return refused


def jcs_of(parsed: bool) -> Callable[[Any], bytes]:
    """The canonical encoder of a ``parsed`` check: ``orjson``'s compact sorted bytes, which
    ``PacketSpec.check_parsed`` proves are JCS afterwards (``canonical.parsed_jcs``); else
    the canonical encoder."""
    return (sort_key_parsed() if parsed else None) or canonical_bytes


class Field:
    """One value's rule. ``optional`` fields may be absent; ``nullable`` ones may be null.

    Rules are plain classes configured by keyword (class attributes are the
    defaults): dataclasses would cost ~1 ms each at import, and ``dcx status``
    has a start-up budget (SPEC §3.6). A rule of dcx's own says what it checks in
    :meth:`compile`; a rule defined elsewhere may instead override :meth:`check`.
    """

    doc: str = ""
    optional: bool = False
    nullable: bool = False
    computed: bool = False  # filled by dcx, not by the caller (documentation only)

    def __init__(self, **options: Any) -> None:
        for name, value in options.items():
            if not hasattr(type(self), name):
                raise TypeError(f"{type(self).__name__} has no option {name!r}")
            setattr(self, name, value)

    def check(self, value: Any, path: str) -> Any:
        """``value`` checked and normalised, or the error naming ``path``."""
        try:
            return self.checker()(value)
        except Refusal as refused:
            raise refused.error(path) from None

    def checker(self, parsed: bool = False) -> Callable[[Any], Any]:
        """This rule's check as a closure of the value alone, raising :class:`Refusal`;
        compiled on first use and kept.

        ``parsed``: for a value parsed from stored JSON, checked by ``PacketSpec.check_parsed``
        — records are sorted by their ``orjson`` bytes and remembered by them, and nothing
        it answers is final until that check has proved those bytes canonical."""
        compiled = self.__dict__.get("_checkers")
        if compiled is None:
            compiled = self.__dict__["_checkers"] = {}
        run = compiled.get(parsed)
        if run is None:
            # a rule with a check of its own is run with no path
            own = type(self).check is not Field.check
            run = compiled[parsed] = _leaf(self.check) if own else self.compile(parsed)
        return run

    def compile(self, parsed: bool) -> Callable[[Any], Any]:
        """The closure :meth:`checker` keeps."""
        raise NotImplementedError

    def opens_keys(self) -> bool:
        """Whether a value this rule returns may hold a key that no declaration names (a
        forbidden one, say): an opaque value, a map, a rule with a check of its own."""
        return type(self).check is not Field.check or self._opens_keys()

    def _opens_keys(self) -> bool:
        return False  # a scalar

    def opaque(self) -> bool:
        """Whether a value this rule returns may hold values no rule of dcx's checked (an
        opaque value, a rule with a check of its own): numbers or keys of any spelling."""
        return type(self).check is not Field.check or self._opaque()

    def _opaque(self) -> bool:
        return False  # a scalar

    def schema(self) -> dict[str, Any]:
        raise NotImplementedError

    def full_schema(self) -> dict[str, Any]:
        body = self.schema()
        if self.doc:
            body = {"description": self.doc, **body}
        if self.nullable:
            return {"anyOf": [body, {"type": "null"}]}
        return body


def _named(check: Callable[..., Any], **options: Any) -> Callable[[Any], Any]:
    """A checker of a function that names its ``field`` in its own errors (the detector's,
    the clock's): called with no name; on a refusal, called again with the path."""

    def run(value: Any) -> Any:
        try:
            return check(value, field="", **options)
        except DcxError:
            raise Refusal(lambda path: raised(check, value, field=path, **options)) from None

    return run


class Token(Field):
    limit: int = public.TOKEN_MAX

    def compile(self, parsed: bool) -> Callable[[Any], Any]:
        # public.check_token's test, with the pattern bound here (the most frequent leaf)
        limit, fullmatch = self.limit, re.compile(public.TOKEN_RE.pattern).fullmatch
        token = public.check_token

        safe = public.accepted

        def run(value: Any) -> Any:  # a token passes the detector too (SPEC §3.4 v4)
            if isinstance(value, str) and len(value) <= limit and fullmatch(value) and safe(value):
                return value
            raise Refusal(lambda path: raised(token, value, field=path, limit=limit))

        return run

    def schema(self) -> dict[str, Any]:
        return {"type": "string", "pattern": public.TOKEN_RE.pattern, "maxLength": self.limit}


def ReasonCode(**kw: Any) -> Token:
    return Token(limit=public.REASON_MAX, **kw)


class Pattern(Field):
    regex: str = ".*"
    limit: int = 256
    what: str = "value"
    detect: bool = False  # also the public-safety detector (an id a person types: SPEC §3.4 v4)

    def compile(self, parsed: bool) -> Callable[[Any], Any]:
        # compiled on first use: `dcx status` imports the specs, checks nothing
        fullmatch, limit, message = (
            re.compile(self.regex).fullmatch,
            self.limit,
            f"expected {self.what}",
        )

        detect, safe, unsafe = self.detect, public.accepted, public.refuse_unsafe

        def run(value: Any) -> Any:
            if isinstance(value, str) and len(value) <= limit and fullmatch(value):
                if detect and not safe(value):  # an id a person types (SPEC §3.4 v4)
                    raise Refusal(lambda path: raised(unsafe, value, field=path))
                return value
            raise refuse(message)

        return run

    def schema(self) -> dict[str, Any]:
        return {"type": "string", "pattern": f"^(?:{self.regex})$", "maxLength": self.limit}


def DecisionId(**kw: Any) -> Pattern:
    return Pattern(
        regex=DECISION_ID_RE.pattern[1:-1],
        limit=128,
        what="a decision id ([a-z0-9][a-z0-9._-]{0,127})",
        detect=True,
        **kw,
    )


_HEX = frozenset("0123456789abcdef")
_OBJECT = (dict, Mapping)  # dict first: an ABC check costs ~1 us
_NUMBER = (int, float)
_ABSENT = object()


class RefPattern(Pattern):
    """``(?:p1|p2)-[0-9a-f]{32}``, checked without compiling it: a ref's suffix is fixed, so its
    prefix is everything before the last 33 characters (read paths check many kinds; SPEC §3.6)."""

    prefixes: frozenset[str] = frozenset()

    def compile(self, parsed: bool) -> Callable[[Any], Any]:
        prefixes, limit, message, hexes = self.prefixes, self.limit, f"expected {self.what}", _HEX

        def run(value: Any) -> Any:
            if (
                isinstance(value, str)
                and 33 < len(value) <= limit
                and value[-33] == "-"
                and value[:-33] in prefixes
                and hexes.issuperset(value[-32:])
            ):
                return value
            raise refuse(message)

        return run


def Ref(prefix: str | Sequence[str], **kw: Any) -> Pattern:
    prefixes = [prefix] if isinstance(prefix, str) else list(prefix)
    alternatives = "|".join(prefixes)  # prefixes are [a-z0-9-]: nothing to escape
    return RefPattern(
        regex=f"(?:{alternatives})-[0-9a-f]{{32}}",
        limit=160,
        what=f"a {' or '.join(prefixes)} ref",
        prefixes=frozenset(prefixes),
        **kw,
    )


def Hex8(**kw: Any) -> Pattern:
    return Pattern(regex="[0-9a-f]{8}", limit=8, what="8 hex digits", **kw)


class Text(Field):
    """Public free text: passes the §3.4 detector or is rejected, never truncated."""

    limit: int = public.TEXT_MAX

    def compile(self, parsed: bool) -> Callable[[Any], Any]:
        return _named(public.check_text, limit=self.limit)

    def schema(self) -> dict[str, Any]:
        return {"type": "string", "minLength": 1, "maxLength": self.limit}


def Summary(**kw: Any) -> Text:
    return Text(limit=public.SUMMARY_MAX, **kw)


class PrivateText(Field):
    """Bounded text that never enters a public file (queries, content, scope refs)."""

    limit: int = 1000
    allow_empty: bool = False

    def compile(self, parsed: bool) -> Callable[[Any], Any]:
        limit, allow_empty = self.limit, self.allow_empty

        def run(value: Any) -> Any:
            if not isinstance(value, str):
                raise refuse(f"expected text, got {type_name(value)}", "invalid_type")
            if not value.strip() and not allow_empty:
                raise refuse("must not be empty")
            if len(value) > limit:
                raise refuse(
                    f"{len(value)} characters is over the limit of {limit}", "text_too_long"
                )
            return value

        return run

    def schema(self) -> dict[str, Any]:
        return {"type": "string", "maxLength": self.limit}


class Bool(Field):
    def compile(self, parsed: bool) -> Callable[[Any], Any]:
        def run(value: Any) -> Any:
            if isinstance(value, bool):
                return value
            raise refuse(f"expected true or false, got {type_name(value)}", "invalid_type")

        return run

    def schema(self) -> dict[str, Any]:
        return {"type": "boolean"}


SAFE_INT = 2**53 - 1  # beyond this, JSON numbers lose precision (RFC 8785 refuses them)


class Int(Field):
    lo: int | None = None
    hi: int | None = None

    def compile(self, parsed: bool) -> Callable[[Any], Any]:
        lo, hi, shown = self.lo, self.hi, self._range()

        def run(value: Any) -> Any:
            if isinstance(value, bool) or not isinstance(value, int):
                raise refuse(f"expected an integer, got {type_name(value)}", "invalid_type")
            if abs(value) > SAFE_INT:
                raise refuse("integer is beyond the safe JSON range (2^53)", "out_of_range")
            if (lo is not None and value < lo) or (hi is not None and value > hi):
                raise refuse(f"{value} is outside {shown}", "out_of_range")
            return value

        return run

    def _range(self) -> str:
        return f"{self.lo if self.lo is not None else '-inf'}..{self.hi if self.hi is not None else 'inf'}"

    def schema(self) -> dict[str, Any]:
        body: dict[str, Any] = {"type": "integer"}
        if self.lo is not None:
            body["minimum"] = self.lo
        if self.hi is not None:
            body["maximum"] = self.hi
        return body


class Number(Field):
    lo: float | None = None
    hi: float | None = None

    def compile(self, parsed: bool) -> Callable[[Any], Any]:
        lo, hi = self.lo, self.hi

        def run(value: Any) -> Any:
            if isinstance(value, bool) or not isinstance(value, _NUMBER):
                raise refuse(f"expected a number, got {type_name(value)}", "invalid_type")
            if not math.isfinite(value) or abs(value) > SAFE_INT:
                raise refuse("expected a finite number within the safe JSON range", "out_of_range")
            if (lo is not None and value < lo) or (hi is not None and value > hi):
                raise refuse(f"{value} is outside {lo}..{hi}", "out_of_range")
            return value  # an integral float stays a float; JCS prints 1.0 as 1 anyway

        def parsed_run(value: Any) -> Any:
            # JCS spells an integral float (1.0) or one repr writes with an exponent otherwise
            # than orjson may: not proven here (integers are within 2^53, spelled alike)
            if type(value) is float and (value.is_integer() or "e" in repr(value)):
                raise Unproven
            return run(value)

        return parsed_run if parsed else run

    def schema(self) -> dict[str, Any]:
        body: dict[str, Any] = {"type": "number"}
        if self.lo is not None:
            body["minimum"] = self.lo
        if self.hi is not None:
            body["maximum"] = self.hi
        return body


class Const(Field):
    value: Any = None

    def compile(self, parsed: bool) -> Callable[[Any], Any]:
        const, kind, message = self.value, type(self.value), f"must be {self.value!r}"

        def run(value: Any) -> Any:
            if value == const and type(value) is kind:
                return value
            raise refuse(message)

        def unproven(value: Any) -> Any:
            raise Unproven

        plain = isinstance(const, str | bool | int) or const is None  # spelled alike by both
        return unproven if parsed and not plain else run

    def _opens_keys(self) -> bool:
        return isinstance(self.value, dict | list)

    def schema(self) -> dict[str, Any]:
        return {"const": self.value}


class Enum(Field):
    values: tuple[str, ...] = ()

    def compile(self, parsed: bool) -> Callable[[Any], Any]:
        values, message = self.values, f"expected one of {', '.join(self.values)}"

        def run(value: Any) -> Any:
            if isinstance(value, str) and value in values:
                return value
            raise refuse(message)

        return run

    def schema(self) -> dict[str, Any]:
        return {"type": "string", "enum": list(self.values)}


class Timestamp(Field):
    def compile(self, parsed: bool) -> Callable[[Any], Any]:
        def run(value: Any) -> Any:
            if not isinstance(value, str):
                raise refuse("expected an RFC 3339 timestamp", "invalid_type")
            try:
                return normalise_ts(value, field="")
            except DcxError:
                raise Refusal(lambda path: raised(normalise_ts, value, field=path)) from None

        return run

    def schema(self) -> dict[str, Any]:
        return {
            "type": "string",
            "pattern": r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?Z$",
        }


class Tokens(Field):
    """A set of tokens: de-duplicated and sorted before hashing."""

    min_items: int = 0
    max_items: int = 64
    item: Field = Token()

    def compile(self, parsed: bool) -> Callable[[Any], Any]:
        item, least, most = self.item.checker(parsed), self.min_items, self.max_items

        def run(value: Any) -> Any:
            if not isinstance(value, list):
                raise refuse(f"expected a list, got {type_name(value)}", "invalid_type")
            seen = set()
            for index, each in enumerate(value):
                try:
                    seen.add(item(each))
                except Refusal as refused:
                    raise _step(refused, f"[{index}]") from None
            items = sorted(seen)
            if len(items) < least:
                raise refuse(f"needs at least {least} item(s)", "too_few_items")
            if len(items) > most:
                raise refuse(
                    f"holds {len(items)} items, over the limit of {most}", "too_many_items"
                )
            return items

        return run

    def _opens_keys(self) -> bool:
        return self.item.opens_keys()

    def _opaque(self) -> bool:
        return self.item.opaque()

    def schema(self) -> dict[str, Any]:
        return {
            "type": "array",
            "items": self.item.full_schema(),
            "minItems": self.min_items,
            "maxItems": self.max_items,
            "uniqueItems": True,
        }


class Map(Field):
    """An object with token keys and uniform values (e.g. status counts)."""

    value: Field = Int(lo=0)
    max_items: int = 64

    def compile(self, parsed: bool) -> Callable[[Any], Any]:
        each, most, token = self.value.checker(parsed), self.max_items, public.check_token

        def bad_key(key: Any) -> Refusal:
            return Refusal(lambda path: raised(token, key, field=f"{path}.{shown_key(key)}"))

        def run(value: Any) -> Any:
            if not isinstance(value, _OBJECT):
                raise refuse(f"expected an object, got {type_name(value)}", "invalid_type")
            if len(value) > most:
                raise refuse(
                    f"holds {len(value)} entries, over the limit of {most}", "too_many_items"
                )
            out = {}
            for key in sorted(value):
                try:
                    token(key, field="")
                except DcxError:
                    raise bad_key(key) from None
                try:
                    out[key] = each(value[key])
                except Refusal as refused:
                    raise _step(refused, f".{key}") from None
            return out

        return run

    def _opens_keys(self) -> bool:
        return True  # its keys are tokens, and "token" is one

    def _opaque(self) -> bool:
        return self.value.opaque()  # its keys are tokens: ASCII, spelled alike

    def schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "propertyNames": {"pattern": public.TOKEN_RE.pattern},
            "additionalProperties": self.value.full_schema(),
        }


class Shape:
    """An ordered, strict set of named fields."""

    def __init__(self, title: str, fields: Mapping[str, Field], *, doc: str = "") -> None:
        self.title = title
        self.fields = dict(fields)
        self.doc = doc
        self._required_names: frozenset[str] | None = None
        self._checkers: dict[bool, Callable[[Any], Any]] = {}

    def _required(self) -> frozenset[str]:
        if self._required_names is None:
            self._required_names = frozenset(
                n for n, rule in self.fields.items() if not rule.optional
            )
        return self._required_names

    def check(self, value: Any, path: str = "") -> dict[str, Any]:
        try:
            result: dict[str, Any] = self.checker()(value)
        except Refusal as refused:
            raise refused.error(path) from None
        return result

    def checker(self, parsed: bool = False) -> Callable[[Any], Any]:
        """:meth:`check` as a closure of the value alone (see :meth:`Field.checker`)."""
        run = self._checkers.get(parsed)
        if run is None:
            run = self._checkers[parsed] = self._compile(parsed)
        return run

    def _compile(self, parsed: bool) -> Callable[[Any], Any]:
        title, fields, required = self.title, self.fields, self._required()
        # (name, check, optional, what a null means): 0 refused, 1 kept, 2 omitted
        plan = tuple(
            (
                name,
                rule.checker(parsed),
                rule.optional,
                1 if rule.nullable else 2 if rule.optional else 0,
            )
            for name, rule in fields.items()
        )

        def unknown(value: Any) -> Refusal:
            names = sorted(shown_key(k) for k in value if k not in fields)
            message = f"unknown field(s): {', '.join(names)}"
            return Refusal(
                lambda path: bad(
                    f"{path}.{names[0]}" if path else names[0], message, "unknown_field"
                )
            )

        def missing(value: Any) -> Refusal:
            names = [n for n, rule in fields.items() if not rule.optional and n not in value]
            message = f"missing field(s): {', '.join(names)}"
            return Refusal(lambda path: bad(path or title, message, "missing_field"))

        def run(value: Any) -> dict[str, Any]:
            if not isinstance(value, _OBJECT):
                message = f"expected an object, got {type_name(value)}"
                raise Refusal(lambda path: bad(path or title, message, "invalid_type"))
            keys = value.keys()
            if not fields.keys() >= keys:  # one set operation when every key is known
                raise unknown(value)
            if not keys >= required:
                raise missing(value)
            out: dict[str, Any] = {}
            get = value.get
            for name, check, optional, null in plan:
                if optional:
                    item = get(name, _ABSENT)
                    if item is _ABSENT:
                        continue
                else:
                    item = value[name]  # present: checked above
                if item is None:
                    if null == 1:
                        out[name] = None
                    elif null == 0:
                        raise _step(refuse("must not be null", "invalid_type"), name)
                    continue  # null optional fields are omitted before hashing
                try:
                    out[name] = check(item)
                except Refusal as refused:
                    raise _step(refused, name) from None
            return out

        return run

    def opens_keys(self) -> bool:
        """Whether a value this shape returns may hold a key the public detector forbids
        (``Field.opens_keys``, or a field named like one)."""
        return not public.FORBIDDEN_KEYS.isdisjoint(self.fields) or any(
            rule.opens_keys() for rule in self.fields.values()
        )

    def opaque(self) -> bool:
        """Whether a value this shape returns may hold values no rule of dcx's checked."""
        return any(rule.opaque() for rule in self.fields.values())

    def schema(self) -> dict[str, Any]:
        required = [n for n, f in self.fields.items() if not f.optional]
        body: dict[str, Any] = {
            "type": "object",
            "additionalProperties": False,
            "required": required,
            "properties": {n: f.full_schema() for n, f in self.fields.items()},
        }
        if self.doc:
            body = {"description": self.doc, **body}
        return body


class Obj(Field):
    shape: Shape | None = None

    def compile(self, parsed: bool) -> Callable[[Any], Any]:
        assert self.shape is not None
        return self.shape.checker(parsed)

    def _opens_keys(self) -> bool:
        assert self.shape is not None
        return self.shape.opens_keys()

    def _opaque(self) -> bool:
        assert self.shape is not None
        return self.shape.opaque()

    def schema(self) -> dict[str, Any]:
        assert self.shape is not None
        return self.shape.schema()


MEMO_MAX = 4096  # records one list rule remembers; past it, it starts again


def _remembered(
    check: Callable[[Any], Any], jcs: Callable[[Any], bytes]
) -> Callable[[], Callable[[Any], tuple[Any, bytes]]]:
    """A record's check and sort key (``jcs`` of what the check returns), remembered by the
    record's exact bytes: a history repeats its records (the same facts and claims in many
    assemblies).

    Both are pure functions of the bytes, the bound goal root and the bound private values
    (the detector reads the two): remembered only while no private values are bound (a
    stored packet is read back under ``without_private_values``), and forgotten when the
    goal root changes. Only a ``parsed`` check remembers: what it returns is shared."""
    memo: dict[bytes, tuple[Any, bytes]] = {}
    bound: list[str | None] = [None]

    def fresh(record: Any) -> tuple[Any, bytes]:
        done = check(record)
        return done, jcs(done)

    def remembered(record: Any) -> tuple[Any, bytes]:
        exact = jcs(record)
        known = memo.get(exact)
        if known is None:
            if len(memo) >= MEMO_MAX:
                memo.clear()
            known = memo[exact] = fresh(record)
        return known

    def now() -> Callable[[Any], tuple[Any, bytes]]:
        """The check for a list checked now (the bound values cannot change within it)."""
        if public._private.get() is not None:
            return fresh
        root = public._goal_root.get()
        if root != bound[0]:
            memo.clear()
            bound[0] = root
        return remembered

    return now


_second = itemgetter(1)


class Records(Field):
    """A list of records; sorted by canonical JSON unless ``ordered`` (rank decides)."""

    shape: Shape | None = None
    id_field: str | None = None
    min_items: int = 0
    max_items: int = 256
    ordered: bool = False

    def compile(self, parsed: bool) -> Callable[[Any], Any]:
        assert self.shape is not None
        shape, least, most = self.shape.checker(parsed), self.min_items, self.max_items
        id_field, ordered, jcs = self.id_field, self.ordered, jcs_of(parsed)
        remembered = _remembered(shape, jcs) if parsed else None

        def run(value: Any) -> Any:
            if not isinstance(value, list):
                raise refuse(f"expected a list, got {type_name(value)}", "invalid_type")
            if len(value) < least:
                raise refuse(f"needs at least {least} item(s)", "too_few_items")
            if len(value) > most:
                raise refuse(
                    f"holds {len(value)} items, over the limit of {most}", "too_many_items"
                )
            each = shape if remembered is None else remembered()
            done: list[Any] = []
            try:
                for item in value:
                    done.append(each(item))
            except Refusal as refused:
                raise _step(refused, f"[{len(done)}]") from None
            items: list[dict[str, Any]] = (
                done if remembered is None or not id_field else [pair[0] for pair in done]
            )
            if id_field:
                seen: set[Any] = set()
                for index, item in enumerate(items):
                    ident = item.get(id_field)
                    if ident in seen:
                        raise _step(
                            _step(refuse(f"duplicate id {ident!r}", "duplicate_id"), id_field),
                            f"[{index}]",
                        )
                    seen.add(ident)
            if remembered is None:
                if not ordered:
                    items.sort(key=jcs)  # even one: the encoder's refusal is part of the verdict
                return items
            if not ordered:
                done.sort(key=_second)
            return [pair[0] for pair in done]

        return run

    def _opens_keys(self) -> bool:
        assert self.shape is not None
        return self.shape.opens_keys()

    def _opaque(self) -> bool:
        assert self.shape is not None
        return self.shape.opaque()

    def schema(self) -> dict[str, Any]:
        assert self.shape is not None
        return {
            "type": "array",
            "items": self.shape.schema(),
            "minItems": self.min_items,
            "maxItems": self.max_items,
        }


class Any_(Field):
    """An opaque JSON value (nested packets already validated by their own spec)."""

    def check(self, value: Any, path: str) -> Any:
        return value

    def _opens_keys(self) -> bool:
        return True

    def _opaque(self) -> bool:
        return True

    def schema(self) -> dict[str, Any]:
        return {}
