"""``dcx show REF``: one verified packet; ``reveal`` resolves its opaque refs locally."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from dcx.core.errors import InvalidInput
from dcx.core.fsutil import read_bytes
from dcx.core.result import Result
from dcx.core.workspace import Workspace
from dcx.state.redaction import is_stub
from dcx.state.refmap import PREFIXES, reveal
from dcx.state.store import Store, unique_prefix

EVENT_PREFIX = "dcx-event-"
KEYED_RE = re.compile(rf"^(?:{'|'.join(PREFIXES)})-[0-9a-f]{{32}}$")


def _show_event(ws: Workspace, text: str) -> Result:
    """One event of events.jsonl by its id or a unique prefix (its stored fields, pretty-printed for JSON)."""
    from dcx.state import events

    log = events.read_log(ws.events, ws.rel(ws.events))
    event_id = unique_prefix(text, events.event_ids(log), "event", hint=events.EVENT_HINT)
    event = events.find_event(log, event_id, ws.rel(ws.events))
    raw = (json.dumps(event, sort_keys=True, ensure_ascii=False, indent=2) + "\n").encode()
    return Result("show", {"kind": "event", "ref": event_id, "packet": event}, raw_json=raw)


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
    if ref.strip().startswith(EVENT_PREFIX):
        return _show_event(ws, ref)
    try:
        full = store.resolve(ref)
    except InvalidInput as exc:
        if exc.code != "ref_not_found":
            raise
        try:
            return _show_event(ws, ref)  # a bare hex prefix may name an event
        except InvalidInput as again:
            if again.code != "ref_not_found":
                raise
            raise InvalidInput(
                f"no packet or event matches {ref.strip()[:80]!r}",
                code="ref_not_found",
                field="ref",
            ) from None
    kind = store.kind_of(full)
    packet = store.get_or_stub(full)
    raw = read_bytes(store.path_for(kind, full))
    data: dict[str, Any] = {"kind": kind, "ref": full, "packet": packet}
    if is_stub(packet):
        data["redacted"] = True
    if reveal_refs:
        data["revealed"] = {r: reveal(ws, r) for r in sorted(set(keyed_refs(packet)))}
    return Result("show", data, raw_json=None if reveal_refs else raw)
