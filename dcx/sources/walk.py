"""Walking a local-file locator and hashing what it holds (SPEC §5.3).

Shared by the ``local-file`` source adapter (scans) and the bm25 indexer, so
both see exactly the same files with the same revisions, and both reuse the
stat cache.

- A locator is one file, or a directory tree filtered by gitwildmatch
  ``include``/``exclude`` patterns (default: everything).
- The goal root's ``.decision-context/`` and ``.git/`` are always excluded; a
  locator inside ``.decision-context/`` is refused (``locator_inside_workspace``).
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

The walk uses plain strings and directory file descriptors (``fstatat`` of one
name, not a full path lookup per file): on 100k files ``pathlib`` alone cost
more than the system calls.
"""

from __future__ import annotations

import codecs
import os
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import blake3

from dcx.sources.statcache import StatCache, cache_path
from dcx.sources.trees import tree_digest
from dcx.workspace import DC_DIR, Workspace

ALWAYS_EXCLUDED = (DC_DIR, ".git")
HASH_CHUNK = 1 << 20
DEADLINE_EVERY = 64  # files between two cooperative deadline checks
PROGRESS_EVERY = 256  # files between two progress callbacks


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


class WalkResult(NamedTuple):
    root: Path  # the resolved locator: a directory, or the one file
    is_file: bool
    files: dict[str, FileEntry]
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
    dc = (root / DC_DIR).resolve()
    if target == dc or dc in target.parents:
        raise LocatorError("locator_inside_workspace")
    if not target.exists():
        raise LocatorError("locator_missing")
    return Locator(
        path=target,
        is_file=target.is_file(),
        include=tuple(locator.get("include") or ()),
        exclude=tuple(locator.get("exclude") or ()),
    )


def hash_file(path: Path | str, *, limit: int | None = None) -> tuple[str, int]:
    """blake3 hex of a file's bytes and the byte count (reads at most ``limit`` + 1 bytes)."""
    revision, total, _ = hash_and_kind(path, limit=limit)
    return revision, total


def hash_and_kind(path: Path | str, *, limit: int | None = None) -> tuple[str, int, str]:
    """(blake3 hex, byte count, ``text``|``binary``) in one pass over the file.

    Most files fit one read: they take one ``open``, one ``read`` and the
    ASCII fast path, without a buffered reader or an incremental decoder.
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


def _matcher(include: tuple[str, ...], exclude: tuple[str, ...]) -> Callable[[str], bool] | None:
    if not include and not exclude:
        return None
    import pathspec

    inc = pathspec.GitIgnoreSpec.from_lines(include) if include else None
    exc = pathspec.GitIgnoreSpec.from_lines(exclude) if exclude else None

    def match(rel: str) -> bool:
        if inc is not None and not inc.match_file(rel):
            return False
        return not (exc is not None and exc.match_file(rel))

    return match


def _utf8(name: str) -> bool:
    if name.isascii():
        return True
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _iter_tree(top: str, excluded: frozenset[str]) -> Iterator[tuple[str, str, os.stat_result | None]]:
    """(rel, abspath, stat) per regular file under ``top``; stat None = a link leaving the tree."""
    stack = [(top, "")]
    inside = top.rstrip(os.sep) + os.sep
    while stack:
        directory, prefix = stack.pop()
        try:
            fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        except OSError:
            continue
        try:
            with os.scandir(fd) as entries:
                for entry in entries:
                    name = entry.name
                    path = f"{directory}{os.sep}{name}" if directory != os.sep else os.sep + name
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            if path not in excluded and _utf8(name):
                                stack.append((path, f"{prefix}{name}/"))
                        elif entry.is_file(follow_symlinks=False):
                            if _utf8(name):
                                yield prefix + name, path, entry.stat(follow_symlinks=False)
                        elif entry.is_symlink():
                            real = os.path.realpath(path)
                            if not (real == top or real.startswith(inside)):
                                yield prefix + name, path, None
                                continue
                            st = os.stat(path)
                            if stat.S_ISREG(st.st_mode) and _utf8(name):
                                yield prefix + name, path, st
                            # a directory symlink inside the tree: its target is walked anyway
                    except OSError:
                        continue  # dangling or looping link, or vanished meanwhile
        finally:
            os.close(fd)


def walk(
    ws: Workspace,
    source_id: str,
    locator: dict[str, Any],
    *,
    max_scan_bytes: int,
    deadline: float | None = None,
    progress: Callable[[int], None] | None = None,
    digest: bool = False,
) -> WalkResult:
    """Every file of a locator with its revision, using and refreshing the stat cache.

    ``deadline`` is a ``time.monotonic()`` value; past it, ``WalkTimeout`` is
    raised after saving the hashes made so far. ``progress`` (optional) is
    called with the number of files done so far. With ``digest``, the result
    carries the tree digest of its files, remembered in the cache so an
    unchanged tree is not re-serialised.
    """
    loc = resolve_locator(ws, locator)
    cache = StatCache(cache_path(ws, source_id))
    files: dict[str, FileEntry] = {}
    unhashed: set[str] = set()
    outside = oversize = hashed = 0
    exact = True  # every file is a cache hit or a stored entry: the cache lists exactly ``files``
    if loc.is_file:
        candidates: Iterator[tuple[str, str, os.stat_result | None]] = iter(
            [(loc.path.name, str(loc.path), os.stat(loc.path))]
        )
        match = None
    else:
        root = str(ws.root.resolve())
        excluded = frozenset(os.path.join(root, name) for name in ALWAYS_EXCLUDED)
        candidates = _iter_tree(str(loc.path), excluded)
        match = _matcher(loc.include, loc.exclude)
    lookup, store = cache.lookup, cache.store
    done = 0
    try:
        for done, (rel, path, st) in enumerate(candidates, start=1):
            if done % DEADLINE_EVERY == 0:
                if deadline is not None and time.monotonic() > deadline:
                    raise WalkTimeout()
                if progress is not None and done % PROGRESS_EVERY == 0:
                    progress(done)
            if st is None:
                outside += 1
                continue
            if match is not None and not match(rel):
                continue
            if st.st_size > max_scan_bytes:
                oversize += 1
                unhashed.add(rel)
                continue
            found = lookup(rel, st)
            if found is None:
                try:
                    revision, size, kind = hash_and_kind(path)
                except OSError:
                    unhashed.add(rel)  # unreadable or vanished between listing and reading
                    exact = False
                    continue
                hashed += 1
                if size == st.st_size:
                    store(rel, st, revision, kind)
                else:
                    exact = False  # changing under us: report what was read, cache nothing
                if deadline is not None and time.monotonic() > deadline:
                    raise WalkTimeout()
            else:
                revision, kind = found
            files[rel] = FileEntry(rel, revision, st.st_size, kind)
    except WalkTimeout:
        cache.save(prune=False)
        raise
    if progress is not None:
        progress(done)
    tree = None
    memo = None
    if digest:
        clean = not cache.dirty and len(cache) == len(files) and exact
        tree = cache.memo.get("digest") if clean else None
        if tree is None:
            tree = tree_digest({rel: e.revision for rel, e in files.items()})
            if exact:
                memo = {"digest": tree}
    cache.save(memo=memo)
    return WalkResult(loc.path, loc.is_file, files, outside, oversize, hashed, frozenset(unhashed), tree)
