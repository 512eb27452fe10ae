"""Opaque keyed refs of private values, and the private map back to them (SPEC §3.3).

A public packet names a path, revision, cursor or provider resource only as
``<prefix>-<32 hex of blake3 keyed with private/key over JCS(fields)>``. Each
minted ref is recorded in ``private/refs.sqlite`` (never by ``recall``) so
``dcx show --reveal`` can resolve it for the person at the terminal.

Field conventions (every module mints the same ref for the same value):

| prefix | fields |
|---|---|
| ``source-change`` | ``[source_id, path]`` (path relative to the locator root) |
| ``source-revision`` | ``[source_id, path, revision]`` |
| ``source-cursor`` | ``[source_id, cursor]`` (cursor may be null: never committed) |
| ``provider`` | ``[provider, resource_ref]`` |
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from dcx.core.canonical import keyed_ref
from dcx.core.fsutil import check_path
from dcx.core.workspace import Workspace
from dcx.state.keys import Key

PREFIXES = ("source-change", "source-revision", "source-cursor", "provider")


class RefMinter:
    """Mints keyed refs; with ``record`` it remembers them until ``flush()``."""

    def __init__(self, ws: Workspace, key: Key, *, record: bool = True) -> None:
        self.ws = ws
        self.key = key
        self.record = record
        self._pending: dict[str, tuple[str, str]] = {}

    def ref(self, prefix: str, *fields: Any) -> str:
        if prefix not in PREFIXES:
            raise ValueError(f"unknown opaque ref prefix {prefix!r}")
        ref = keyed_ref(self.key.secret, prefix, fields)
        if self.record:
            self._pending[ref] = (prefix, json.dumps(list(fields), ensure_ascii=False))
        return ref

    def change_ref(self, source_id: str, path: str) -> str:
        return self.ref("source-change", source_id, path)

    def revision_ref(self, source_id: str, path: str, revision: str) -> str:
        return self.ref("source-revision", source_id, path, revision)

    def cursor_ref(self, source_id: str, cursor: str | None) -> str:
        return self.ref("source-cursor", source_id, cursor)

    def provider_ref(self, provider: str, resource_ref: str) -> str:
        return self.ref("provider", provider, resource_ref)

    def flush(self) -> None:
        if not self.record or not self._pending:
            return
        try:
            conn = _connect(self.ws)
            try:
                with conn:  # one transaction: a failed one leaves the map as it was
                    conn.executemany(
                        "INSERT OR IGNORE INTO refs(ref, prefix, fields) VALUES (?, ?, ?)",
                        [(ref, prefix, fields) for ref, (prefix, fields) in self._pending.items()],
                    )
            finally:
                conn.close()
        except sqlite3.OperationalError as exc:
            if getattr(exc, "sqlite_errorname", "") != "SQLITE_FULL":
                raise
            from dcx.core.errors import DiskFull

            raise DiskFull(  # SPEC §3.5 v4: name the file, never "internal error"
                f"no space left on the device writing {self.ws.rel(self.ws.refs_db)}",
                hint="free some space and run the command again (the transaction was rolled back)",
            ) from None
        self._pending.clear()

    def __enter__(self) -> RefMinter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.flush()


def _connect(ws: Workspace) -> sqlite3.Connection:
    from dcx.core.fsutil import create_file

    create_file(
        ws.refs_db, 0o600
    )  # sqlite would create it 0644; its journal takes the database's mode
    conn = sqlite3.connect(ws.refs_db, timeout=10)
    conn.execute(
        "CREATE TABLE IF NOT EXISTS refs (ref TEXT PRIMARY KEY, prefix TEXT NOT NULL, fields TEXT NOT NULL)"
    )
    return conn


def reveal(ws: Workspace, ref: str) -> list[Any] | None:
    """The private fields behind ``ref``, or None (unknown here, or minted with another key)."""
    if not ws.refs_db.exists():
        return None
    check_path(ws.refs_db)  # no link on the way (SPEC §3.5 v4); sqlite opens it by name
    conn = sqlite3.connect(f"file:{ws.refs_db}?mode=ro", uri=True)
    try:
        row = conn.execute("SELECT fields FROM refs WHERE ref = ?", (ref,)).fetchone()
    except sqlite3.Error:
        return None
    finally:
        conn.close()
    return json.loads(row[0]) if row else None


def all_private_values(ws: Workspace) -> list[tuple[str, list[Any]]]:
    """Every recorded (ref, fields): audit looks for these values in public files."""
    if not ws.refs_db.exists():
        return []
    check_path(ws.refs_db)
    conn = sqlite3.connect(f"file:{ws.refs_db}?mode=ro", uri=True)
    try:
        return [
            (ref, json.loads(fields))
            for ref, fields in conn.execute("SELECT ref, fields FROM refs")
        ]
    finally:
        conn.close()
