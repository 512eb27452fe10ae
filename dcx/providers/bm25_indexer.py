"""Building and updating the bm25 index (``dcx index``), incrementally.

The sources indexed are the enabled ones whose ``exact_read_policy`` is not
``never`` and whose binding is a built-in adapter (``local-file`` or
``git``). Their files come from the caller: a ``Lister`` answers each
source's current files and revisions (``dcx.sources.files.listing``: a
local-file source walked with the stat cache, a git source listed at its
ref's current commit) and reads the ones asked for. Only files whose
revision differs from the indexed one are read, chunked and re-inserted. Files gone from a source, and sources gone from the
indexable set, are deleted. Files over ``max_read_bytes`` and files that are
not UTF-8 are recorded (so they are not re-read next time) but not indexed.

One run is one transaction: a reader sees the index before or after, never
half of it. A first build and ``--rebuild`` write a temp file that replaces
the index only when complete, so a crash leaves the previous index (or none).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from dcx.core.errors import LockBusy, Refused
from dcx.core.fsutil import create_file, ensure_dir, file_lock, fsync_dir
from dcx.core.workspace import Workspace
from dcx.providers.bm25_bounds import BoundsBuilder
from dcx.providers.bm25_index import (
    INDEX_NAME,
    IndexUnavailable,
    check_schema,
    classify,
    create_schema,
    index_path,
    is_legacy,
)
from dcx.providers.chunking import chunk_text
from dcx.state.profile import Registry, Source

Progress = Callable[[str, int], None]  # (source_id, files done so far)


class SourceReport(NamedTuple):
    source_id: str
    status: str  # indexed | skipped | unavailable
    reason_code: str | None
    files: int = 0
    files_hashed: int = (
        0  # read by the walk to learn their revision (the stat cache answered the rest)
    )
    files_indexed: int = 0  # read and (re)chunked this run
    files_removed: int = 0
    chunks: int = 0
    skipped_binary: int = 0
    skipped_oversize: int = 0
    skipped: tuple[
        tuple[str, str], ...
    ] = ()  # (path, binary|oversize) of files not searchable, first SKIPPED_SHOWN

    def public(self) -> dict[str, Any]:
        out = self._asdict()
        out["skipped"] = [{"path": path, "why": why} for path, why in self.skipped]
        return out


SKIPPED_SHOWN = 50


class IndexReport(NamedTuple):
    created: bool  # a new index file was written (first build or --rebuild)
    chunk_count: int
    sources: tuple[SourceReport, ...]


def indexable(registry: Registry, source: Source) -> str | None:
    """None if ``source`` is indexed, else why not (a reason code)."""
    if not source.enabled:
        return "source_disabled"
    if source.exact_read_policy == "never":
        return "exact_read_disabled"
    if not registry.binding(source.provider_id).builtin:
        return "adapter_not_indexable"
    return None


class _Writer:
    """One transaction over an open index."""

    def __init__(self, conn: sqlite3.Connection, *, fresh: bool) -> None:
        self.conn = conn
        self.fresh = fresh
        self.bounds = BoundsBuilder()
        row = conn.execute("SELECT COALESCE(MAX(rowid), 0) FROM chunk_files").fetchone()
        self.next_rowid = int(row[0]) + 1

    def sid(self, source_id: str) -> int:
        self.conn.execute("INSERT OR IGNORE INTO sources (source_id) VALUES (?)", (source_id,))
        return int(
            self.conn.execute(
                "SELECT sid FROM sources WHERE source_id = ?", (source_id,)
            ).fetchone()[0]
        )

    def files(self, sid: int) -> dict[str, tuple[int, str, int]]:
        rows = self.conn.execute(
            "SELECT path, fid, revision, chunk_count FROM files WHERE sid = ?", (sid,)
        )
        return {path: (fid, revision, count) for path, fid, revision, count in rows}

    def drop_file(self, fid: int) -> None:
        (sid,) = self.conn.execute("SELECT sid FROM files WHERE fid = ?", (fid,)).fetchone()
        self.bounds.remove(
            self.conn.execute(
                "SELECT rowid, body FROM chunks WHERE rowid IN (SELECT rowid FROM chunk_files WHERE fid = ?)",
                (fid,),
            ),
            sid,
        )
        self.conn.execute(
            "DELETE FROM chunks WHERE rowid IN (SELECT rowid FROM chunk_files WHERE fid = ?)",
            (fid,),
        )
        self.conn.execute("DELETE FROM chunk_files WHERE fid = ?", (fid,))
        self.conn.execute("DELETE FROM files WHERE fid = ?", (fid,))

    def drop_source(self, sid: int) -> int:
        fids = [fid for (fid,) in self.conn.execute("SELECT fid FROM files WHERE sid = ?", (sid,))]
        for fid in fids:
            self.drop_file(fid)
        self.conn.execute("DELETE FROM sources WHERE sid = ?", (sid,))
        return len(fids)

    def put_file(self, sid: int, path: str, revision: str, kind: str, chunks: list[str]) -> None:
        cur = self.conn.execute(
            "INSERT INTO files (sid, path, revision, kind, chunk_count) VALUES (?, ?, ?, ?, ?)",
            (sid, path, revision, kind, len(chunks)),
        )
        fid = cur.lastrowid
        rowids = range(self.next_rowid, self.next_rowid + len(chunks))
        self.next_rowid += len(chunks)
        self.conn.executemany(
            "INSERT INTO chunks (rowid, body, sid) VALUES (?, ?, ?)",
            [(r, c, sid) for r, c in zip(rowids, chunks, strict=True)],
        )
        self.conn.executemany(
            "INSERT INTO chunk_files (rowid, fid, ordinal, dl) VALUES (?, ?, ?, ?)",
            [
                (r, fid, ordinal, self.bounds.add(r, c, sid) or 0)
                for ordinal, (r, c) in enumerate(zip(rowids, chunks, strict=True))
            ],
        )

    def finish_bounds(self) -> int:
        """Count the deferred chunks' tokens, store the run's bounds; return the total token count."""
        lengths = self.bounds.resolve_deferred(self.conn)
        self.conn.executemany(
            "UPDATE chunk_files SET dl = ? WHERE rowid = ?", [(n, r) for r, n in lengths.items()]
        )
        count, tokens = self.conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(dl), 0) FROM chunk_files"
        ).fetchone()
        self.bounds.store(self.conn, tokens / count if count else 0.0)
        self.bounds.postings.store(self.conn, fresh=self.fresh)
        return int(tokens)


class Listing(Protocol):
    """One source's files as its plane lists them (``dcx.sources.files.Listing``), handed in."""

    revisions: Mapping[str, str]
    read: Callable[[list[str]], Mapping[str, Any] | str]
    hashed: int
    skipped_oversize: int
    lists_skipped: bool
    unavailable: str | None


