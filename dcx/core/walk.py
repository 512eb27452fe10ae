"""Walking a local-file locator and hashing what it holds (SPEC §5.3).

Shared by the ``local-file`` source adapter (scans) and the bm25 indexer, so
both see exactly the same files with the same revisions, and both reuse the
stat cache.

- A locator is one file, or a directory tree filtered by gitwildmatch
  ``include``/``exclude`` patterns (default: everything).
- The goal root's ``.decision-context/`` and ``.git/`` are always excluded, and
  so is a ``.decision-context/`` folder at any depth (a nested workspace's
  files are never authority); a locator inside one is refused
  (``locator_inside_workspace``).
- A relative locator may not escape the goal root through ``..`` or a
  symlink (``locator_outside_root``); an explicitly absolute one is allowed.
- Inside a tree, a symlink to a file outside the tree is never followed
  (counted as ``skipped_outside_locator``); symlinked directories are not
  descended (their targets, when inside the tree, are walked anyway), so a
  symlink loop cannot trap the walk.
- Revision of a file = blake3 hex of its bytes; its kind is ``text`` when the
  bytes decode as UTF-8, else ``binary`` (found while hashing, kept in the
  cache). Files over ``max_scan_bytes`` are skipped unhashed and counted;
  they, and files that could not be read, are listed in ``unhashed`` so a
  caller never mistakes them for deletions. File names that are not valid
  UTF-8 cannot be named in JSON and are skipped.
- Deadlines are cooperative; hashes made before a timeout stay in the cache.

Listing, stat-checking and hashing happen in ``dcx.core.sweep`` (plain
strings and directory file descriptors; forked workers on large trees); this
module resolves the locator, merges the sweeps, refreshes the stat cache and
answers with a lazily built file map.
"""

from __future__ import annotations

import codecs
import os
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

import blake3

from dcx.core.statcache import StatCache, cache_path
from dcx.core.sweep import HashDeadline, Sweep, sweep, sweep_tree
from dcx.core.trees import tree_digest
from dcx.core.workspace import DC_DIR, Workspace

ALWAYS_EXCLUDED = (DC_DIR, ".git")
HASH_CHUNK = 1 << 20


class LocatorError(Exception):
    """A locator that may not be walked; ``reason_code`` goes into the receipt."""

    def __init__(self, reason_code: str) -> None:
        super().__init__(reason_code)
        self.reason_code = reason_code


class WalkTimeout(Exception):
    """The cooperative deadline passed (``scan_timeout``)."""


class FileEntry(NamedTuple):
    path: str  # relative to the locator root, '/'-separated
    revision: str
    size: int
    kind: str = "text"  # text | binary


class FileMap(Mapping[str, FileEntry]):
    """The walked files: ``{rel: FileEntry}``, built on first use.

    A clean rescan of 100k files answers "same tree?" from the digest memo;
    making 100k ``FileEntry`` objects nobody reads would cost a quarter of
    it. So cache hits stay as indices into the cache's columns (captured
    before the cache is rewritten) until someone looks inside.
    """

    def __init__(
        self,
        hits: Iterator[tuple[str, str, int, str]] | None,
        count: int,
        extra: dict[str, FileEntry],
    ) -> None:
        self._pending = hits
        self._count = count
        self._dict = extra

    def _all(self) -> dict[str, FileEntry]:
        if self._pending is not None:
            merged = {values[0]: FileEntry._make(values) for values in self._pending}
            merged.update(self._dict)
            self._dict, self._pending = merged, None
        return self._dict

    def __getitem__(self, rel: str) -> FileEntry:
        return self._all()[rel]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return self._count if self._pending is not None else len(self._dict)

    def __contains__(self, rel: object) -> bool:
        return rel in self._all()

    # the dict's own views: the Mapping defaults would call __getitem__ per key
    def keys(self):
        return self._all().keys()

    def items(self):
        return self._all().items()

    def values(self):
        return self._all().values()

    def get(self, rel: str, default: Any = None) -> Any:
        return self._all().get(rel, default)


class WalkResult(NamedTuple):
    root: Path  # the resolved locator: a directory, or the one file
    is_file: bool
    files: Mapping[str, FileEntry]
    skipped_outside_locator: int
    skipped_oversize: int
    hashed: int  # files actually read this walk (not answered by the cache)
    unhashed: frozenset[str] = frozenset()  # present but not hashed: oversize or unreadable
    digest: str | None = None  # tree digest of ``files`` (when asked for)

    def abspath(self, rel: str) -> Path:
        return self.root if self.is_file else self.root / rel

    def revisions(self) -> dict[str, str]:
        return {rel: entry.revision for rel, entry in self.files.items()}


class Locator(NamedTuple):
    path: Path  # resolved
    is_file: bool
    include: tuple[str, ...]
    exclude: tuple[str, ...]


