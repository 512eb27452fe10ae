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
- Revision of a file = blake3 hex of its bytes. Files over ``max_scan_bytes``
  are skipped unhashed and counted. Deadlines are cooperative; hashes made
  before a timeout stay in the cache.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import blake3

from dcx.sources.statcache import StatCache, cache_path
from dcx.workspace import DC_DIR, Workspace

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


class WalkResult(NamedTuple):
    root: Path  # the resolved locator: a directory, or the one file
    is_file: bool
    files: dict[str, FileEntry]
    skipped_outside_locator: int
    skipped_oversize: int
    hashed: int  # files actually read this walk (not answered by the cache)

    def abspath(self, rel: str) -> Path:
        return self.root if self.is_file else self.root / rel


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


def hash_file(path: Path, *, limit: int | None = None) -> tuple[str, int]:
    """blake3 hex of a file's bytes and the byte count (reads at most ``limit`` + 1 bytes)."""
    hasher = blake3.blake3()
    total = 0
    with open(path, "rb") as handle:
        while True:
            chunk = handle.read(HASH_CHUNK)
            if not chunk:
                break
            total += len(chunk)
            if limit is not None and total > limit:
                break
            hasher.update(chunk)
    return hasher.hexdigest(), total


def revision_of(data: bytes) -> str:
    return blake3.blake3(data).hexdigest()


def _matcher(include: tuple[str, ...], exclude: tuple[str, ...]):
    if not include and not exclude:
        return lambda rel: True
    import pathspec

    inc = pathspec.GitIgnoreSpec.from_lines(include) if include else None
    exc = pathspec.GitIgnoreSpec.from_lines(exclude) if exclude else None

    def match(rel: str) -> bool:
        if inc is not None and not inc.match_file(rel):
            return False
        return not (exc is not None and exc.match_file(rel))

    return match


def _iter_tree(top: Path, ws_root: Path) -> Iterator[tuple[str, Path, os.stat_result | None, bool]]:
    """(rel, path, stat, outside) for each file under ``top``; symlinked dirs are not entered."""
    stack = [top]
    excluded = {(ws_root / name) for name in ALWAYS_EXCLUDED}
    top_str = str(top)
    while stack:
        directory = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            path = Path(entry.path)
            if path in excluded:
                continue
            try:
                if entry.is_symlink():
                    real = os.path.realpath(entry.path)
                    if not (real == top_str or real.startswith(top_str + os.sep)):
                        yield "", path, None, True
                        continue
                    try:
                        st = os.stat(entry.path)
                    except OSError:
                        continue  # dangling or looping link
                    if stat.S_ISREG(st.st_mode):
                        yield path.relative_to(top).as_posix(), path, st, False
                    continue  # a directory symlink inside the tree: its target is walked anyway
                if entry.is_dir(follow_symlinks=False):
                    stack.append(path)
                elif entry.is_file(follow_symlinks=False):
                    yield path.relative_to(top).as_posix(), path, entry.stat(follow_symlinks=False), False
            except OSError:
                continue


def walk(
    ws: Workspace,
    source_id: str,
    locator: dict[str, Any],
    *,
    max_scan_bytes: int,
    deadline: float | None = None,
    progress: Any = None,
) -> WalkResult:
    """Every file of a locator with its revision, using and refreshing the stat cache.

    ``deadline`` is a ``time.monotonic()`` value; past it, ``WalkTimeout`` is
    raised after saving the hashes made so far. ``progress`` (optional) is
    called with the number of files done so far.
    """
    loc = resolve_locator(ws, locator)
    cache = StatCache(cache_path(ws, source_id))
    files: dict[str, FileEntry] = {}
    outside = oversize = hashed = 0
    ws_root = ws.root.resolve()
    if loc.is_file:
        candidates: Iterator[tuple[str, Path, os.stat_result | None, bool]] = iter(
            [(loc.path.name, loc.path, os.stat(loc.path), False)]
        )
    else:
        candidates = _iter_tree(loc.path, ws_root)
    match = _matcher(loc.include, loc.exclude) if not loc.is_file else (lambda rel: True)
    try:
        for done, (rel, path, st, is_outside) in enumerate(candidates, start=1):
            if deadline is not None and done % 64 == 0 and time.monotonic() > deadline:
                raise WalkTimeout()
            if is_outside:
                outside += 1
                continue
            if not match(rel) or st is None:
                continue
            if st.st_size > max_scan_bytes:
                oversize += 1
                continue
            revision = cache.lookup(rel, st)
            if revision is None:
                try:
                    revision, size = hash_file(path)
                except OSError:
                    continue  # vanished or unreadable between listing and reading
                hashed += 1
                if size == st.st_size:
                    cache.store(rel, st, revision)
                # else: changing under us; report what was read, cache nothing
                if deadline is not None and time.monotonic() > deadline:
                    raise WalkTimeout()
            files[rel] = FileEntry(rel, revision, st.st_size)
            if progress is not None:
                progress(done)
    except WalkTimeout:
        cache.save(prune=False)
        raise
    cache.save()
    return WalkResult(loc.path, loc.is_file, files, outside, oversize, hashed)
