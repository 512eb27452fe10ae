"""Private committed cursors and per-source freshness (SPEC §2, §5.3, §8.6).

``private/cursors.json`` = ``{"schema_version": "dcx_cursors_v0", "cursors":
{source_id: cursor}}`` is the one record of what has been absorbed. Only the
commit path writes it, holding ``file_lock(ws.cursors)`` around read, compare,
``write_cursors`` and read-back; scans and exact reads never touch it.

``private/freshness.json`` = ``{"schema_version": "dcx_freshness_state_v0",
"sources": {source_id: last successful exact read time}}``: freshness is the
time authority was last read and verified, never a file mtime.

Both are private (mode 0600) and written atomically through ``fsutil``. A
damaged cursor file is refused (exit 1), never silently treated as empty:
that would re-report every change as new.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from dcx.core.clock import normalise_ts, parse_ts
from dcx.core.errors import InvalidInput, Refused
from dcx.core.fsutil import DEFAULT_WAIT, file_lock, write_private
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
        data = json.loads(path.read_bytes())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(data, dict) or data.get("schema_version") != schema or not isinstance(data.get(key), dict):
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


def read_cursors(ws: Workspace) -> dict[str, str]:
    """The committed cursors; a missing file is no cursor at all."""
    raw = _load(ws, ws.cursors, CURSORS_SCHEMA, "cursors")
    checked = _check_cursors(raw) if raw is not None else None
    if checked is None:
        raise Refused(
            f"{ws.rel(ws.cursors)} is damaged (not a {CURSORS_SCHEMA} file)",
            code="cursors_invalid",
            hint="restore it from a backup; `dcx verify` lists the commit receipts that name each cursor",
        )
    return checked


def write_cursors(ws: Workspace, mapping: Mapping[str, str]) -> None:
    """Replace the committed cursors atomically (fsync, rename, fsync dir).

    The caller holds ``file_lock(ws.cursors)`` and reads back; this only
    refuses values that could never be read again.
    """
    checked = _check_cursors(mapping)
    if checked is None:
        raise InvalidInput("cursors: source ids must be tokens and cursors strings of 1..256 characters",
                           field="cursors")
    write_private(ws.cursors, _encode(CURSORS_SCHEMA, "cursors", checked))


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


def record_freshness(ws: Workspace, reads: Mapping[str, str], *, wait: float = DEFAULT_WAIT) -> dict[str, str]:
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