def resolve_locator(ws: Workspace, locator: dict[str, Any]) -> Locator:
    """Check a locator against the goal root; raise ``LocatorError`` with the reason code."""
    raw = Path(os.path.expanduser(locator["path"]))
    root = ws.root.resolve()
    if raw.is_absolute():
        target = Path(os.path.realpath(raw))
    else:
        target = Path(os.path.realpath(root / raw))
        if target != root and root not in target.parents:
            raise LocatorError("locator_outside_root")
    if DC_DIR in target.parts:  # this workspace's folder, or a nested one's: never authority
        raise LocatorError("locator_inside_workspace")
    if not target.exists():
        raise LocatorError("locator_missing")
    return Locator(
        path=target,
        is_file=target.is_file(),
        include=tuple(locator.get("include") or ()),
        exclude=tuple(locator.get("exclude") or ()),
    )


def hash_file(
    path: Path | str, *, limit: int | None = None, deadline: float | None = None
) -> tuple[str, int]:
    """blake3 hex of a file's bytes and the byte count (reads at most ``limit`` + 1 bytes)."""
    revision, total, _ = hash_and_kind(path, limit=limit, deadline=deadline)
    return revision, total


def hash_and_kind(
    path: Path | str, *, limit: int | None = None, deadline: float | None = None
) -> tuple[str, int, str]:
    """(blake3 hex, byte count, ``text``|``binary``) in one pass over the file.

    Most files fit one read: they take one ``open``, one ``read`` and the
    ASCII fast path, without a buffered reader or an incremental decoder.
    A large file checks ``deadline`` between chunks (``HashDeadline``): one
    2 GB file, or one that grows while it is read, must not outlive a scan's
    deadline. Past ``limit`` it stops; the count returned is then > ``limit``.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        first = os.read(fd, HASH_CHUNK)
        if len(first) < HASH_CHUNK:
            if limit is not None and len(first) > limit:
                return blake3.blake3(first[:limit]).hexdigest(), len(first), "binary"
            return blake3.blake3(first).hexdigest(), len(first), _kind(first)
        hasher = blake3.blake3()
        decoder = codecs.getincrementaldecoder("utf-8")()
        text = True
        total = 0
        chunk = first
        while chunk:
            total += len(chunk)
            if limit is not None and total > limit:
                break
            hasher.update(chunk)
            if text:
                try:
                    decoder.decode(chunk)
                except UnicodeDecodeError:
                    text = False
            if deadline is not None and time.monotonic() > deadline:
                raise HashDeadline()
            chunk = os.read(fd, HASH_CHUNK)
    finally:
        os.close(fd)
    if text:
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            text = False
    return hasher.hexdigest(), total, "text" if text else "binary"


def _kind(data: bytes) -> str:
    if data.isascii():
        return "text"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return "binary"
    return "text"


def revision_of(data: bytes) -> str:
    return blake3.blake3(data).hexdigest()


def glob_matcher(
    include: tuple[str, ...], exclude: tuple[str, ...]
) -> Callable[[str], bool] | None:
    """gitwildmatch include/exclude as one predicate; pathspec is imported and the patterns
    compiled on the first path that needs them (a warm rescan answers from the stat cache)."""
    if not include and not exclude:
        return None
    specs: list[Any] = []

    def match(rel: str) -> bool:
        if not specs:
            import pathspec

            specs.extend(
                pathspec.GitIgnoreSpec.from_lines(p) if p else None for p in (include, exclude)
            )
        inc, exc = specs
        if inc is not None and not inc.match_file(rel):
            return False
        return not (exc is not None and exc.match_file(rel))

    return match


def _globs_key(include: tuple[str, ...], exclude: tuple[str, ...]) -> str:
    import json

    return blake3.blake3(json.dumps([list(include), list(exclude)]).encode()).hexdigest()[:32]


def _remembered(match: Callable[[str], bool], known: Any, rejected: Any) -> Callable[[str], bool]:
    """``match`` answered from the stat cache where it already knows (the patterns did not change)."""
    if not known and not rejected:
        return match

    def remembered(rel: str) -> bool:
        if rel in known:
            return True
        if rel in rejected:
            return False
        return match(rel)

    return remembered


def walk(
    ws: Workspace,
    source_id: str,
    locator: dict[str, Any],
    *,
    max_scan_bytes: int,
    deadline: float | None = None,
    progress: Callable[..., None] | None = None,
    digest: bool = False,
    save_cache: bool = True,
) -> WalkResult:
    """Every file of a locator with its revision, using and refreshing the stat cache.

    ``deadline`` is a ``time.monotonic()`` value; past it, ``WalkTimeout`` is
    raised after saving the hashes made so far. ``progress`` (optional) is
    called with the number of files listed so far, and at the end with
    ``(listed, total)``, when the total is known. With ``digest``, the
    result carries the tree digest of its files, remembered in the cache so an
    unchanged tree is not re-serialised.
    """
    loc = resolve_locator(ws, locator)
    cache = StatCache(cache_path(ws, source_id))
    parts, globs = _sweep_locator(
        ws, loc, cache, max_scan_bytes=max_scan_bytes, deadline=deadline, progress=progress
    )
    hit_count = sum(len(part.hits) for part in parts)
    loaded = cache.loaded_count
    hits = cache.hit_entries(index for part in parts for index in part.hits)  # columns captured now
    hashed_files, exact = _keep_hashes(cache, parts)
    if any(part.timed_out for part in parts):
        if save_cache:
            cache.save()  # keep the hashes made so far; prune nothing
        raise WalkTimeout()
    if not loc.is_file:
        cache.set_glob_answers(globs, (rel for part in parts for rel in part.rejected))
    unhashed = {rel for part in parts for rel in part.oversized}
    unreadable = {rel for part in parts for rel in part.unreadable}
    files = FileMap(hits, hit_count + len(hashed_files), hashed_files)
    if progress is not None:
        listed = sum(part.done for part in parts)
        progress(listed, listed)  # (done, total): the total is known now
    exact = exact and not unreadable
    tree, memo = (None, None)
    if digest:
        tree, memo = _digest(cache, files, exact=exact, clean=hit_count == loaded)
    if save_cache:  # False for `prepare --show-content`, which writes nothing
        cache.save(seen=_seen(cache, files, hit_count, hashed_files, unreadable), memo=memo)
    return WalkResult(
        loc.path,
        loc.is_file,
        files,
        sum(part.outside for part in parts),
        len(unhashed),
        len(hashed_files),
        frozenset(unhashed | unreadable),
        tree,
    )


def _sweep_locator(
    ws: Workspace,
    loc: Locator,
    cache: StatCache,
    *,
    max_scan_bytes: int,
    deadline: float | None,
    progress: Callable[..., None] | None,
) -> tuple[list[Sweep], str | None]:
    """The sweeps of a locator's files, and the key of its globs (None without any)."""
    if loc.is_file:
        one = [(loc.path.name, str(loc.path), os.stat(loc.path))]
        found = sweep(
            one,
            match=None,
            max_scan_bytes=max_scan_bytes,
            probe=cache.prober(),
            hasher=hash_and_kind,
            deadline=deadline,
        )
        return [found], None
    root = str(ws.root.resolve())
    excluded = frozenset(os.path.join(root, name) for name in ALWAYS_EXCLUDED)
    match = glob_matcher(loc.include, loc.exclude)
    globs = _globs_key(loc.include, loc.exclude) if match is not None else None
    matching = match is None or (globs is not None and globs == cache.globs)
    if match is not None and globs is not None:
        match = _remembered(match, *cache.glob_answers(globs))
    parts = sweep_tree(
        str(loc.path),
        excluded,
        cache,
        match=match,
        matching=matching,
        max_scan_bytes=max_scan_bytes,
        hasher=hash_and_kind,
        deadline=deadline,
        progress=progress,
    )
    return parts, globs