# (source, progress of that source) -> its listing; the caller knows the planes
Lister = Callable[[Source, Callable[[int], None] | None], Listing]


def _index_source(writer: _Writer, source: Source, listing: Listing) -> SourceReport:
    sid = writer.sid(source.source_id)
    indexed = writer.files(sid)
    if listing.unavailable is not None:
        removed = writer.drop_source(sid)
        return SourceReport(
            source.source_id, "unavailable", listing.unavailable, files_removed=removed
        )
    changed = [
        rel
        for rel in sorted(listing.revisions)
        if (old := indexed.get(rel)) is None or old[1] != listing.revisions[rel]
    ]
    bodies = listing.read(changed) if changed else {}
    if isinstance(bodies, str):
        removed = writer.drop_source(sid)
        return SourceReport(source.source_id, "unavailable", bodies, files_removed=removed)
    stats = {
        "files_hashed": listing.hashed,
        "files_indexed": 0,
        "files_removed": 0,
        "skipped_binary": 0,
        "skipped_oversize": listing.skipped_oversize,
    }
    for rel in changed:
        body = bodies.get(rel)
        if body is None:
            continue  # unreadable now: indexed when it reads
        old = indexed.get(rel)
        if old is not None:
            writer.drop_file(old[0])
        if body.data is None:
            writer.put_file(sid, rel, body.revision, "oversize", [])
            stats["skipped_oversize"] += 1
            continue
        try:
            text = body.data.decode("utf-8")
        except UnicodeDecodeError:
            writer.put_file(sid, rel, body.revision, "binary", [])
            stats["skipped_binary"] += 1
            continue
        writer.put_file(sid, rel, body.revision, "text", chunk_text(text))
        stats["files_indexed"] += 1
    gone = [fid for rel, (fid, _, _) in indexed.items() if rel not in listing.revisions]
    for fid in gone:
        writer.drop_file(fid)
    stats["files_removed"] = len(gone)
    chunks = writer.conn.execute(
        "SELECT COALESCE(SUM(chunk_count), 0), COUNT(*) FROM files WHERE sid = ?", (sid,)
    ).fetchone()
    skipped: tuple[tuple[str, str], ...] = ()
    if listing.lists_skipped:
        skipped = tuple(
            (str(path), str(kind))
            for path, kind in writer.conn.execute(
                "SELECT path, kind FROM files WHERE sid = ? AND kind != 'text' ORDER BY path LIMIT ?",
                (sid, SKIPPED_SHOWN),
            )
        )
    return SourceReport(
        source.source_id,
        "indexed",
        None,
        files=int(chunks[1]),
        chunks=int(chunks[0]),
        skipped=skipped,
        **stats,
    )


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, timeout=30)
    conn.execute("PRAGMA cache_size = -65536")
    return conn


