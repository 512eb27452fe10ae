"""Listing, stat-checking and hashing a directory tree, on every core.

A *sweep* lists files under some directories, stats each one and sorts it:
a trusted cache hit (an index into the cache), a file hashed now (a miss), a
symlink leaving the locator, a file over the size limit, or an unreadable
one. The walker turns sweeps into its result and refreshes the cache.

On a tree of 100k files the per-file system calls dominate (one ``stat`` per
file on a rescan, as for ``git status``; open, read and close on a cold
scan); git spreads them over threads. A tree is swept by ``sweep_dirs``,
one loop that lists, stats and checks a clean cache hit inline (walking each
directory's names in order beside the cache's sorted paths, so no index of
the whole cache is built); everything else goes through ``_Sorter.settle``,
the same rules ``sweep`` applies to a list of candidates. Python threads do
not help here (each call re-takes the interpreter lock), so on Linux a large tree
(``PARALLEL_MIN_FILES`` cached entries, or ``PARALLEL_MIN_DIRS`` directories
at the split depth on a cold cache) is split by directory and swept by
forked child processes, one per core (up to ``MAX_JOBS``). The children
inherit the loaded cache, sweep and hash their share and send back compact
results (cache indices for hits, revisions for misses) through a pipe. Any
child failure falls back to sweeping its share in the parent, so the result
never depends on the parallel path. Forking is skipped when other threads
run (a forked child would inherit their locks), and off Linux.
"""

from __future__ import annotations

import os
import stat
import time
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Literal, NamedTuple

from dcx.core.forks import can_fork, fork_map
from dcx.core.statcache import INO_SIGNED_MAX, INO_WRAP, Known, StatCache, StatKey, stat_key

NEVER_WALKED = ".decision-context"  # workspace.DC_DIR (not imported: workers stay light)
DEADLINE_EVERY = 64  # files between two cooperative deadline checks
PROGRESS_EVERY = 256  # files between two progress callbacks
PARALLEL_MIN_FILES = 20_000
PARALLEL_MIN_DIRS = 64  # directories at the split depth that make a cold tree worth splitting
MAX_JOBS = 4
SPLIT_DEPTH = 2  # directories this deep are the units shared between processes

Candidate = tuple[str, str, "os.stat_result | None"]


class SweepTimeout(Exception):
    """The cooperative deadline passed during a sweep."""


class HashDeadline(Exception):
    """The deadline passed while one (large or growing) file was being hashed."""


Hashed = tuple[str, StatKey, str, str, int]  # rel, stat key, revision, kind, bytes read
# abspath, limit=, deadline= -> (revision, bytes read, kind); raises HashDeadline
Hasher = Callable[..., tuple[str, int, str]]


class Sweep(NamedTuple):
    hits: array  # indices of trusted cache entries
    hashed: list[Hashed]  # misses, hashed by the process that swept them
    unreadable: list[str]  # listed but could not be read (or vanished meanwhile)
    outside: int  # symlinks leaving the locator
    oversized: list[str]  # rel paths over max_scan_bytes
    done: int  # files listed
    timed_out: bool = False  # stopped at the deadline; what it holds so far is still valid
    rejected: list[str] = []  # noqa: RUF012 — listed files the include/exclude patterns rejected


def _utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def iter_tree(
    starts: Iterable[tuple[str, str]],
    top: str,
    excluded: frozenset[str],
    *,
    split_at: int | None = None,
    frontier: list[tuple[str, str]] | None = None,
) -> Iterator[Candidate]:
    """(rel, abspath, stat) per regular file under each (directory, rel prefix) start.

    stat is None for a symlink leaving ``top``. With ``split_at``, directories
    that deep are appended to ``frontier`` instead of being entered. (The
    sweeps use :func:`sweep_dirs`, which sorts the same files the same way in
    one loop; this generator fed to :func:`sweep` is its plain statement,
    which tests compare it with.)
    """
    stack = [(d, p, 0) for d, p in starts]
    inside = top.rstrip(os.sep) + os.sep
    while stack:
        directory, prefix, depth = stack.pop()
        listed = _listing(directory)
        if listed is None:
            continue
        fd, entries = listed
        base = directory + os.sep if directory != os.sep else directory
        try:
            with entries:
                for entry in entries:
                    name = entry.name
                    if not name.isascii() and not _utf8(name):
                        continue  # not representable in JSON: skipped
                    try:
                        if entry.is_file(follow_symlinks=False):
                            yield prefix + name, base + name, entry.stat(follow_symlinks=False)
                        elif entry.is_dir(follow_symlinks=False):
                            _descend(
                                entry, base, prefix, depth, excluded, split_at, frontier, stack
                            )
                        elif entry.is_symlink():
                            found = _followed(base + name, top, inside)
                            if found is not False:
                                yield prefix + name, base + name, found
                    except OSError:
                        continue  # dangling or looping link, or vanished meanwhile
        finally:
            os.close(fd)


