"""The stat cache (SPEC §5.3): (size, mtime_ns, inode, ctime_ns) → revision.

Unchanged files are not re-read. The racy-git rule: an entry is trusted only
if the file's mtime is strictly older than the cache file's own mtime (both
stamped by the same filesystem clock, as git compares with the index file's
mtime); a file modified within the same timestamp tick as the cache write
could have changed after it was hashed, so it is hashed again.

Format (``dcx_stat_cache_v1``): a magic line, a JSON header line, then
columns — the paths sorted (UTF-8, NUL-separated: NUL is the one byte no file
name holds), the four stat fields as signed 64-bit integers, the revisions as
raw 32-byte digests, one kind byte per file (``t`` text, ``b`` binary).
Columns load in milliseconds for 100k files, where a JSON object of 100k
lists took a fifth of a second (the path → entry index is built only when a
miss asks for it: a clean sweep walks the sorted paths instead); the layout is parsed with bounds checks only,
so a damaged file is just a cold cache. The header also carries a small
``memo``: the walker keeps there the digest of the file list the entries
describe (dropped whenever an entry changes).

Glob matching depends only on a path and the locator's include/exclude
patterns, so its answers are kept too (v2): the header names the patterns
(``globs``, a digest) the entries were matched under, and a last column lists
the paths those patterns rejected (NUL-separated). Under the same patterns an
entry's path is known to match and a listed path known not to; other patterns
trust neither.
"""

from __future__ import annotations

import json
import os
import sys
from array import array
from bisect import bisect_left
from collections.abc import Callable, Collection, Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import blake3

from dcx.core.fsutil import atomic_write, read_bytes
from dcx.core.workspace import Workspace

SCHEMA = "dcx_stat_cache_v2"
MAGIC = b"dcx-stat-cache\n"
KINDS = {b"t"[0]: "text", b"b"[0]: "binary"}
KIND_BYTES = {"text": b"t", "binary": b"b"}
INO_WRAP = 1 << 64
INO_SIGNED_MAX = 1 << 63

StatKey = tuple[int, int, int, int]  # size, mtime_ns, inode (signed), ctime_ns


def cache_path(ws: Workspace, source_id: str) -> Path:
    name = blake3.blake3(source_id.encode()).hexdigest()[:24]
    return ws.cache / f"stat-{name}.bin"


def stat_key(st: os.stat_result) -> StatKey:
    ino = st.st_ino
    return (
        st.st_size,
        st.st_mtime_ns,
        ino - INO_WRAP if ino >= INO_SIGNED_MAX else ino,
        st.st_ctime_ns,
    )


class Known(NamedTuple):
    """What a sweep's hot loop reads of the stat cache (:meth:`StatCache.known`).

    ``matching``: every entry's path is known to pass the include/exclude
    patterns (there are none, or the entries were matched under the same
    ones), so a file whose stat equals its entry is a hit without asking them.
    """

    paths: list[str]  # sorted: entry i is paths[i]
    stats: array
    written_ns: int
    matching: bool


