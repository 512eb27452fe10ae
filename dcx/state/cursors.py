"""Private committed cursors and per-source freshness (SPEC §2, §5.3, §8.6, §16).

``private/cursors/<agent-id>.json`` = ``{"schema_version": "dcx_cursors_v0",
"cursors": {source_id: cursor}}`` is one agent's record of what it has
absorbed: what one agent commits does not move another's cursor. Only the
commit path writes it, holding ``file_lock`` on that file around read,
compare, ``write_cursors`` and read-back; scans and exact reads never touch it.

``private/cursors.json`` (the same format) was shared by every agent of a
host until agents got their own files. The first command that reads an
agent's cursors migrates it once, under its lock: a copy to the file of each
agent the profile enables (never over a file that already exists), then the
old file is removed. A migration killed half-way leaves the old file, and the
next one finishes it; two processes migrating at once serialise on the lock
and the second finds nothing left to do.

``private/freshness.json`` = ``{"schema_version": "dcx_freshness_state_v0",
"sources": {source_id: last successful exact read time}}``: freshness is the
time authority was last read and verified, never a file mtime.

Both are private (mode 0600) and written atomically through ``fsutil``. A
damaged cursor file is refused (exit 1), never silently treated as empty:
that would re-report every change as new.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from dcx.core.clock import normalise_ts, parse_ts
from dcx.core.errors import InvalidInput, Refused
from dcx.core.fsutil import (
    DEFAULT_WAIT,
    fault_point,
    file_lock,
    fsync_dir,
    read_bytes,
    unlink,
    write_private,
)
from dcx.core.public import TOKEN_RE
from dcx.core.workspace import Workspace

CURSORS_SCHEMA = "dcx_cursors_v0"
FRESHNESS_SCHEMA = "dcx_freshness_state_v0"
MAX_CURSOR_CHARS = 256


def _encode(schema: str, key: str, mapping: Mapping[str, str]) -> bytes:
    body = {"schema_version": schema, key: {k: mapping[k] for k in sorted(mapping)}}
    return (json.dumps(body, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def _load(ws: Workspace, path: Any, schema: str, key: str) -> dict[str, Any] | None:
    try:
        data = json.loads(read_bytes(path))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if (
        not isinstance(data, dict)
        or data.get("schema_version") != schema
        or not isinstance(data.get(key), dict)
    ):
        return None
    return data[key]


def _check_cursors(mapping: Mapping[str, Any]) -> dict[str, str] | None:
    out = {}
    for source_id, cursor in mapping.items():
        if not isinstance(source_id, str) or not TOKEN_RE.match(source_id) or len(source_id) > 128:
            return None
        if not isinstance(cursor, str) or not cursor or len(cursor) > MAX_CURSOR_CHARS:
            return None
        out[source_id] = cursor
    return out


def cursor_path(ws: Workspace, agent: str | None) -> Path:
    """``private/cursors/<agent-id>.json``; ``None`` is the shared file of workspaces before §16."""
    if agent is None:
        return ws.cursors
    if not TOKEN_RE.match(agent) or len(agent) > 128 or agent in (".", ".."):
        raise InvalidInput("--agent-id: expected a token", field="--agent-id")
    return ws.private / "cursors" / f"{agent}.json"


def migrate_cursors(
    ws: Workspace, agents: Sequence[str], *, wait: float = DEFAULT_WAIT
) -> list[str]:
    """Copy the shared ``private/cursors.json`` to each agent's file, then remove it; the agents copied to.

    Under the shared file's lock; a no-op once it is gone. A damaged shared file is refused
    (exit 1) and left in place.
    """
    if not ws.cursors.exists():
        return []
    copied = []
    with file_lock(ws.cursors, wait=wait, display=ws.rel(ws.cursors)):
        if not ws.cursors.exists():
            return []  # another process migrated it while this one waited
        shared = read_cursors(ws)
        for agent in dict.fromkeys(agents):
            target = cursor_path(ws, agent)
            if target.exists():
                continue  # copied by a migration that was killed before it removed the shared file
            write_private(target, _encode(CURSORS_SCHEMA, "cursors", shared))
            copied.append(agent)
            fault_point("cursors.migrate.after_copy")
        fault_point("cursors.migrate.before_remove")
        unlink(ws.cursors)
        fsync_dir(ws.private)
    fault_point("cursors.migrate.after_remove")
    return copied


def agent_cursors(
    ws: Workspace, agent: str, agents: Sequence[str], *, wait: float = DEFAULT_WAIT
) -> dict[str, str]:
    """The committed cursors of ``agent`` (``agents``: the profile's enabled agents, for the migration)."""
    migrate_cursors(ws, [*agents, agent] if agent not in agents else agents, wait=wait)
    return read_cursors(ws, agent)


def all_cursor_files(ws: Workspace) -> dict[str | None, Path]:
    """Every cursor file on this host: ``None`` for the shared file (before migration), else by agent."""
    out: dict[str | None, Path] = {}
    if ws.cursors.exists():
        out[None] = ws.cursors
    folder = ws.private / "cursors"
    if folder.is_dir():
        for path in sorted(folder.glob("*.json")):
            out[path.stem] = path
    return out


def read_cursors(ws: Workspace, agent: str | None = None) -> dict[str, str]:
    """The committed cursors of ``agent`` (None: the shared file); a missing file is no cursor at all."""
    path = cursor_path(ws, agent)
    raw = _load(ws, path, CURSORS_SCHEMA, "cursors")
    checked = _check_cursors(raw) if raw is not None else None
    if checked is None:
        raise Refused(
            f"{ws.rel(path)} is damaged (not a {CURSORS_SCHEMA} file)",
            code="cursors_invalid",
            hint="restore it from a backup; `dcx verify` lists the commit receipts that name each cursor",
        )
    return checked


def write_cursors(ws: Workspace, mapping: Mapping[str, str], agent: str | None = None) -> None:
    """Replace the committed cursors of ``agent`` atomically (fsync, rename, fsync dir).

    The caller holds ``file_lock(cursor_path(ws, agent))`` and reads back; this only
    refuses values that could never be read again.
    """
    checked = _check_cursors(mapping)
    if checked is None:
        raise InvalidInput(
            "cursors: source ids must be tokens and cursors strings of 1..256 characters",
            field="cursors",
        )
    write_private(cursor_path(ws, agent), _encode(CURSORS_SCHEMA, "cursors", checked))


def read_freshness(ws: Workspace) -> dict[str, str]:
    """Last successful exact read per source; a damaged file reads as 'never read' (it is a cache of facts
    the public receipts also hold, and losing it only makes sources look stale)."""
    raw = _load(ws, ws.freshness, FRESHNESS_SCHEMA, "sources")
    out: dict[str, str] = {}
    for source_id, stamp in (raw or {}).items():
        try:
            out[str(source_id)] = normalise_ts(stamp)
        except (InvalidInput, TypeError):
            continue
    return out


def record_freshness(
    ws: Workspace, reads: Mapping[str, str], *, wait: float = DEFAULT_WAIT
) -> dict[str, str]:
    """Record successful exact reads ``{source_id: observed_at}``; times only move forward."""
    if not reads:
        return read_freshness(ws)
    with file_lock(ws.freshness, wait=wait, display=ws.rel(ws.freshness)):
        current = read_freshness(ws)
        for source_id, stamp in reads.items():
            stamp = normalise_ts(stamp)
            old = current.get(source_id)
            if old is None or parse_ts(stamp) > parse_ts(old):
                current[source_id] = stamp
        write_private(ws.freshness, _encode(FRESHNESS_SCHEMA, "sources", current))
    return current
