"""``dcx show REF``: one verified packet; ``reveal`` resolves its opaque refs locally."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from dcx.redaction import is_stub
from dcx.refmap import PREFIXES, reveal
from dcx.result import Result
from dcx.store import Store
from dcx.workspace import Workspace

KEYED_RE = re.compile(rf"^(?:{'|'.join(PREFIXES)})-[0-9a-f]{{32}}$")


def keyed_refs(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for item in value.values():
            yield from keyed_refs(item)
    elif isinstance(value, list):
        for item in value:
            yield from keyed_refs(item)
    elif isinstance(value, str) and KEYED_RE.fullmatch(value):
        yield value


def show(*, ws: Workspace, ref: str, reveal_refs: bool = False) -> Result:
    store = Store(ws)
    full = store.resolve(ref)
    kind = store.kind_of(full)
    packet = store.get_or_stub(full)
    raw = store.path_for(kind, full).read_bytes()
    data: dict[str, Any] = {"kind": kind, "ref": full, "packet": packet}
    if is_stub(packet):
        data["redacted"] = True
    if reveal_refs:
        data["revealed"] = {r: reveal(ws, r) for r in sorted(set(keyed_refs(packet)))}
    return Result("show", data, raw_json=None if reveal_refs else raw)