def _keep_hashes(cache: StatCache, parts: list[Sweep]) -> tuple[dict[str, FileEntry], bool]:
    """The files hashed now, stored in the cache when they did not change while being read;
    and whether none did (the cache then lists exactly the walked files)."""
    hashed_files: dict[str, FileEntry] = {}
    exact = True
    for part in parts:
        for rel, key, revision, kind, read in part.hashed:
            if read == key[0]:
                cache.store(rel, key, revision, kind)
            else:
                exact = False  # changing under us: report what was read, cache nothing
            hashed_files[rel] = FileEntry(rel, revision, key[0], kind)
    return hashed_files, exact


def _seen(
    cache: StatCache,
    files: FileMap,
    hit_count: int,
    hashed_files: dict[str, FileEntry],
    unreadable: set[str],
) -> set[str] | None:
    """The paths the cache keeps: None when every loaded entry was seen (a hit, re-hashed or
    unreadable), so nothing is dropped and no path list is needed."""
    seen_loaded = (
        hit_count
        + sum(1 for rel in hashed_files if cache.is_loaded(rel))
        + sum(1 for rel in unreadable if cache.is_loaded(rel))
    )
    return None if seen_loaded == cache.loaded_count else set(files) | unreadable


def _digest(
    cache: StatCache, files: FileMap, *, exact: bool, clean: bool
) -> tuple[str, dict[str, str] | None]:
    """The tree digest of ``files`` (remembered by the cache of an unchanged tree), and the
    memo to save with the cache (only for a tree read exactly)."""
    tree = cache.memo.get("digest") if exact and clean and not cache.dirty else None
    if tree is not None:
        return tree, None
    tree = tree_digest({rel: e.revision for rel, e in files.items()})
    return tree, {"digest": tree} if exact else None