def update_index(
    ws: Workspace,
    registry: Registry,
    list_files: Lister,
    *,
    now: str,
    rebuild: bool = False,
    wait: float = 5.0,
    progress: Progress | None = None,
) -> IndexReport:
    """Bring the index up to date with the registry's indexable sources (see module doc)."""
    ensure_dir(ws.index)
    target = index_path(ws.index)
    with file_lock(target, wait=wait, display=ws.rel(target)):
        for stale in ws.index.glob(
            f".{INDEX_NAME}.*.tmp*"
        ):  # a build killed mid-way; we hold the lock
            stale.unlink(missing_ok=True)
        # an index of an earlier format is rebuilt whole (it lacks what this one keeps)
        fresh = rebuild or not target.exists() or is_legacy(target)
        path = ws.index / f".{INDEX_NAME}.{os.urandom(6).hex()}.tmp" if fresh else target
        conn: sqlite3.Connection | None = None
        try:
            create_file(
                path, 0o600
            )  # before sqlite creates it with its own mode (and its journal with it)
            conn = _connect(path)
            if fresh:
                conn.execute("PRAGMA journal_mode = OFF")  # a temp file: a crash discards it whole
                create_schema(conn)
            else:
                conn.execute(
                    "PRAGMA journal_mode = DELETE"
                )  # never WAL: readers must create no files
                check_schema(conn)
            reports = _apply(registry, list_files, conn, now=now, fresh=fresh, progress=progress)
            count = int(
                conn.execute("SELECT value FROM meta WHERE key = 'chunk_count'").fetchone()[0]
            )
        except (IndexUnavailable, sqlite3.DatabaseError) as exc:
            if conn is not None:
                conn.close()
            if fresh:
                _discard(path)
            reason = exc.reason_code if isinstance(exc, IndexUnavailable) else classify(exc)
            if reason == "index_busy":  # another process (not dcx: we hold our lock) writes it
                raise LockBusy(
                    f"{ws.rel(target)} is busy", hint="retry when the other writer is done"
                ) from None
            raise Refused(
                f"{ws.rel(target)} is corrupt or not a dcx bm25 index",
                code="index_corrupt",
                hint="rebuild it with `dcx index --rebuild`",
            ) from None
        except BaseException:
            if conn is not None:
                conn.close()
            if fresh:
                _discard(path)
            raise
        conn.close()
        if fresh:
            os.chmod(path, 0o600)
            with open(path, "rb") as handle:
                os.fsync(handle.fileno())
            # a hot journal left by a crashed writer belongs to the old file: it must
            # never be replayed into the new one
            with contextlib.suppress(FileNotFoundError):
                (ws.index / f"{INDEX_NAME}-journal").unlink()
            os.replace(path, target)
            fsync_dir(ws.index)
    return IndexReport(fresh, count, reports)


def _discard(path: Path) -> None:
    for leftover in (path, path.with_name(path.name + "-journal")):
        with contextlib.suppress(FileNotFoundError):
            leftover.unlink()


def _apply(
    registry: Registry,
    list_files: Lister,
    conn: sqlite3.Connection,
    *,
    now: str,
    fresh: bool,
    progress: Progress | None,
) -> tuple[SourceReport, ...]:
    conn.execute("BEGIN IMMEDIATE")
    try:
        writer = _Writer(conn, fresh=fresh)
        reports: list[SourceReport] = []
        wanted: set[str] = set()
        for source in sorted(registry.sources, key=lambda s: s.source_id):
            why_not = indexable(registry, source)
            if why_not is not None:
                reports.append(SourceReport(source.source_id, "skipped", why_not))
                continue
            tick = (lambda done, sid=source.source_id: progress(sid, done)) if progress else None
            report = _index_source(writer, source, list_files(source, tick))
            if report.status == "indexed":
                wanted.add(source.source_id)
            reports.append(report)
        stale = [
            (sid, sid_name)
            for sid, sid_name in conn.execute("SELECT sid, source_id FROM sources")
            if sid_name not in wanted
        ]
        for sid, _ in stale:
            writer.drop_source(sid)
        total = int(conn.execute("SELECT COUNT(*) FROM chunk_files").fetchone()[0])
        tokens = writer.finish_bounds()
        changed = sum(r.files_indexed + r.files_removed for r in reports)
        conn.executemany(
            "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
            [("chunk_count", str(total)), ("total_tokens", str(tokens)), ("updated_at", now)],
        )
        files = int(conn.execute("SELECT COUNT(*) FROM files").fetchone()[0])
        if fresh or changed * 10 > files:  # a large change: merge segments again
            conn.execute(
                "INSERT INTO chunks (chunks) VALUES ('optimize')"
            )  # one segment: faster queries
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return tuple(reports)
