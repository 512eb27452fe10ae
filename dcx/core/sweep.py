"""Listing, stat-checking and hashing a directory tree, on every core.

A *sweep* lists files under some directories, stats each one and sorts it:
a trusted cache hit (an index into the cache), a file hashed now (a miss), a
symlink leaving the locator, a file over the size limit, or an unreadable
one. The walker turns sweeps into its result and refreshes the cache.

On a tree of 100k files the per-file system calls dominate (one ``stat`` per
file on a rescan, as for ``git status``; open, read and close on a cold
scan); git spreads them over threads. Python threads do not help here (each
call re-takes the interpreter lock), so on Linux a large tree
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

import contextlib
import marshal
import os
import signal
import stat
import sys
import threading
import time
from array import array
from collections.abc import Callable, Iterable, Iterator
from typing import NamedTuple

from dcx.core.statcache import StatCache, StatKey, stat_key

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
    that deep are appended to ``frontier`` instead of being entered.
    """
    stack = [(d, p, 0) for d, p in starts]
    inside = top.rstrip(os.sep) + os.sep
    o_flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
    while stack:
        directory, prefix, depth = stack.pop()
        try:
            fd = os.open(directory, o_flags)
        except OSError:
            continue
        base = directory + os.sep if directory != os.sep else directory
        try:
            with os.scandir(fd) as entries:
                for entry in entries:
                    name = entry.name
                    if not name.isascii() and not _utf8(name):
                        continue  # not representable in JSON: skipped
                    try:
                        # fstatat of one name relative to the open directory, not a full path lookup
                        if entry.is_file(follow_symlinks=False):
                            yield prefix + name, base + name, entry.stat(follow_symlinks=False)
                        elif entry.is_dir(follow_symlinks=False):
                            path = base + name
                            if name == NEVER_WALKED or path in excluded:
                                continue  # a workspace folder, at any depth, is never authority
                            if (
                                split_at is not None
                                and frontier is not None
                                and depth + 1 >= split_at
                            ):
                                frontier.append((path, prefix + name + "/"))
                            else:
                                stack.append((path, prefix + name + "/", depth + 1))
                        elif entry.is_symlink():
                            path = base + name
                            real = os.path.realpath(path)
                            if not (real == top or real.startswith(inside)):
                                yield prefix + name, path, None
                                continue
                            st = os.stat(path)
                            if stat.S_ISREG(st.st_mode):
                                yield prefix + name, path, st
                            # a directory symlink inside the tree: its target is walked anyway
                    except OSError:
                        continue  # dangling or looping link, or vanished meanwhile
        finally:
            os.close(fd)


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
    hits = array("q")
    hashed: list[Hashed] = []
    unreadable: list[str] = []
    oversized: list[str] = []
    rejected: list[str] = []
    outside = 0
    add_hit = hits.append
    timed_out = False
    for rel, path, st in candidates:
        done += 1
        if not done % DEADLINE_EVERY:
            if deadline is not None and time.monotonic() > deadline:
                timed_out = True
                break
            if progress is not None and not done % PROGRESS_EVERY:
                progress(done)
        if st is None:
            outside += 1
            continue
        if match is not None and not match(rel):
            rejected.append(rel)
            continue
        if st.st_size > max_scan_bytes:
            oversized.append(rel)
            continue
        i = probe(rel, st)
        if i >= 0:
            add_hit(i)
            continue
        try:
            revision, read, kind = hasher(path, limit=max_scan_bytes, deadline=deadline)
        except HashDeadline:
            timed_out = True
            break
        except OSError:
            unreadable.append(rel)
            continue
        if read > max_scan_bytes:  # it grew past the limit while being hashed
            oversized.append(rel)
            continue
        hashed.append((rel, stat_key(st), revision, kind, read))
        if deadline is not None and time.monotonic() > deadline:
            timed_out = True
            break
    return Sweep(hits, hashed, unreadable, outside, oversized, done, timed_out, rejected)


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


