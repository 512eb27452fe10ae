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

One run is one tantivy commit: a reader sees the index before or after, never
half of it. A changed file's chunks are deleted by its ``file`` term and added
again (SPEC §6.3 v4: incremental by file revision). A first build,
``--rebuild``, an index of an earlier format and an index whose list of files
is out of step with its commit (a crash between the two) are built whole in a
new directory that the record names only when it is complete, so a crash
leaves the previous index (or none). The FTS5 index of an earlier dcx is
removed by the run that replaces it (``IndexReport.replaced_legacy``).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from dcx.core.errors import Refused
from dcx.core.fsutil import atomic_write, ensure_dir, file_lock, fsync_dir
from dcx.core.workspace import Workspace
from dcx.providers.bm25_index import (
    ANALYZER,
    DIR_RE,
    FILES_NAME,
    LEGACY_NAMES,
    LEGACY_TMP,
    LOCK_NAME,
    IndexUnavailable,
    Record,
    file_key,
    index_path,
    read_files,
    read_record,
    schema,
    text_analyzer,
    tokenizer_name,
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
    created: bool  # a new index was built whole (first build, --rebuild, a format change)
    chunk_count: int
    sources: tuple[SourceReport, ...]
    replaced_legacy: bool = False  # this run removed the FTS5 index of an earlier dcx


Files = dict[str, list[Any]]  # path -> [revision, kind, chunk count]
# one writer thread keeps the documents in the order they are added (a first build:
# source id, path, chunk ordinal), which is the order of equal scores
_WRITER_THREADS = 1
_WRITER_HEAP = 200_000_000


class _Writer:
    """One tantivy commit over the index's directory, and its list of files."""

    def __init__(self, directory: Path, *, fresh: bool, files: dict[str, Files]) -> None:
        import tantivy

        self.directory = directory
        self.fresh = fresh
        self.files = files
        if fresh:
            ensure_dir(directory)
            self.index = tantivy.Index(schema(), path=str(directory), reuse=False)
        else:
            self.index = tantivy.Index.open(str(directory))
        self.index.register_tokenizer(tokenizer_name(ANALYZER), text_analyzer(ANALYZER))
        self.writer = self.index.writer(heap_size=_WRITER_HEAP, num_threads=_WRITER_THREADS)
        self.tantivy = tantivy

    def drop_file(self, source_id: str, path: str) -> None:
        old = self.files.get(source_id, {}).pop(path, None)
        if old is not None and old[2]:
            self.writer.delete_documents_by_term("file", file_key(source_id, path))

    def drop_source(self, source_id: str) -> int:
        gone = self.files.pop(source_id, {})
        if any(row[2] for row in gone.values()):
            self.writer.delete_documents_by_term("source", source_id)
        return len(gone)

    def put_file(
        self, source_id: str, path: str, revision: str, kind: str, chunks: list[str]
    ) -> None:
        key = file_key(source_id, path)
        document, add = self.tantivy.Document, self.writer.add_document
        for ordinal, text in enumerate(chunks):
            add(
                document(
                    text=text,
                    source=source_id,
                    file=key,
                    path=path,
                    revision=revision,
                    ordinal=ordinal,  # an int: the integer field's i64
                )
            )
        self.files.setdefault(source_id, {})[path] = [revision, kind, len(chunks)]

    def commit(self) -> int:
        opstamp = int(self.writer.commit())
        self.writer.wait_merging_threads()  # merges finish (and free deleted rows) before we exit
        for path in self.directory.iterdir():  # tantivy creates its files with the umask's mode
            if path.is_file() and path.stat().st_mode & 0o077:
                os.chmod(path, 0o600)
        return opstamp

    def rollback(self) -> None:
        with contextlib.suppress(Exception):
            self.writer.rollback()


def indexable(registry: Registry, source: Source) -> str | None:
    """None if ``source`` is indexed, else why not (a reason code)."""
    if not source.enabled:
        return "source_disabled"
    if source.exact_read_policy == "never":
        return "exact_read_disabled"
    if not registry.binding(source.provider_id).builtin:
        return "adapter_not_indexable"
    return None


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
    sid = source.source_id
    indexed = dict(writer.files.get(sid, {}))
    if listing.unavailable is not None:
        removed = writer.drop_source(sid)
        return SourceReport(sid, "unavailable", listing.unavailable, files_removed=removed)
    changed = [
        rel
        for rel in sorted(listing.revisions)
        if (old := indexed.get(rel)) is None or old[0] != listing.revisions[rel]
    ]
    bodies = listing.read(changed) if changed else {}
    if isinstance(bodies, str):
        removed = writer.drop_source(sid)
        return SourceReport(sid, "unavailable", bodies, files_removed=removed)
    writer.files.setdefault(sid, {})
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
        writer.drop_file(sid, rel)
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
    gone = [rel for rel in indexed if rel not in listing.revisions]
    for rel in gone:
        writer.drop_file(sid, rel)
    stats["files_removed"] = len(gone)
    files = writer.files[sid]
    skipped: tuple[tuple[str, str], ...] = ()
    if listing.lists_skipped:
        skipped = tuple(
            (path, str(row[1])) for path, row in sorted(files.items()) if row[1] != "text"
        )[:SKIPPED_SHOWN]
    return SourceReport(
        sid,
        "indexed",
        None,
        files=len(files),
        chunks=sum(int(row[2]) for row in files.values()),
        skipped=skipped,
        **stats,
    )


def _corrupt(ws: Workspace) -> Refused:
    return Refused(
        f"{ws.rel(index_path(ws.index))} is corrupt or not a dcx bm25 index",
        code="index_corrupt",
        hint="rebuild it with `dcx index --rebuild`",
    )


def _remove_legacy(index_dir: Path) -> bool:
    """Remove the FTS5 index of an earlier dcx (we hold the lock); True if there was one."""
    found = (index_dir / LEGACY_NAMES[0]).exists()
    for name in LEGACY_NAMES:
        with contextlib.suppress(FileNotFoundError):
            (index_dir / name).unlink()
    for stale in index_dir.glob(LEGACY_TMP):
        stale.unlink(missing_ok=True)
    return found


def _remove_orphans(index_dir: Path, keep: str | None) -> None:
    """Directories of builds that never became the index (killed mid-way; we hold the lock)."""
    for path in index_dir.iterdir():
        if path.is_dir() and DIR_RE.fullmatch(path.name) and path.name != keep:
            shutil.rmtree(path, ignore_errors=True)


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
    record_path = index_path(ws.index)
    with file_lock(ws.index / LOCK_NAME, wait=wait, display=ws.rel(ws.index / LOCK_NAME)):
        legacy = _remove_legacy(ws.index)
        try:
            record = read_record(ws.index)
        except IndexUnavailable:
            if not rebuild:
                raise _corrupt(ws) from None
            record = None
        _remove_orphans(ws.index, record.directory if record else None)
        writer = None
        if record is not None and not rebuild and record.analyzer == ANALYZER:
            writer = _reopen(ws, record)
        fresh = writer is None
        if writer is None:
            name = f"bm25-{os.urandom(6).hex()}"
            writer = _Writer(ws.index / name, fresh=True, files={})
        try:
            reports = _apply(registry, list_files, writer, progress=progress)
            opstamp = writer.commit()
        except BaseException:
            writer.rollback()
            if fresh:
                shutil.rmtree(writer.directory, ignore_errors=True)
            raise
        count = sum(int(row[2]) for files in writer.files.values() for row in files.values())
        files_body = {"opstamp": opstamp, "sources": writer.files}
        atomic_write(
            writer.directory / FILES_NAME,
            json.dumps(files_body, sort_keys=True, separators=(",", ":")).encode(),
            mode=0o600,
        )
        indexed = tuple(sorted(r.source_id for r in reports if r.status == "indexed"))
        new = Record(ANALYZER, writer.directory.name, opstamp, count, now, indexed)
        atomic_write(
            record_path, (json.dumps(new.body(), sort_keys=True) + "\n").encode(), mode=0o600
        )
        fsync_dir(ws.index)
        if fresh and record is not None and record.directory != new.directory:
            shutil.rmtree(ws.index / record.directory, ignore_errors=True)
    return IndexReport(fresh, count, reports, replaced_legacy=legacy)


def _reopen(ws: Workspace, record: Record) -> _Writer | None:
    """A writer on the current index, or None when it must be built whole again: its list of
    files is missing or out of step with its commit (a crash between the two writes)."""
    directory = ws.index / record.directory
    listed = read_files(directory)
    if listed is None or listed[0] != record.opstamp:
        return None
    try:
        writer = _Writer(directory, fresh=False, files=listed[1])
    except Exception:  # tantivy cannot open it: damaged
        raise _corrupt(ws) from None
    if int(writer.writer.commit_opstamp) != record.opstamp:
        writer.rollback()
        del writer
        return None
    return writer


def _apply(
    registry: Registry,
    list_files: Lister,
    writer: _Writer,
    *,
    progress: Progress | None,
) -> tuple[SourceReport, ...]:
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
    for stale in [sid for sid in writer.files if sid not in wanted]:
        writer.drop_source(stale)
    return tuple(reports)


def indexed_paths(ws: Workspace) -> list[tuple[str, str]]:
    """Every (source_id, path) the bm25 index holds, sorted: the paths that are this
    workspace's private values (SPEC §3.4). Empty when there is no readable index."""
    try:
        record = read_record(ws.index)
    except IndexUnavailable:
        return []
    if record is None:
        return []
    listed = read_files(ws.index / record.directory)
    if listed is None:
        return []
    return sorted((sid, path) for sid, files in listed[1].items() for path in files)