_O_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)


def _listing(directory: str) -> tuple[int, Any] | None:
    """(fd, scandir iterator) of a directory, or None when it cannot be opened.

    Listing an open descriptor makes each ``DirEntry.stat`` an ``fstatat`` of
    one name relative to it, not a lookup of the whole path.
    """
    try:
        fd = os.open(directory, _O_DIR)
    except OSError:
        return None
    try:
        return fd, os.scandir(fd)
    except OSError:
        os.close(fd)
        return None


def _descend(
    entry: os.DirEntry,
    base: str,
    prefix: str,
    depth: int,
    excluded: frozenset[str],
    split_at: int | None,
    frontier: list[tuple[str, str]] | None,
    stack: list[tuple[str, str, int]],
) -> None:
    """Queue a subdirectory (or hand it to ``frontier`` at the split depth); never a workspace."""
    name = entry.name
    path = base + name
    if name == NEVER_WALKED or path in excluded:
        return  # a workspace folder, at any depth, is never authority
    if split_at is not None and frontier is not None and depth + 1 >= split_at:
        frontier.append((path, prefix + name + "/"))
    else:
        stack.append((path, prefix + name + "/", depth + 1))


def _followed(path: str, top: str, inside: str) -> os.stat_result | Literal[False] | None:
    """A symlink: None when it leaves ``top``, the target's stat when that is a regular file
    inside, False otherwise (a directory symlink inside: its target is walked anyway)."""
    real = os.path.realpath(path)
    if not (real == top or real.startswith(inside)):
        return None
    st = os.stat(path)
    return st if stat.S_ISREG(st.st_mode) else False


class _Sorter:
    """Where each listed file goes: a hit, a hash made now, or one of the skips."""

    def __init__(
        self,
        *,
        match: Callable[[str], bool] | None,
        max_scan_bytes: int,
        probe: Callable[[str, os.stat_result], int],
        hasher: Hasher,
        deadline: float | None,
    ) -> None:
        self.match, self.max_scan_bytes, self.probe = match, max_scan_bytes, probe
        self.hasher, self.deadline = hasher, deadline
        self.hits = array("q")
        self.hashed: list[Hashed] = []
        self.unreadable: list[str] = []
        self.oversized: list[str] = []
        self.rejected: list[str] = []
        self.outside = 0

    def settle(self, rel: str, path: str, st: os.stat_result | None) -> bool:
        """Sort one listed file; False when the deadline passed (stop the sweep)."""
        if st is None:
            self.outside += 1
            return True
        if self.match is not None and not self.match(rel):
            self.rejected.append(rel)
            return True
        max_scan_bytes = self.max_scan_bytes
        if st.st_size > max_scan_bytes:
            self.oversized.append(rel)
            return True
        i = self.probe(rel, st)
        if i >= 0:
            self.hits.append(i)
            return True
        deadline = self.deadline
        try:
            revision, read, kind = self.hasher(path, limit=max_scan_bytes, deadline=deadline)
        except HashDeadline:
            return False
        except OSError:
            self.unreadable.append(rel)
            return True
        if read > max_scan_bytes:  # it grew past the limit while being hashed
            self.oversized.append(rel)
            return True
        self.hashed.append((rel, stat_key(st), revision, kind, read))
        return not (deadline is not None and time.monotonic() > deadline)

    def result(self, done: int, timed_out: bool) -> Sweep:
        return Sweep(
            self.hits,
            self.hashed,
            self.unreadable,
            self.outside,
            self.oversized,
            done,
            timed_out,
            self.rejected,
        )


def sweep(
    candidates: Iterable[Candidate],
    *,
    match: Callable[[str], bool] | None,
    max_scan_bytes: int,
    probe: Callable[[str, os.stat_result], int],
    hasher: Hasher,
    deadline: float | None,
    progress: Callable[[int], None] | None = None,
    done: int = 0,
) -> Sweep:
    """Sort listed files, hashing the misses; stop (``timed_out``) at the deadline."""
    sorter = _Sorter(
        match=match, max_scan_bytes=max_scan_bytes, probe=probe, hasher=hasher, deadline=deadline
    )
    for rel, path, st in candidates:
        done += 1
        if not done % DEADLINE_EVERY:
            if deadline is not None and time.monotonic() > deadline:
                return sorter.result(done, True)
            if progress is not None and not done % PROGRESS_EVERY:
                progress(done)
        if not sorter.settle(rel, path, st):
            return sorter.result(done, True)
    return sorter.result(done, False)