class StatCache:
    """One source's cache: loaded entries by index, plus entries stored this run."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.written_ns = 0
        self.dirty = False
        self.memo: dict[str, Any] = {}
        self.paths: list[str] = []  # sorted, as saved
        self._full_index: dict[str, int] | None = {}  # None: not built yet (see ``_index``)
        self._stats = array("q")
        self._revs = b""
        self._kinds = b""
        self._fresh: dict[str, tuple[StatKey, str, str]] = {}
        self.globs: str | None = None  # digest of the patterns the entries were matched under
        self._rejected: frozenset[str] = frozenset()  # paths those patterns rejected
        self._globs_dirty = False
        self._load()

    def _load(self) -> None:
        try:
            written_ns = self.path.stat().st_mtime_ns
            data = read_bytes(self.path)
        except OSError:
            return
        try:
            if not data.startswith(MAGIC):
                return
            end = data.index(b"\n", len(MAGIC))
            header = json.loads(data[len(MAGIC) : end])
            if header.get("schema_version") != SCHEMA or header.get("byteorder") != sys.byteorder:
                return
            count, paths_len = int(header["count"]), int(header["paths_bytes"])
            at = end + 1
            paths = data[at : at + paths_len].decode("utf-8").split("\0") if count else []
            at += paths_len
            stats = array("q")
            stats.frombytes(data[at : at + 32 * count])
            at += 32 * count
            revs = data[at : at + 32 * count]
            at += 32 * count
            kinds = data[at : at + count]
            if (
                len(paths) != count
                or len(stats) != 4 * count
                or len(revs) != 32 * count
                or len(kinds) != count
            ):
                return
            at += count
            rejected_len = int(header.get("rejected_bytes", 0))
            rejected = (
                data[at : at + rejected_len].decode("utf-8").split("\0") if rejected_len else []
            )
            if at + rejected_len != len(data):
                return
            globs = header.get("globs")
            if globs is not None and not isinstance(globs, str):
                return
        except (ValueError, KeyError, TypeError, UnicodeDecodeError):
            return  # a cache is only a cache: start over
        self.paths = paths
        self._full_index = None  # built on first use; a clean sweep never needs it
        self._stats, self._revs, self._kinds = stats, revs, kinds
        self.memo = dict(header.get("memo") or {})
        self.globs, self._rejected = globs, frozenset(rejected)
        self.written_ns = written_ns

    @property
    def _index(self) -> dict[str, int]:
        """Every loaded path → its index, built on first use: 100k paths take tens of
        milliseconds, and a sweep finds its hits by walking the sorted paths instead."""
        if self._full_index is None:
            self._full_index = dict(
                zip(self.paths, range(len(self.paths)), strict=True)
            )  # a third faster than a comprehension
        return self._full_index

    @property
    def loaded_count(self) -> int:
        return len(self.paths)

    def is_loaded(self, rel: str) -> bool:
        return rel in self._index

    def __len__(self) -> int:
        if not self._fresh:
            return len(self.paths)
        return len(self.paths) + sum(1 for rel in self._fresh if rel not in self._index)

    def prober(self) -> Callable[[str, os.stat_result], int]:
        """``probe(rel, stat)`` → the index of a trusted loaded entry, or -1 (hash the file).

        A closure over locals: it runs once per file in the walker's hot loop.
        """
        stats, written_ns = self._stats, self.written_ns

        def probe(rel: str, st: os.stat_result) -> int:
            i = self._index.get(rel)  # the index is built at the first file asked about
            if i is None:
                return -1
            j = 4 * i
            mtime_ns = st.st_mtime_ns
            if stats[j] != st.st_size or stats[j + 1] != mtime_ns or stats[j + 3] != st.st_ctime_ns:
                return -1
            ino = st.st_ino
            if stats[j + 2] != (ino - INO_WRAP if ino >= INO_SIGNED_MAX else ino):
                return -1
            if mtime_ns >= written_ns:
                return -1  # racily clean: may have changed within the same tick
            return i

        return probe

    def known(self, matching: bool) -> Known:
        """The loaded entries' columns for a sweep's inline hit check (see ``prober``)."""
        return Known(self.paths, self._stats, self.written_ns, matching)

    def lookup(self, rel: str, st: os.stat_result) -> tuple[str, str] | None:
        """(revision, kind) of a trusted entry for this stat, or None."""
        i = self.prober()(rel, st)
        return None if i < 0 else self.entry(i)[1::2]

    def entry(self, i: int) -> tuple[str, str, int, str]:
        """(path, revision, size, kind) of loaded entry ``i``."""
        return (
            self.paths[i],
            self._revs[32 * i : 32 * i + 32].hex(),
            self._stats[4 * i],
            KINDS.get(self._kinds[i], "binary"),
        )

    def hit_entries(self, hits: Iterable[int]) -> Iterator[tuple[str, str, int, str]]:
        """(path, revision, size, kind) of each loaded entry index in ``hits``, lazily.

        The columns are bound now, so the iterator stays valid after ``save``
        rewrites the cache (which replaces them, never mutates them).
        """
        paths, revs, stats, kinds = self.paths, self._revs, self._stats, self._kinds
        kind_of = KINDS.get
        return (
            (paths[i], revs[32 * i : 32 * i + 32].hex(), stats[4 * i], kind_of(kinds[i], "binary"))
            for i in hits
        )

    def count_under(self, prefix: str) -> int:
        """Loaded entries whose path starts with ``prefix`` (a directory ending in '/')."""
        upper = prefix[:-1] + chr(ord(prefix[-1]) + 1)
        return bisect_left(self.paths, upper) - bisect_left(self.paths, prefix)

    def glob_answers(self, globs: str) -> tuple[Collection[str], Collection[str]]:
        """(paths known to match, paths known not to) under the patterns ``globs`` names."""
        if globs != self.globs:
            return (), ()
        return _LoadedPaths(self), self._rejected

    def set_glob_answers(self, globs: str | None, rejected: Iterable[str]) -> None:
        """Remember which patterns the entries are matched under, and the paths they rejected."""
        rejected = frozenset(rejected)
        if (globs, rejected) != (self.globs, self._rejected):
            self.globs, self._rejected = globs, rejected
            self._globs_dirty = True

    def store(self, rel: str, key: StatKey, revision: str, kind: str = "text") -> None:
        self._fresh[rel] = (key, revision, kind)
        self.dirty = True

    def entries(self) -> dict[str, tuple[int, int, int, int, str, str]]:
        """Every entry as (size, mtime_ns, inode, ctime_ns, revision, kind) (tests, tools)."""
        out: dict[str, tuple[int, int, int, int, str, str]] = {}
        for rel, i in self._index.items():
            j = 4 * i
            size, mtime_ns, ino, ctime_ns = self._stats[j : j + 4]
            out[rel] = (
                size,
                mtime_ns,
                ino,
                ctime_ns,
                self._revs[32 * i : 32 * i + 32].hex(),
                KINDS.get(self._kinds[i], "binary"),
            )
        for rel, (key, revision, kind) in self._fresh.items():
            out[rel] = (*key, revision, kind)
        return out

    def save(
        self, *, seen: Collection[str] | None = None, memo: dict[str, Any] | None = None
    ) -> None:
        """Write the cache if anything changed; with ``seen``, entries of other paths are dropped.

        ``memo`` replaces the header memo; it is written only when given or when
        the entries changed (then an old memo is dropped: it described them).
        Racily clean entries were re-hashed and stored, so they count as changes.
        """
        gone = (self._index.keys() - seen) if seen is not None else set()
        changed = self.dirty or bool(gone)
        if changed:
            self.memo = {}
        if memo is not None and memo != self.memo:
            self.memo = dict(memo)
            changed = True
        if not changed and not self._globs_dirty:
            return
        if not gone and all(rel in self._index for rel in self._fresh):
            paths, stats, revs, kinds = self._patched()  # same paths: update in place, O(changes)
        else:
            paths, stats, revs, kinds = self._rebuilt(gone)
        path_bytes = "\0".join(paths).encode("utf-8")
        rejected_bytes = "\0".join(sorted(self._rejected)).encode("utf-8")
        header = {
            "schema_version": SCHEMA,
            "byteorder": sys.byteorder,
            "count": len(paths),
            "paths_bytes": len(path_bytes),
            "memo": self.memo,
            "globs": self.globs,
            "rejected_bytes": len(rejected_bytes),
        }
        body = b"".join(
            [
                MAGIC,
                json.dumps(header, separators=(",", ":")).encode(),
                b"\n",
                path_bytes,
                stats.tobytes(),
                revs,
                kinds,
                rejected_bytes,
            ]
        )
        atomic_write(self.path, body, mode=0o600)
        self.written_ns = self.path.stat().st_mtime_ns
        if paths is not self.paths:
            self.paths = paths
            self._full_index = None
        self._stats, self._revs, self._kinds = stats, revs, kinds
        self._fresh.clear()
        self.dirty = False
        self._globs_dirty = False

    def _patched(self) -> tuple[list[str], array, bytes, bytes]:
        stats = array("q", self._stats)
        revs = bytearray(self._revs)
        kinds = bytearray(self._kinds)
        for rel, (key, revision, kind) in self._fresh.items():
            i = self._index[rel]
            stats[4 * i : 4 * i + 4] = array("q", key)
            revs[32 * i : 32 * i + 32] = bytes.fromhex(revision)
            kinds[i] = KIND_BYTES.get(kind, b"b")[0]
        return self.paths, stats, bytes(revs), bytes(kinds)

    def _rebuilt(self, gone: Collection[str]) -> tuple[list[str], array, bytes, bytes]:
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
        return paths, stats, bytes(revs), bytes(kinds)


class _LoadedPaths(Collection[str]):
    """The loaded paths as a collection; membership builds the cache's index only when asked."""

    def __init__(self, cache: StatCache) -> None:
        self._cache = cache

    def __contains__(self, rel: object) -> bool:
        return isinstance(rel, str) and self._cache.is_loaded(rel)

    def __len__(self) -> int:
        return self._cache.loaded_count

    def __iter__(self) -> Iterator[str]:
        return iter(self._cache.paths)
