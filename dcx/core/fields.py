"""Field rules: every packet and protocol object is declared once, here-shaped.

A ``Shape`` is an ordered set of named ``Field``s. From it derive validation
(strict: unknown and missing keys are listed), normalisation (record lists
sorted by canonical JSON, token lists de-duplicated and sorted, timestamps in
UTC ``Z`` form, null optional fields omitted), and the JSON Schema in
``docs/schemas/``. ``dcx.core.envelope`` adds the stored-packet envelope
(``PacketSpec``): schema token, goal, key id, decision id and the content-derived ref.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from dcx.core import public
from dcx.core.canonical import canonical_bytes
from dcx.core.clock import normalise_ts
from dcx.core.errors import InvalidInput

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


class Field:
    """One value's rule. ``optional`` fields may be absent; ``nullable`` ones may be null.

    Rules are plain classes configured by keyword (class attributes are the
    defaults): dataclasses would cost ~1 ms each at import, and ``dcx status``
    has a start-up budget (SPEC §3.6).
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
        raise NotImplementedError

    def schema(self) -> dict[str, Any]:
        raise NotImplementedError

    def full_schema(self) -> dict[str, Any]:
        body = self.schema()
        if self.doc:
            body = {"description": self.doc, **body}
        if self.nullable:
            return {"anyOf": [body, {"type": "null"}]}
        return body


class Token(Field):
    limit: int = public.TOKEN_MAX

    def check(self, value: Any, path: str) -> Any:
        return public.check_token(value, field=path, limit=self.limit)

    def schema(self) -> dict[str, Any]:
        return {"type": "string", "pattern": public.TOKEN_RE.pattern, "maxLength": self.limit}


def ReasonCode(**kw: Any) -> Token:
    return Token(limit=public.REASON_MAX, **kw)


class Pattern(Field):
    regex: str = ".*"
    limit: int = 256
    what: str = "value"
    detect: bool = False  # also the public-safety detector (an id a person types: SPEC §3.4 v4)

    _compiled: re.Pattern[str] | None = None

    def check(self, value: Any, path: str) -> Any:
        compiled = self._compiled
        if (
            compiled is None
        ):  # compiled on first use: `dcx status` imports the specs, checks nothing
            compiled = self._compiled = re.compile(self.regex)
        if isinstance(value, str) and len(value) <= self.limit and compiled.fullmatch(value):
            if self.detect:
                public.refuse_unsafe(value, field=path)
            return value
        raise bad(path, f"expected {self.what}")

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


class RefPattern(Pattern):
    """``(?:p1|p2)-[0-9a-f]{32}``, checked without compiling it: a ref's suffix is fixed, so its
    prefix is everything before the last 33 characters (read paths check many kinds; SPEC §3.6)."""

    prefixes: frozenset[str] = frozenset()

    def check(self, value: Any, path: str) -> Any:
        if (
            isinstance(value, str)
            and 33 < len(value) <= self.limit
            and value[-33] == "-"
            and value[:-33] in self.prefixes
            and _HEX.issuperset(value[-32:])
        ):
            return value
        raise bad(path, f"expected {self.what}")


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

    def check(self, value: Any, path: str) -> Any:
        return public.check_text(value, field=path, limit=self.limit)

    def schema(self) -> dict[str, Any]:
        return {"type": "string", "minLength": 1, "maxLength": self.limit}


def Summary(**kw: Any) -> Text:
    return Text(limit=public.SUMMARY_MAX, **kw)


class PrivateText(Field):
    """Bounded text that never enters a public file (queries, content, scope refs)."""

    limit: int = 1000
    allow_empty: bool = False

    def check(self, value: Any, path: str) -> Any:
        if not isinstance(value, str):
            raise bad(path, f"expected text, got {type_name(value)}", "invalid_type")
        if not value.strip() and not self.allow_empty:
            raise bad(path, "must not be empty")
        if len(value) > self.limit:
            raise bad(
                path, f"{len(value)} characters is over the limit of {self.limit}", "text_too_long"
            )
        return value

    def schema(self) -> dict[str, Any]:
        return {"type": "string", "maxLength": self.limit}


class Bool(Field):
    def check(self, value: Any, path: str) -> Any:
        if isinstance(value, bool):
            return value
        raise bad(path, f"expected true or false, got {type_name(value)}", "invalid_type")

    def schema(self) -> dict[str, Any]:
        return {"type": "boolean"}


SAFE_INT = 2**53 - 1  # beyond this, JSON numbers lose precision (RFC 8785 refuses them)


class Int(Field):
    lo: int | None = None
    hi: int | None = None

    def check(self, value: Any, path: str) -> Any:
        if isinstance(value, bool) or not isinstance(value, int):
            raise bad(path, f"expected an integer, got {type_name(value)}", "invalid_type")
        if abs(value) > SAFE_INT:
            raise bad(path, "integer is beyond the safe JSON range (2^53)", "out_of_range")
        if (self.lo is not None and value < self.lo) or (self.hi is not None and value > self.hi):
            raise bad(path, f"{value} is outside {self._range()}", "out_of_range")
        return value

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

    def check(self, value: Any, path: str) -> Any:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise bad(path, f"expected a number, got {type_name(value)}", "invalid_type")
        if not math.isfinite(value) or abs(value) > SAFE_INT:
            raise bad(path, "expected a finite number within the safe JSON range", "out_of_range")
        if (self.lo is not None and value < self.lo) or (self.hi is not None and value > self.hi):
            raise bad(path, f"{value} is outside {self.lo}..{self.hi}", "out_of_range")
        if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
            return value  # keep float-ness; JCS prints 1.0 as 1 anyway
        return value

    def schema(self) -> dict[str, Any]:
        body: dict[str, Any] = {"type": "number"}
        if self.lo is not None:
            body["minimum"] = self.lo
        if self.hi is not None:
            body["maximum"] = self.hi
        return body


