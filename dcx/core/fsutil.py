"""The only writers of state: atomic replace, OS locks, append-only logs (SPEC §3.5).

Why the ceremony: a crash must leave every state file either old or new,
never torn. So a write goes to a temp file beside the target, is fsynced, is
renamed over the target, and then the directory entry is fsynced too (git's
lockfile discipline). Readers skip ``*.tmp``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path

from dcx.core.errors import LockBusy, Refused

DEFAULT_WAIT = 5.0
FAULT_ENV = "DCX_FAULT_POINT"


_fault_hits: dict[str, int] = {}


def fault_point(step: str) -> None:
    """Crash here (SIGKILL, as a power cut would) when ``DCX_FAULT_POINT`` names this step.

    The one sanctioned test hook (SPEC §3.5, docs/reliability.md): a no-op unless
    the variable is set, read only by the atomic writer and the commit path.
    ``<step>@<n>`` crashes the n-th time this process reaches the step (a commit
    writes the cursor file first and its receipt second, both atomically).
    """
    wanted = os.environ.get(FAULT_ENV)
    if not wanted:
        return
    name, _, nth = wanted.partition("@")
    if name != step:
        return
    _fault_hits[step] = _fault_hits.get(step, 0) + 1
    if _fault_hits[step] == (int(nth) if nth.isdigit() else 1):
        import signal  # here: the module builds its enums on import, and only a crash test gets here

        os.kill(os.getpid(), signal.SIGKILL)


def fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


PRIVATE_PARTS = (".decision-context", "private")
PRIVATE_FILE = 0o600
PRIVATE_DIR = 0o700


def private_root(path: Path) -> Path | None:
    """The ``.decision-context/private`` folder ``path`` lies in (or is), else None."""
    parts = path.parts
    for i in range(len(parts) - 1):
        if parts[i] == PRIVATE_PARTS[0] and parts[i + 1] == PRIVATE_PARTS[1]:
            return Path(*parts[: i + 2])
    return None


def ensure_dir(directory: Path) -> None:
    """``mkdir -p``; inside ``private/`` every folder from ``private/`` down is 0700 (the umask aside)."""
    directory.mkdir(parents=True, exist_ok=True)
    top = private_root(directory)
    if top is None:
        return
    chain = [directory, *directory.parents]
    for folder in chain[: chain.index(top) + 1]:
        if folder.stat().st_mode & 0o777 != PRIVATE_DIR:
            os.chmod(folder, PRIVATE_DIR)


def file_mode(path: Path, mode: int) -> int:
    """``mode``, narrowed to owner-only for a file under ``private/`` (every private file is 0600)."""
    return mode & 0o700 if private_root(path) is not None else mode


def create_file(path: Path, mode: int = 0o644) -> None:
    """Create ``path`` empty if it is missing, with ``mode`` (owner-only under ``private/``), before
    another library (sqlite, a lock) opens it with its own default mode; a loose private file is narrowed."""
    ensure_dir(path.parent)
    mode = file_mode(path, mode)
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode))
        os.chmod(path, mode)
        return
    if private_root(path) is not None and path.stat().st_mode & 0o077:
        os.chmod(path, mode)


def atomic_write(path: Path, data: bytes, *, mode: int = 0o644) -> None:
    """Replace ``path`` with ``data`` so that a crash leaves the old or the new bytes."""
    ensure_dir(path.parent)
    mode = file_mode(path, mode)
    tmp = path.parent / f".{path.name}.{os.urandom(6).hex()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.chmod(tmp, mode)  # the umask may have narrowed it
        fault_point("atomic_write.before_replace")
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise
    fault_point("atomic_write.after_replace")
    fsync_dir(path.parent)


def write_private(path: Path, data: bytes) -> None:
    atomic_write(path, data, mode=0o600)


def is_temp(path: Path) -> bool:
    return path.name.startswith(".") and path.name.endswith(".tmp")


@contextlib.contextmanager
def file_lock(
    target: Path, *, wait: float = DEFAULT_WAIT, display: str | None = None
) -> Iterator[None]:
    """Hold an exclusive OS lock on ``<target>.lock`` (portalocker, imported lazily).

    A timeout is ``LockBusy`` (exit 4) naming the lock file, never a hang.
    """
    import portalocker

    lock_path = target.with_name(target.name + ".lock")
    create_file(lock_path)
    lock = portalocker.Lock(
        str(lock_path),
        mode="a",
        timeout=max(0.0, wait),
        check_interval=0.05,
        fail_when_locked=False,
        flags=portalocker.LockFlags.EXCLUSIVE | portalocker.LockFlags.NON_BLOCKING,
    )
    try:
        lock.acquire()
    except portalocker.exceptions.LockException:
        name = display or lock_path.name
        raise LockBusy(
            f"{name}.lock is held by another dcx process (waited {wait:g} s)",
            hint="wait for it to finish, or retry with --wait SECONDS",
        ) from None
    try:
        yield
    finally:
        lock.release()


def read_lines(path: Path) -> tuple[list[str], bool]:
    """The complete lines of an append-only log, and whether its last line is torn."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return [], False
    if not data:
        return [], False
    torn = not data.endswith(b"\n")
    text = data.decode("utf-8", errors="replace")
    # drop the torn fragment, or the empty string after the final newline
    lines = text.split("\n")[:-1]
    return [line for line in lines if line.strip()], torn


def locked_append(
    path: Path,
    decide: Callable[[list[str]], bytes | None],
    *,
    wait: float = DEFAULT_WAIT,
    display: str | None = None,
    tail_only: bool = False,
) -> bytes | None:
    """Under the log's lock, let ``decide`` see the current lines and return a line to append.

    ``decide`` returns None to append nothing (idempotent re-runs). A torn last
    line stops the append with a hint to repair: appending after it would glue
    two records into one. ``tail_only``: ``decide`` needs no lines (it is given
    none), so only the last byte is read — an append costs the same however long
    the log (statements.jsonl).
    """
    name = display or path.name
    with file_lock(path, wait=wait, display=name):
        lines, torn = ([], _ends_torn(path)) if tail_only else read_lines(path)
        if torn:
            raise Refused(
                f"{name}: the last line is incomplete (a crash during an append)",
                code="torn_log",
                hint="run `dcx verify --repair` to move the fragment aside",
            )
        line = decide(lines)
        if line is None:
            return None
        if not line.endswith(b"\n"):
            line += b"\n"
        ensure_dir(path.parent)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, file_mode(path, 0o644))
        try:
            write_all(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)
        return line


def _ends_torn(path: Path) -> bool:
    """Whether the log at ``path`` ends without its final newline (read: the last byte only)."""
    try:
        with open(path, "rb") as handle:
            if handle.seek(0, os.SEEK_END) == 0:
                return False
            handle.seek(-1, os.SEEK_END)
            return handle.read(1) != b"\n"
    except FileNotFoundError:
        return False


def write_all(fd: int, data: bytes) -> None:
    """Write every byte: ``os.write`` may write fewer than it was given (a signal, a full disk)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:
            raise OSError("os.write wrote nothing")
        view = view[written:]