def _fork_sweep(
    share: list[tuple[str, str]], run: Callable[[list[tuple[str, str]]], Sweep]
) -> tuple[int, int] | None:
    """Start a child sweeping ``share``; (pid, read fd), or None when forking failed."""
    read_fd, write_fd = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_fd)
        os.close(write_fd)
        return None
    if pid == 0:  # child: sweep, send, leave without running any parent cleanup
        code = 1
        try:
            os.close(read_fd)
            found = run(share)
            body = marshal.dumps(
                (
                    found.hits.tobytes(),
                    found.hashed,
                    found.unreadable,
                    found.outside,
                    found.oversized,
                    found.done,
                    found.timed_out,
                    found.rejected,
                )
            )
            view = memoryview(body)
            while view:
                view = view[os.write(write_fd, view) :]
            code = 0
        finally:
            os._exit(code)
    os.close(write_fd)
    return pid, read_fd


def _collect(pid: int, read_fd: int) -> Sweep | None:
    """A child's sweep (the child is always reaped); None if it failed: the parent sweeps that share."""
    chunks = []
    try:
        while chunk := os.read(read_fd, 1 << 20):
            chunks.append(chunk)
    finally:
        os.close(read_fd)  # a child still writing gets EPIPE and exits
        _, status = os.waitpid(pid, 0)
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        return None
    try:
        data = marshal.loads(b"".join(chunks))
    except (ValueError, EOFError, TypeError):
        return None
    hits = array("q")
    hits.frombytes(data[0])
    return Sweep(hits, *data[1:])


def sweep_tree(
    top: str,
    excluded: frozenset[str],
    cache: StatCache,
    *,
    match: Callable[[str], bool] | None,
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

    def run(
        starts: list[tuple[str, str]], done: int = 0, report: Callable[[int], None] | None = None
    ) -> Sweep:
        return sweep(
            iter_tree(starts, top, excluded),
            match=match,
            max_scan_bytes=max_scan_bytes,
            probe=probe,
            hasher=hasher,
            deadline=deadline,
            progress=report,
            done=done,
        )

    known = len(cache)
    cores = min(MAX_JOBS, os.cpu_count() or 1)
    can_fork = sys.platform == "linux" and cores > 1 and threading.active_count() == 1

    def after(base: int) -> Callable[[int], None] | None:
        """Progress of a sweep that continues another: counts from ``base`` on, while its own
        ``done`` counts its files only (so the parts' ``done`` add up to the files listed)."""
        if progress is None:
            return None
        return lambda n: progress(base + n)

    if not can_fork or PARALLEL_MIN_FILES // 4 <= known < PARALLEL_MIN_FILES:
        return [run([(top, "")], report=progress)]  # serial, or a tree the cache knows to be modest
    frontier: list[tuple[str, str]] = []
    loose = sweep(
        iter_tree([(top, "")], top, excluded, split_at=SPLIT_DEPTH, frontier=frontier),
        match=match,
        max_scan_bytes=max_scan_bytes,
        probe=probe,
        hasher=hasher,
        deadline=deadline,
        progress=progress,
    )
    if loose.timed_out:
        return [loose]
    large = known >= PARALLEL_MIN_FILES or len(frontier) >= PARALLEL_MIN_DIRS
    if not large or len(frontier) < 2:
        return [loose, run(frontier, 0, after(loose.done))]
    jobs = cores
    shares = _share(frontier, cache, jobs)
    pending = [(share, _fork_sweep(share, run)) for share in shares[1:]]
    results = [loose]
    try:
        results.append(run(shares[0], 0, after(loose.done)))
        while pending:
            share, child = pending.pop(0)
            found = _collect(*child) if child is not None else None
            results.append(found if found is not None else run(share))
    finally:
        for _, child in pending:  # children never collected: the parent failed first
            if child is not None:
                pid, read_fd = child
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
                with contextlib.suppress(OSError):
                    os.waitpid(pid, 0)
                with contextlib.suppress(OSError):
                    os.close(read_fd)
    return results