class Const(Field):
    value: Any = None

    def check(self, value: Any, path: str) -> Any:
        if value == self.value and type(value) is type(self.value):
            return value
        raise bad(path, f"must be {self.value!r}")

    def schema(self) -> dict[str, Any]:
        return {"const": self.value}


class Enum(Field):
    values: tuple[str, ...] = ()

    def check(self, value: Any, path: str) -> Any:
        if isinstance(value, str) and value in self.values:
            return value
        raise bad(path, f"expected one of {', '.join(self.values)}")

    def schema(self) -> dict[str, Any]:
        return {"type": "string", "enum": list(self.values)}


class Timestamp(Field):
    def check(self, value: Any, path: str) -> Any:
        if not isinstance(value, str):
            raise bad(path, "expected an RFC 3339 timestamp", "invalid_type")
        return normalise_ts(value, field=path)

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

    def check(self, value: Any, path: str) -> Any:
        if not isinstance(value, list):
            raise bad(path, f"expected a list, got {type_name(value)}", "invalid_type")
        items = sorted({self.item.check(v, f"{path}[{i}]") for i, v in enumerate(value)})
        if len(items) < self.min_items:
            raise bad(path, f"needs at least {self.min_items} item(s)", "too_few_items")
        if len(items) > self.max_items:
            raise bad(
                path,
                f"holds {len(items)} items, over the limit of {self.max_items}",
                "too_many_items",
            )
        return items

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

    def check(self, value: Any, path: str) -> Any:
        if not isinstance(value, dict | Mapping):  # dict first: an ABC check costs ~1 us
            raise bad(path, f"expected an object, got {type_name(value)}", "invalid_type")
        if len(value) > self.max_items:
            raise bad(
                path,
                f"holds {len(value)} entries, over the limit of {self.max_items}",
                "too_many_items",
            )
        out = {}
        for key in sorted(value):
            public.check_token(key, field=f"{path}.{shown_key(key)}")
            out[key] = self.value.check(value[key], f"{path}.{key}")
        return out

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

    def _required(self) -> frozenset[str]:
        if self._required_names is None:
            self._required_names = frozenset(
                n for n, rule in self.fields.items() if not rule.optional
            )
        return self._required_names

    def check(self, value: Any, path: str = "") -> dict[str, Any]:
        where = path or self.title
        if not isinstance(value, dict | Mapping):  # dict first: an ABC check costs ~1 us
            raise bad(where, f"expected an object, got {type_name(value)}", "invalid_type")
        fields = self.fields
        keys = value.keys()
        if not fields.keys() >= keys:  # one set operation when every key is known (the usual case)
            unknown = sorted(shown_key(k) for k in value if k not in fields)
            first = f"{path}.{unknown[0]}" if path else unknown[0]
            raise bad(first, f"unknown field(s): {', '.join(unknown)}", "unknown_field")
        if not keys >= self._required():
            missing = [
                name for name, rule in fields.items() if not rule.optional and name not in value
            ]
            raise bad(where, f"missing field(s): {', '.join(missing)}", "missing_field")
        out: dict[str, Any] = {}
        for name, rule in fields.items():
            if name not in value:
                continue
            sub = f"{path}.{name}" if path else name
            item = value[name]
            if item is None:
                if rule.nullable:
                    out[name] = None
                elif rule.optional:
                    continue  # null optional fields are omitted before hashing
                else:
                    raise bad(sub, "must not be null", "invalid_type")
                continue
            out[name] = rule.check(item, sub)
        return out

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

    def check(self, value: Any, path: str) -> Any:
        assert self.shape is not None
        return self.shape.check(value, path)

    def schema(self) -> dict[str, Any]:
        assert self.shape is not None
        return self.shape.schema()


class Records(Field):
    """A list of records; sorted by canonical JSON unless ``ordered`` (rank decides)."""

    shape: Shape | None = None
    id_field: str | None = None
    min_items: int = 0
    max_items: int = 256
    ordered: bool = False

    def check(self, value: Any, path: str) -> Any:
        assert self.shape is not None
        if not isinstance(value, list):
            raise bad(path, f"expected a list, got {type_name(value)}", "invalid_type")
        if len(value) < self.min_items:
            raise bad(path, f"needs at least {self.min_items} item(s)", "too_few_items")
        if len(value) > self.max_items:
            raise bad(
                path,
                f"holds {len(value)} items, over the limit of {self.max_items}",
                "too_many_items",
            )
        items = [self.shape.check(v, f"{path}[{i}]") for i, v in enumerate(value)]
        if self.id_field:
            seen: set[Any] = set()
            for i, item in enumerate(items):
                ident = item.get(self.id_field)
                if ident in seen:
                    raise bad(
                        f"{path}[{i}].{self.id_field}", f"duplicate id {ident!r}", "duplicate_id"
                    )
                seen.add(ident)
        if not self.ordered:
            items.sort(key=canonical_bytes)
        return items

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

    def schema(self) -> dict[str, Any]:
        return {}
