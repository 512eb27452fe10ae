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


def _in_flight(ws: Workspace) -> dict[str, set[str]]:
    """Raw cursors a pending companion here proposes to advance to, by source: a commit killed after its
    cursor write and before its receipt left them (the next commit completes it, SPEC §8.6) — not
    unbacked."""
    out: dict[str, set[str]] = {}
    folder = ws.pending
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            companion = json.loads(path.read_bytes())
            proposed, expected = companion["proposed_cursors"], companion["expected_cursors"]
        except (OSError, ValueError, TypeError, KeyError):
            continue
        if isinstance(proposed, dict) and isinstance(expected, dict):
            for source_id, cursor in proposed.items():
                # a source that does not move (no change: proposed = expected) backs nothing
                if isinstance(cursor, str) and cursor != expected.get(source_id):
                    out.setdefault(str(source_id), set()).add(cursor)
    return out


def _unbacked_sources(
    ws: Workspace, minter: Any, by_agent: dict[str | None, dict[str, str]]
) -> dict[str | None, list[str]]:
    """Per agent, the sources whose cursor no stored receipt names as ``cursor_after_ref`` (a keyed ref
    of source and cursor, so a receipt of another key never matches) and no companion here proposes.
    Receipts are searched as bytes: stored packets are pretty JSON (SPEC §3.1), one field per line."""
    in_flight = _in_flight(ws)
    wanted: dict[bytes, list[tuple[str | None, str]]] = {}
    for agent, cursors in by_agent.items():
        for source_id, cursor in cursors.items():
            if cursor in in_flight.get(source_id, ()):
                continue
            needle = f'"cursor_after_ref": "{minter.cursor_ref(source_id, cursor)}"'.encode()
            wanted.setdefault(needle, []).append((agent, source_id))
    folder = ws.packets / "commit"
    for path in sorted(folder.glob("*.json")) if folder.is_dir() and wanted else []:
        try:
            data = path.read_bytes()
        except OSError:
            continue  # verify's file check reports it
        for needle in [n for n in wanted if n in data]:
            del wanted[needle]
        if not wanted:
            break
    out: dict[str | None, list[str]] = {}
    for rows in wanted.values():
        for agent, source_id in rows:
            out.setdefault(agent, []).append(source_id)
    return {agent: sorted(sources) for agent, sources in out.items()}


def unbacked(ws: Workspace) -> list[dict[str, Any]]:
    """``{code, agent_id, source_id}`` of every private cursor no receipt in history backs."""
    found = _key_and_minter(ws)
    files = all_cursor_files(ws)
    if found is None or not files:
        return []
    by_agent: dict[str | None, dict[str, str]] = {}
    for agent in files:
        try:
            by_agent[agent] = read_cursors(ws, agent)
        except DcxError:
            continue  # a damaged cursor file is refused by the commands that use it
    stale = _unbacked_sources(ws, found[0], by_agent)
    return [
        {"code": "cursor_unbacked", "agent_id": agent, "source_id": source_id}
        for agent in by_agent
        for source_id in stale.get(agent, [])
    ]


def unbacked_of(ws: Workspace, agent: str | None) -> list[str]:
    """The sources of the acting agent's cursors (its file, else the shared one not yet migrated)
    that no receipt in history backs — what every command that reads cursors warns of (SPEC §16 v4)."""
    found = _key_and_minter(ws)
    if found is None:
        return []
    owner = agent if agent is not None and cursor_path(ws, agent).exists() else None
    if not cursor_path(ws, owner).exists():
        return []
    try:
        cursors = read_cursors(ws, owner)
    except DcxError:
        return []  # a damaged cursor file is refused by the commands that use it
    return _unbacked_sources(ws, found[0], {owner: cursors}).get(owner, [])


def unbacked_warnings(ws: Workspace, agent: str | None) -> list[str]:
    """One ``cursor_unbacked`` warning per unbacked cursor of the acting agent."""
    return [warning(source_id, agent) for source_id in unbacked_of(ws, agent)]


def warning(source_id: str, agent: str | None) -> str:
    return (
        f"cursor_unbacked: the cursor of {source_id} ({agent or 'shared file'}) was advanced by a "
        "commit receipt that is no longer in history (a force-push or reset dropped it); "
        "`dcx verify --repair` rewinds it, so the change it absorbed is offered again"
    )


REPAIR_HINT = "dcx verify --repair (it rewinds the cursor to the newest one a receipt backs), then prepare again"


def refuse_unbacked(ws: Workspace, agent: str | None, command: str, sources: Any) -> None:
    """Commit and ``review`` refuse while one of the acting agent's cursors of a registered source
    (``sources``: their ids) is unbacked (SPEC §16 v4): absorbing more on top of it would hide the
    dropped decision's change for good. A removed source's cursor is ignored (§8.6), so is this."""
    from dcx.core.errors import Refused

    registered = set(sources)
    stale = [source_id for source_id in unbacked_of(ws, agent) if source_id in registered]
    if stale:
        raise Refused(
            f"{command} refused (cursor_unbacked): the cursor of {', '.join(stale)} "
            f"({agent or 'shared file'}) was advanced by a commit receipt no longer in history",
            code="cursor_unbacked",
            hint=REPAIR_HINT,
        )


def _rewound_value(
    ws: Workspace, key_id: str, agent: str | None, source_id: str
) -> tuple[str, str] | None:
    """(raw cursor, receipt ref) after the newest receipt of ``agent`` still in history that names
    ``source_id``."""
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
                    return fields[1], str(receipt.get("receipt_ref"))
    return None


def rewind(ws: Workspace, rows: list[dict[str, Any]], *, wait: float) -> list[dict[str, Any]]:
    """Rewind each unbacked cursor under its file's lock; per cursor ``{agent_id, source_id,
    rewound_to, from_cursor_ref, to_cursor_ref, backed_by}`` (``rewound_to``: ``backed_cursor`` — the
    cursor after receipt ``backed_by`` — or ``none``; the cursor refs are the keyed refs receipts name)."""
    found = _key_and_minter(ws)
    if found is None:
        return []
    minter, key_id = found
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
                was = minter.cursor_ref(source_id, current[source_id])
                found_value = _rewound_value(ws, key_id, agent, source_id)
                if found_value is None:
                    current.pop(source_id, None)
                else:
                    current[source_id] = found_value[0]
                done.append(
                    {
                        "agent_id": agent,
                        "source_id": source_id,
                        "rewound_to": "none" if found_value is None else "backed_cursor",
                        "from_cursor_ref": was,
                        "to_cursor_ref": None
                        if found_value is None
                        else minter.cursor_ref(source_id, found_value[0]),
                        "backed_by": None if found_value is None else found_value[1],
                    }
                )
            write_cursors(ws, current, agent)
    return done
