"""The stat cache (SPEC §5.3): (size, mtime_ns, inode, ctime_ns) → revision.

Unchanged files are not re-read. The racy-git rule: an entry is trusted only
if the file's mtime is strictly older than the cache file's own mtime (both
stamped by the same filesystem clock, as git compares with the index file's
mtime); a file modified within the same timestamp tick as the cache write
could have changed after it was hashed, so it is hashed again.

Format (``dcx_stat_cache_v1``): a JSON header line, then columns — the paths
(UTF-8, NUL-separated: NUL is the one byte no file name holds), the stat
fields as signed 64-bit integers, the revisions as raw 32-byte digests, one
kind byte per file (``t`` text, ``b`` binary). Columns load in milliseconds
for 100k files, where a JSON object of 100k lists takes a fifth of a second;
the layout is parsed with bounds checks only, so a damaged file is just a
cold cache. The header also carries a small ``memo`` the walker uses to
remember the digest of the file list it last saw (valid only while nothing
in the cache changed).
"""

from __future__ import annotations

import json
import os
import sys
from array import array
from pathlib import Path
from typing import Any

import blake3

from dcx.fsutil import atomic_write
from dcx.workspace import Workspace

SCHEMA = "dcx_stat_cache_v1"
MAGIC = b"dcx-stat-cache\n"
KINDS = {b"t"[0]: "text", b"b"[0]: "binary"}
KIND_BYTES = {"text": b"t", "binary": b"b"}
_WRAP = 1 << 64
_SIGNED_MAX = 1 << 63


def cache_path(ws: Workspace, source_id: str) -> Path:
    name = blake3.blake3(source_id.encode()).hexdigest()[:24]
    return ws.cache / f"stat-{name}.bin"


def _ino(value: int) -> int:
    """Inodes are unsigned 64-bit; stored signed like the other fields."""
    return value - _WRAP if value >= _SIGNED_MAX else value


class StatCache:
    """One source's cache. ``lookup`` → (revision, kind) or None; ``store`` after hashing."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.written_ns = 0
        self.dirty = False
        self.memo: dict[str, Any] = {}
        self._index: dict[str, int] = {}
        self._stats = array("q")
        self._revs = b""
        self._kinds = b""
        self._fresh: dict[str, tuple[int, int, int, int, str, str]] = {}
        self._seen: set[str] = set()
        self._load()

    def _load(self) -> None:
        try:
            written_ns = self.path.stat().st_mtime_ns
            data = self.path.read_bytes()
        except OSError:
            return
        try:
            if not data.startswith(MAGIC):
                return
            end = data.index(b"\n", len(MAGIC))
            header = json.loads(data[len(MAGIC):end])
            if header.get("schema_version") != SCHEMA or header.get("byteorder") != sys.byteorder:
                return
            count, paths_len = int(header["count"]), int(header["paths_bytes"])
            at = end + 1
            paths = data[at:at + paths_len].decode("utf-8").split("\0") if count else []
            at += paths_len
            stats = array("q")
            stats.frombytes(data[at:at + 32 * count])
            at += 32 * count
            revs = data[at:at + 32 * count]
            at += 32 * count
            kinds = data[at:at + count]
            if len(paths) != count or len(stats) != 4 * count or len(revs) != 32 * count or len(kinds) != count:
                return
            if at + count != len(data):
                return
        except (ValueError, KeyError, TypeError, UnicodeDecodeError):
            return  # a cache is only a cache: start over
        self._index = {p: i for i, p in enumerate(paths)}
        self._stats, self._revs, self._kinds = stats, revs, kinds
        self.memo = dict(header.get("memo") or {})
        self.written_ns = written_ns

    def __len__(self) -> int:
        return len(self._index) + sum(1 for rel in self._fresh if rel not in self._index)

    def lookup(self, rel: str, st: os.stat_result) -> tuple[str, str] | None:
        self._seen.add(rel)
        i = self._index.get(rel)
        if i is None:
            return None
        s, j = self._stats, 4 * i
        if (
            s[j] != st.st_size
            or s[j + 1] != st.st_mtime_ns
            or s[j + 2] != _ino(st.st_ino)
            or s[j + 3] != st.st_ctime_ns
        ):
            return None
        if st.st_mtime_ns >= self.written_ns:
            return None  # racily clean: may have changed within the same tick
        return self._revs[32 * i:32 * i + 32].hex(), KINDS.get(self._kinds[i], "binary")

    def store(self, rel: str, st: os.stat_result, revision: str, kind: str = "text") -> None:
        self._seen.add(rel)
        self._fresh[rel] = (st.st_size, st.st_mtime_ns, _ino(st.st_ino), st.st_ctime_ns, revision, kind)
        self.dirty = True

    def entries(self) -> dict[str, tuple[int, int, int, int, str, str]]:
        """Every entry as (size, mtime_ns, inode, ctime_ns, revision, kind) (tests, tools)."""
        out = {}
        for rel, i in self._index.items():
            j = 4 * i
            out[rel] = (
                *self._stats[j:j + 4],
                self._revs[32 * i:32 * i + 32].hex(),
                KINDS.get(self._kinds[i], "binary"),
            )
        out.update(self._fresh)
        return out  # type: ignore[return-value]

    def save(self, *, prune: bool = True, memo: dict[str, Any] | None = None) -> None:
        """Write the cache if anything changed (entries of files not seen are dropped).

        ``memo`` replaces the header memo; it is written only when given or when
        the entries changed (then an old memo is dropped: it described them).
        """
        gone: set[str] = set()
        if prune:
            gone = set(self._index) - self._seen
        changed = self.dirty or bool(gone)
        if changed:
            self.memo = {}
        if memo is not None and memo != self.memo:
            self.memo = dict(memo)
            changed = True
        if not changed:
            return  # racily clean entries were re-hashed and stored, so they count as changes
        entries = self.entries()
        for rel in gone:
            entries.pop(rel, None)
        paths = sorted(entries)
        stats = array("q")
        revs = bytearray()
        kinds = bytearray()
        for rel in paths:
            size, mtime_ns, ino, ctime_ns, revision, kind = entries[rel]
            stats.extend((size, mtime_ns, ino, ctime_ns))
            revs += bytes.fromhex(revision)
            kinds += KIND_BYTES.get(kind, b"b")
        path_bytes = "\0".join(paths).encode("utf-8")
        header = {
            "schema_version": SCHEMA,
            "byteorder": sys.byteorder,
            "count": len(paths),
            "paths_bytes": len(path_bytes),
            "memo": self.memo,
        }
        body = b"".join(
            [MAGIC, json.dumps(header, separators=(",", ":")).encode(), b"\n", path_bytes,
             stats.tobytes(), bytes(revs), bytes(kinds)]
        )
        atomic_write(self.path, body, mode=0o600)
        self.written_ns = self.path.stat().st_mtime_ns
        self._index = {p: i for i, p in enumerate(paths)}
        self._stats, self._revs, self._kinds = stats, bytes(revs), bytes(kinds)
        self._fresh.clear()
        self.dirty = False
