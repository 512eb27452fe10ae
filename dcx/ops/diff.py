"""``dcx diff REF1 REF2``: the semantic difference of two packets of one kind.

Record lists are matched by their id field (``fact_id``, ``claim_id``,
``source_id`` …), so a reordered or inserted record reads as one change, not
as a cascade of shifted indexes. The packets' own ref fields always differ
and are reported as ``left``/``right``, not as a change.
"""

from __future__ import annotations

from typing import Any

from dcx.core.errors import InvalidInput
from dcx.core.result import Result
from dcx.core.workspace import Workspace
from dcx.state.store import Store

ID_FIELDS = (
    "source_id",
    "fact_id",
    "claim_id",
    "conflict_id",
    "objective_id",
    "alternative_id",
    "action_id",
    "stop_id",
    "outcome_id",
    "transition_id",
    "assumption_id",
    "source_ref",
    "provider",
    "change_ref",
    "provider_ref",
    "priority",
    "receipt_ref",
    "packet_ref",
)


def _key(item: Any) -> str | None:
    if isinstance(item, dict):
        for name in ID_FIELDS:
            if isinstance(item.get(name), str | int):
                return f"{name}={item[name]}"
    return None


def records(value: Any, path: str = "") -> dict[str, Any]:
    """``path[id=…]`` -> record, for every record of a list matched by id (as ``flatten`` names them)."""
    out: dict[str, Any] = {}
    if isinstance(value, dict):
        for key, item in value.items():
            out.update(records(item, f"{path}.{key}" if path else key))
    elif isinstance(value, list):
        keys = [_key(item) for item in value]
        if value and all(keys) and len(set(keys)) == len(keys):
            for key, item in zip(keys, value, strict=True):
                out[f"{path}[{key}]"] = item
                out.update(records(item, f"{path}[{key}]"))
    return out


def flatten(value: Any, path: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    if isinstance(value, dict):
        if not value and path:
            out[path] = {}
        for key, item in value.items():
            out.update(flatten(item, f"{path}.{key}" if path else key))
    elif isinstance(value, list):
        keys = [_key(item) for item in value]
        if value and all(keys) and len(set(keys)) == len(keys):
            for key, item in zip(keys, value, strict=True):
                out.update(flatten(item, f"{path}[{key}]"))
        elif value and all(not isinstance(v, dict | list) for v in value):
            out[path] = value
        else:
            if not value:
                out[path] = []
            for index, item in enumerate(value):
                out.update(flatten(item, f"{path}[{index}]"))
    else:
        out[path] = value
    return out


def _inside(path: str, record: str) -> bool:
    return path.startswith(record + ".") or path.startswith(record + "[")


def _empty_marker(path: str, side: dict[str, Any], other: dict[str, Any]) -> bool:
    """``path: []`` on one side while the other holds that list's records."""
    return (
        side.get(path) == [] and path not in other and any(q.startswith(path + "[") for q in other)
    )


def diff(*, ws: Workspace, left: str, right: str) -> Result:
    store = Store(ws)
    a_ref, b_ref = store.resolve(left), store.resolve(right)
    a_kind, b_kind = store.kind_of(a_ref), store.kind_of(b_ref)
    if a_kind != b_kind:
        raise InvalidInput(
            f"cannot diff packets of two kinds ({a_kind}, {b_kind})", code="kind_mismatch"
        )
    from dcx.packets import KINDS

    a_packet, b_packet = store.get(a_ref), store.get(b_ref)
    a, b = flatten(a_packet), flatten(b_packet)
    for side in (a, b):
        side.pop(KINDS[a_kind].ref_field, None)
    # A record present on one side only is one change, not one per field.
    a_records, b_records = records(a_packet), records(b_packet)
    whole = {p: ("removed", r) for p, r in a_records.items() if p not in b_records}
    whole |= {p: ("added", r) for p, r in b_records.items() if p not in a_records}
    outer = [p for p in whole if not any(_inside(p, q) for q in whole)]
    changes = []
    for path in sorted(set(a) | set(b) | set(outer)):
        if path in outer:
            change, record = whole[path]
            changes.append(
                {"path": path, "change": change, "old" if change == "removed" else "new": record}
            )
        elif (
            any(_inside(path, q) for q in outer)
            or _empty_marker(path, a, b)
            or _empty_marker(path, b, a)
        ):
            continue  # told by the record-level change
        elif path not in b:
            changes.append({"path": path, "change": "removed", "old": a[path]})
        elif path not in a:
            changes.append({"path": path, "change": "added", "new": b[path]})
        elif a[path] != b[path]:
            changes.append({"path": path, "change": "changed", "old": a[path], "new": b[path]})
    return Result("diff", {"kind": a_kind, "left": a_ref, "right": b_ref, "changes": changes})