def sweep_dirs(
    starts: Iterable[tuple[str, str]],
    top: str,
    excluded: frozenset[str],
    known: Known,
    *,
    match: Callable[[str], bool] | None,
    max_scan_bytes: int,
    probe: Callable[[str, os.stat_result], int],
    hasher: Hasher,
    deadline: float | None,
    progress: Callable[[int], None] | None = None,
    done: int = 0,
    split_at: int | None = None,
    frontier: list[tuple[str, str]] | None = None,
) -> Sweep:
    """``sweep(iter_tree(...))`` in one loop, with the clean cache hit checked inline.

    On a no-change rescan nearly every file is a hit: a regular file whose
    stat equals its trusted entry. That case costs one ``fstatat``, one
    string comparison and four integer comparisons here: a directory's
    regular files are taken in name order, and so are its entries in the
    cache's sorted paths, so each file's entry is the next one (one bisection
    per directory finds the first; entries of a subdirectory, sorting in
    between, cost one more), and no index of 100k paths is built. Every other
    file (a miss, a link, a rejected or oversized one) goes to
    ``_Sorter.settle``, the one statement of the rules, exactly as ``sweep``
    sends it. So the result is ``sweep(iter_tree(...))``'s — every file in
    the same list — in another order within a directory (its links first,
    then its regular files by name), at a third of its cost.
    """
    sorter = _Sorter(
        match=match, max_scan_bytes=max_scan_bytes, probe=probe, hasher=hasher, deadline=deadline
    )
    files_of = _Files(sorter, known, max_scan_bytes, deadline, progress)
    walker = _Lister(top, excluded, split_at, frontier)
    stack = [(d, p, 0) for d, p in starts]
    while stack:
        directory, prefix, depth = stack.pop()
        listed = _listing(directory)
        if listed is None:
            continue
        fd, entries = listed
        base = directory + os.sep if directory != os.sep else directory
        try:
            with entries:
                files, links = walker.sort(entries, base, prefix, depth, stack)
            for name, found in links:
                done += 1
                if not done % DEADLINE_EVERY and _due(done, deadline, progress):
                    return sorter.result(done, True)
                if not sorter.settle(prefix + name, base + name, found):
                    return sorter.result(done, True)
            if files:
                done, stopped = files_of.sweep(files, base, prefix, done)
                if stopped:
                    return sorter.result(done, True)
        finally:
            os.close(fd)
    return sorter.result(done, False)


def _due(done: int, deadline: float | None, progress: Callable[[int], None] | None) -> bool:
    """Every ``DEADLINE_EVERY`` files: whether the deadline passed (and progress, now and then)."""
    if deadline is not None and time.monotonic() > deadline:
        return True
    if progress is not None and not done % PROGRESS_EVERY:
        progress(done)
    return False


class _Lister:
    """One directory's entries sorted out: regular files, links to follow, folders queued."""

    def __init__(
        self,
        top: str,
        excluded: frozenset[str],
        split_at: int | None,
        frontier: list[tuple[str, str]] | None,
    ) -> None:
        self.top, self.inside = top, top.rstrip(os.sep) + os.sep
        self.excluded, self.split_at, self.frontier = excluded, split_at, frontier

    def sort(
        self, entries: Any, base: str, prefix: str, depth: int, stack: list[tuple[str, str, int]]
    ) -> tuple[list[tuple[str, os.DirEntry]], list[tuple[str, os.stat_result | None]]]:
        """(regular files by name, symlinks with what they lead to), subdirectories pushed
        onto ``stack`` (or handed to the frontier at the split depth)."""
        files: list[tuple[str, os.DirEntry]] = []
        links: list[tuple[str, os.stat_result | None]] = []
        for entry in entries:
            name = entry.name
            if not name.isascii() and not _utf8(name):
                continue  # not representable in JSON: skipped
            try:
                if entry.is_file(follow_symlinks=False):
                    files.append((name, entry))
                elif entry.is_dir(follow_symlinks=False):
                    _descend(
                        entry,
                        base,
                        prefix,
                        depth,
                        self.excluded,
                        self.split_at,
                        self.frontier,
                        stack,
                    )
                elif entry.is_symlink():
                    found = _followed(base + name, self.top, self.inside)
                    if found is not False:
                        links.append((name, found))
            except OSError:
                continue  # dangling or looping link, or vanished meanwhile
        files.sort()
        return files, links


