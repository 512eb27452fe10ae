"""The stat cache (SPEC §5.3): (size, mtime_ns, inode, ctime_ns) → revision.

Unchanged files are not re-read. The racy-git rule: an entry is trusted only
if the file's mtime is strictly older than the cache file's own mtime (both
stamped by the same filesystem clock, as git compares with the index file's
mtime); a file modified within the same timestamp tick as the cache write
could have changed after it was hashed, so it is hashed again.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import blake3

from dcx.fsutil import atomic_write
from dcx.workspace import Workspace

SCHEMA = "dcx_stat_cache_v0"


def cache_path(ws: Workspace, source_id: str) -> Path:
    name = blake3.blake3(source_id.encode()).hexdigest()[:24]
    return ws.cache / f"stat-{name}.json"


class StatCache:
    """One source's cache. ``lookup`` → revision or None; ``store`` after hashing."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries: dict[str, list[Any]] = {}
        self.written_ns = 0
        self.dirty = False
        self._seen: set[str] = set()
        try:
            written_ns = path.stat().st_mtime_ns
            data = json.loads(path.read_bytes())
            if data.get("schema_version") == SCHEMA and isinstance(data.get("entries"), dict):
                self.entries = data["entries"]
                self.written_ns = written_ns
        except (OSError, ValueError, KeyError, TypeError):
            pass  # a cache is only a cache: start over

    def lookup(self, rel: str, st: os.stat_result) -> str | None:
        self._seen.add(rel)
        entry = self.entries.get(rel)
        if entry is None:
            return None
        size, mtime_ns, ino, ctime_ns, revision = entry
        if (size, mtime_ns, ino, ctime_ns) != (st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns):
            return None
        if st.st_mtime_ns >= self.written_ns:
            return None  # racily clean: may have changed within the same tick
        return revision

    def store(self, rel: str, st: os.stat_result, revision: str) -> None:
        self._seen.add(rel)
        self.entries[rel] = [st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns, revision]
        self.dirty = True

    def save(self, *, prune: bool = True) -> None:
        """Write the cache if anything changed (entries of files not seen are dropped)."""
        if prune and self._seen:
            gone = set(self.entries) - self._seen
            for rel in gone:
                del self.entries[rel]
            self.dirty = self.dirty or bool(gone)
        racy = any(e[1] >= self.written_ns for e in self.entries.values()) if self.entries else False
        if not self.dirty and not racy:
            return
        body = {"schema_version": SCHEMA, "entries": self.entries}
        atomic_write(self.path, json.dumps(body, separators=(",", ":")).encode(), mode=0o600)
        self.written_ns = self.path.stat().st_mtime_ns
        self.dirty = False
