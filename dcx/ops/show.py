"""``dcx show REF``: one verified packet."""

from __future__ import annotations

from dcx.result import Result
from dcx.store import Store
from dcx.workspace import Workspace


def show(*, ws: Workspace, ref: str) -> Result:
    store = Store(ws)
    full = store.resolve(ref)
    kind = store.kind_of(full)
    packet = store.get(full)
    raw = store.path_for(kind, full).read_bytes()
    return Result("show", {"kind": kind, "ref": full, "packet": packet}, raw_json=raw)