class _Files:
    """A directory's regular files, each a clean cache hit checked inline or settled."""

    def __init__(
        self,
        sorter: _Sorter,
        known: Known,
        max_scan_bytes: int,
        deadline: float | None,
        progress: Callable[[int], None] | None,
    ) -> None:
        self.sorter, self.known, self.max_scan_bytes = sorter, known, max_scan_bytes
        self.deadline, self.progress = deadline, progress

    def sweep(
        self, files: list[tuple[str, os.DirEntry]], base: str, prefix: str, done: int
    ) -> tuple[int, bool]:
        """``done`` after these files, and whether the deadline stopped the sweep."""
        paths, stats, written_ns, matching = self.known
        count, wrap, signed_max = len(paths), INO_WRAP, INO_SIGNED_MAX
        max_scan_bytes, deadline, progress = self.max_scan_bytes, self.deadline, self.progress
        settle, add_hit = self.sorter.settle, self.sorter.hits.append
        k = bisect_left(paths, prefix + files[0][0]) if matching else count
        for name, entry in files:
            try:
                st = entry.stat(follow_symlinks=False)  # fstatat of one name in the open dir
            except OSError:
                continue  # vanished meanwhile
            done += 1
            if not done % DEADLINE_EVERY and _due(done, deadline, progress):
                return done, True
            rel = prefix + name
            if k < count and paths[k] == rel:
                i = k
                k += 1
            elif matching:  # further on (a subdirectory's entries sort in between), or new
                k = bisect_left(paths, rel, k)
                i = k if k < count and paths[k] == rel else -1
                k += i >= 0
            else:
                i = -1
            if i >= 0:
                j = 4 * i
                mtime_ns = st.st_mtime_ns
                ino = st.st_ino
                if (
                    stats[j + 1] == mtime_ns
                    and mtime_ns < written_ns
                    and stats[j] == st.st_size
                    and stats[j + 3] == st.st_ctime_ns
                    and stats[j + 2] == (ino - wrap if ino >= signed_max else ino)
                    and st.st_size <= max_scan_bytes
                ):
                    add_hit(i)
                    continue
            if not settle(rel, base + name, st):
                return done, True
        return done, False


def _share(
    frontier: list[tuple[str, str]], cache: StatCache, jobs: int
) -> list[list[tuple[str, str]]]:
    """Split directories over ``jobs`` processes, heaviest first, by cached file count."""
    shares: list[list[tuple[str, str]]] = [[] for _ in range(jobs)]
    loads = [0] * jobs
    weighted = sorted(frontier, key=lambda d: (-cache.count_under(d[1]), d[1]))
    for directory in weighted:
        k = loads.index(min(loads))
        shares[k].append(directory)
        loads[k] += max(1, cache.count_under(directory[1]))
    return shares


def _packed(found: Sweep) -> tuple[Any, ...]:
    """A sweep as ``marshal`` writes it (a forked child's answer)."""
    return (found.hits.tobytes(), *found[1:])


def _unpacked(data: tuple[Any, ...]) -> Sweep:
    hits = array("q")
    hits.frombytes(data[0])
    return Sweep(hits, *data[1:])


def sweep_tree(
    top: str,
    excluded: frozenset[str],
    cache: StatCache,
    *,
    match: Callable[[str], bool] | None,
    matching: bool,
    max_scan_bytes: int,
    hasher: Hasher,
    deadline: float | None,
    progress: Callable[[int], None] | None,
) -> list[Sweep]:
    """Sweep the whole tree under ``top``, in parallel when it is large (see the module doc).

    A sweep that ``timed_out`` is returned, not raised: the hashes it made
    are kept by the caller before it reports the timeout.
    """
    probe = cache.prober()
    seen = cache.known(matching)

    def run(
        starts: list[tuple[str, str]],
        done: int = 0,
        report: Callable[[int], None] | None = None,
        frontier: list[tuple[str, str]] | None = None,
    ) -> Sweep:
        return sweep_dirs(
            starts,
            top,
            excluded,
            seen,
            match=match,
            max_scan_bytes=max_scan_bytes,
            probe=probe,
            hasher=hasher,
            deadline=deadline,
            progress=report,
            done=done,
            split_at=None if frontier is None else SPLIT_DEPTH,
            frontier=frontier,
        )

    known = len(cache)
    cores = min(MAX_JOBS, os.cpu_count() or 1)

    def after(base: int) -> Callable[[int], None] | None:
        """Progress of a sweep that continues another: counts from ``base`` on, while its own
        ``done`` counts its files only (so the parts' ``done`` add up to the files listed)."""
        if progress is None:
            return None
        return lambda n: progress(base + n)

    if cores < 2 or not can_fork() or PARALLEL_MIN_FILES // 4 <= known < PARALLEL_MIN_FILES:
        return [run([(top, "")], report=progress)]  # serial, or a tree the cache knows to be modest
    frontier: list[tuple[str, str]] = []
    loose = run([(top, "")], 0, progress, frontier)
    if loose.timed_out:
        return [loose]
    large = known >= PARALLEL_MIN_FILES or len(frontier) >= PARALLEL_MIN_DIRS
    if not large or len(frontier) < 2:
        return [loose, run(frontier, 0, after(loose.done))]
    shares = _share(frontier, cache, cores)
    mine, *theirs = fork_map(
        lambda share: _packed(run(share)),
        shares,
        here=lambda share: run(share, 0, after(loose.done)),
    )
    return [loose, mine, *(_unpacked(found) for found in theirs)]
