"""``dcx propose --template`` / ``dcx outcome --template``: a commented skeleton of the input.

The skeleton is derived from the input's own spec (the fields an agent writes,
their rules and their docs), so it always says what `--from` checks. Each
value is an example that passes those rules: the printed file, as it is, is
accepted by `--from` (lines starting with ``//`` are comments, which
``--from`` skips), and it validates against the schema in ``docs/schemas/``
once the comments are gone. Optional fields are named in a comment, not set.
"""

from __future__ import annotations

import json
from typing import Any

from dcx.core.fields import (
    Bool,
    Const,
    Enum,
    Field,
    Int,
    Number,
    Obj,
    Records,
    Shape,
    Text,
    Timestamp,
    Token,
)
from dcx.core.result import Result

KINDS = {
    "proposal": ("dcx.packets.proposal", "decision_proposal_input_v0", "propose"),
    "outcome": ("dcx.packets.outcome", "decision_outcome_input_v0", "outcome"),
}
# examples by field name where "<name>-1" would read oddly; option_id is shared by both
# skeletons, so the outcome accepts what the proposal recommends
NAMED = {"option_id": "option-1", "accepted_by": "person-1", "status": "planned"}


def _rule(field: Field) -> str:
    """The field's rule in a few words, for its comment."""
    if isinstance(field, Records):
        least = f"at least {field.min_items}, " if field.min_items else ""
        return f"a list: {least}at most {field.max_items}"
    if isinstance(field, Enum):
        return "one of " + ", ".join(field.values)
    if isinstance(field, Number | Int):
        kind = "an integer" if isinstance(field, Int) else "a number"
        return f"{kind} from {field.lo:g} to {field.hi:g}"
    if isinstance(field, Timestamp):
        return "RFC 3339 time"
    if isinstance(field, Token):
        return f"a token (letters, digits, _ . : -), at most {field.limit}"
    if isinstance(field, Text):
        return f"public-safe text, at most {field.limit} characters"
    return ""


def _example(name: str, field: Field, now: str) -> Any:
    if isinstance(field, Obj | Records):
        if field.shape is None:
            raise TypeError(f"{name}: a record without a shape")
        one = _object(field.shape, now)
        return one if isinstance(field, Obj) else [one]
    if isinstance(field, Enum):
        return field.values[0]
    if isinstance(field, Bool):
        return False
    if isinstance(field, Const):
        return field.value
    if isinstance(field, Int):
        return field.lo
    if isinstance(field, Number):
        lo, hi = field.lo or 0, field.hi if field.hi is not None else 1
        return round((lo + hi) / 2, 3)
    if isinstance(field, Timestamp):
        return now
    if isinstance(field, Token):
        if name in NAMED:
            return NAMED[name]
        return name.removesuffix("_id").removesuffix("_ref").replace("_", "-") + "-1"
    if isinstance(field, Text):
        return (
            f"Replace with {field.doc[:1].lower()}{field.doc[1:]}" if field.doc else "Replace me."
        )
    raise TypeError(f"no example for {type(field).__name__}")


def _object(shape: Shape, now: str) -> dict[str, Any]:
    return {
        name: _example(name, field, now)
        for name, field in shape.fields.items()
        if not field.optional and not field.computed
    }


def _lines(shape: Shape, value: dict[str, Any], indent: int) -> list[str]:
    pad = " " * indent
    out: list[str] = []
    present = list(value)
    for name, field in shape.fields.items():
        if field.computed:
            continue
        words = " — ".join(w for w in (field.doc, _rule(field)) if w)
        if field.optional:
            out.append(f"{pad}// (optional) {name}: {words}")
            continue
        out.append(f"{pad}// {name}: {words}")
        comma = "," if name != present[-1] else ""
        item = value[name]
        inner = field.shape if isinstance(field, Obj | Records) else None
        if inner is None:
            out.append(f"{pad}{json.dumps(name)}: {json.dumps(item, ensure_ascii=False)}{comma}")
        elif isinstance(field, Obj):
            out += [
                f"{pad}{json.dumps(name)}: {{",
                *_lines(inner, item, indent + 2),
                f"{pad}}}{comma}",
            ]
        else:
            out += [f"{pad}{json.dumps(name)}: [", f"{pad}  {{"]
            out += _lines(inner, item[0], indent + 4)
            out += [f"{pad}  }}", f"{pad}]{comma}"]
    return out


def skeleton(shape: Shape, *, now: str, schema: str, verb: str) -> str:
    value = _object(shape, now)
    head = [
        f"// {schema}: the input of `dcx {verb} --from FILE`; replace every value.",
        f"// Lines starting with // are comments. Schema: docs/schemas/{schema}.schema.json",
    ]
    return "\n".join([*head, "{", *_lines(shape, value, 2), "}"]) + "\n"


def missing_hint(kind: str) -> str:
    """What a missing ``--from`` file's error suggests: the template, and the schema it follows."""
    _, schema, verb = KINDS[kind]
    return (
        f"`dcx {verb} --template > FILE` writes a skeleton to fill in "
        f"({schema}: docs/schemas/{schema}.schema.json)"
    )


def template(*, kind: str, now: str) -> Result:
    from importlib import import_module

    module, schema, verb = KINDS[kind]
    shape = import_module(module).INPUT
    text = skeleton(shape, now=now, schema=schema, verb=verb)
    # "content": a block, so text output keeps its lines (SPEC §3.4.1)
    return Result(f"{verb} template", {"kind": kind, "schema": schema, "content": text})
