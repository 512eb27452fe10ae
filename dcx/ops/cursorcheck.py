"""Private cursors checked against the public commit receipts (SPEC §16, ``dcx verify``).

Only a commit advances a cursor, and every commit stores a receipt naming
each source's ``cursor_after_ref`` (a keyed ref of the raw cursor). A cursor
whose ref no receipt in history names — minted with this host's key — was
advanced by a receipt that no longer exists: a force-push or a reset dropped
it. ``verify`` warns ``cursor_unbacked``; ``verify --repair`` rewinds that
cursor, under its lock, to the newest cursor still backed by a receipt of the
same agent (by the time of its commit line, raw value looked up in
``private/refs.sqlite``), or removes it (no cursor: the next prepare reads the
source from the start), so the next prepare re-reads what the vanished
receipt had absorbed and can commit it.
"""

from __future__ import annotations

import json
from typing import Any

from dcx.core.errors import DcxError
from dcx.core.fsutil import file_lock, read_bytes
from dcx.core.workspace import Workspace
from dcx.names import same_actor
from dcx.state import decisions
from dcx.state.cursors import all_cursor_files, cursor_path, read_cursors, write_cursors


def _receipts(ws: Workspace, key_id: str) -> list[dict[str, Any]]:
    """Commit receipts in history minted with this host's key, oldest commit first."""
    when: dict[str, str] = {}
    for decision_id in decisions.decision_ids(ws):
        for entry in decisions.entries(ws, decision_id):
            if entry["kind"] == "commit":
                when.setdefault(entry["ref"], str(entry.get("observed_at", "")))
    out = []
    folder = ws.packets / "commit"
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            receipt = json.loads(read_bytes(path))
        except (OSError, ValueError):
            continue  # verify's file check reports it
        if (
            isinstance(receipt, dict)
            and receipt.get("key_id") == key_id
            and isinstance(receipt.get("sources"), list)
        ):
            out.append(receipt)
    out.sort(key=lambda r: (when.get(str(r.get("receipt_ref")), ""), str(r.get("receipt_ref"))))
    return out


def _key_and_minter(ws: Workspace):
    from dcx.state.keys import load_key
    from dcx.state.refmap import RefMinter

    try:
        key = load_key(ws, create=False)
    except DcxError:
        return None
    return RefMinter(ws, key, record=False), key.key_id


def unbacked(ws: Workspace) -> list[dict[str, Any]]:
    """``{code, agent_id, source_id}`` of every private cursor no receipt in history backs."""
    found = _key_and_minter(ws)
    files = all_cursor_files(ws)
    if found is None or not files:
        return []
    minter, key_id = found
    backed = {
        (row.get("source_id"), row.get("cursor_after_ref"))
        for receipt in _receipts(ws, key_id)
        for row in receipt["sources"]
        if isinstance(row, dict)
    }
    out = []
    for agent in files:
        try:
            cursors = read_cursors(ws, agent)
        except DcxError:
            continue  # a damaged cursor file is refused by the commands that use it
        for source_id, cursor in sorted(cursors.items()):
            if (source_id, minter.cursor_ref(source_id, cursor)) not in backed:
                out.append({"code": "cursor_unbacked", "agent_id": agent, "source_id": source_id})
    return out


def _rewound_value(ws: Workspace, key_id: str, agent: str | None, source_id: str) -> str | None:
    """The raw cursor after the newest receipt of ``agent`` still in history that names ``source_id``."""
    from dcx.state.refmap import reveal

    for receipt in reversed(_receipts(ws, key_id)):
        by = receipt.get("agent_id")
        if agent is not None and by is not None and not same_actor(by, agent):
            continue
        for row in receipt["sources"]:
            if isinstance(row, dict) and row.get("source_id") == source_id:
                fields = reveal(ws, str(row.get("cursor_after_ref")))
                if (
                    isinstance(fields, list)
                    and len(fields) == 2
                    and fields[0] == source_id
                    and isinstance(fields[1], str)
                ):
                    return fields[1]
    return None


def rewind(ws: Workspace, rows: list[dict[str, Any]], *, wait: float) -> list[dict[str, Any]]:
    """Rewind each unbacked cursor under its file's lock; ``{agent_id, source_id, rewound_to}`` per cursor
    (``rewound_to``: ``backed_cursor`` or ``none``)."""
    found = _key_and_minter(ws)
    if found is None:
        return []
    _, key_id = found
    done = []
    for agent in dict.fromkeys(r["agent_id"] for r in rows):
        path = cursor_path(ws, agent)
        with file_lock(path, wait=wait, display=ws.rel(path)):
            stale = {
                r["source_id"] for r in unbacked(ws) if r["agent_id"] == agent
            }  # again, under the lock
            if not stale:
                continue
            current = read_cursors(ws, agent)
            for source_id in sorted(stale):
                value = _rewound_value(ws, key_id, agent, source_id)
                if value is None:
                    current.pop(source_id, None)
                else:
                    current[source_id] = value
                done.append(
                    {
                        "agent_id": agent,
                        "source_id": source_id,
                        "rewound_to": "none" if value is None else "backed_cursor",
                    }
                )
            write_cursors(ws, current, agent)
    return done
