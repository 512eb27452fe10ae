"""The only writers of state: atomic replace, OS locks, append-only logs (SPEC §3.5).

Why the ceremony: a crash must leave every state file either old or new,
never torn. So a write goes to a temp file beside the target, is fsynced, is
renamed over the target, and then the directory entry is fsynced too (git's
lockfile discipline). Readers skip ``*.tmp``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

from dcx.core.errors import DiskFull, LockBusy, Refused, WorkspaceSymlink

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
DC_DIR = PRIVATE_PARTS[0]
LINKED_ENV = "DCX_ALLOW_LINKED_WORKSPACE"


def private_root(path: Path) -> Path | None:
    """The ``.decision-context/private`` folder ``path`` lies in (or is), else None."""
    parts = path.parts
    for i in range(len(parts) - 1):
        if parts[i] == PRIVATE_PARTS[0] and parts[i + 1] == PRIVATE_PARTS[1]:
            return Path(*parts[: i + 2])
    return None


# -- no link is followed inside .decision-context/ (SPEC §3.5 v4) ----------------------------
#
# Every path below a goal's .decision-context/ is reached from the goal root one folder at a
# time, each opened with O_NOFOLLOW relative to the folder before it (a directory fd), and the
# last name is opened, created, replaced or removed relative to its folder's fd. A link swapped
# in after a check cannot redirect the operation: there is no later lookup by path for it to
# catch. The goal root and the folders above it are the user's choice and are followed.
# `.decision-context/` itself and `private/` may be links only with --allow-linked-workspace
# (DCX_ALLOW_LINKED_WORKSPACE=1), for people who keep private state on another disk.

_LINKABLE = ((DC_DIR,), (DC_DIR, "private"))
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_NOFOLLOW = os.O_NOFOLLOW
_allow_linked = False
_preflighted: set[str] = set()


def begin_command(*, allow_linked: bool = False) -> None:
    """One command's file policy: whether the workspace may be linked; the next write checks the tree anew."""
    global _allow_linked
    _allow_linked = allow_linked
    _preflighted.clear()


def _linked_allowed() -> bool:
    return _allow_linked or os.environ.get(LINKED_ENV) == "1"


def _split(path: Path) -> tuple[str, tuple[str, ...]] | None:
    """(goal root, the names from ``.decision-context`` down) for a workspace path, else None."""
    parts = Path(os.path.abspath(path)).parts
    if DC_DIR not in parts:
        return None
    at = len(parts) - 1 - parts[::-1].index(DC_DIR)
    if at == 0:
        return None
    return os.path.join(*parts[:at]), parts[at:]


def _refuse(rel: tuple[str, ...], st: os.stat_result | None) -> WorkspaceSymlink:
    shown = "/".join(rel)
    if st is not None and not stat.S_ISLNK(st.st_mode):
        return WorkspaceSymlink(
            f"{shown} is not a regular file or folder; dcx reads and writes only its own files",
            hint="remove it, then run `dcx verify`",
            path=shown,
        )
    hint = "remove the link (git rm it if it was committed), then run `dcx verify`"
    if rel in _LINKABLE:
        hint = (
            "remove the link, or pass --allow-linked-workspace to keep this folder on another disk"
        )
    return WorkspaceSymlink(
        f"{shown} is a symbolic link; dcx never follows a link inside {DC_DIR}/",
        hint=hint,
        path=shown,
    )


def _lstat_at(fd: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _open_dir_at(fd: int, name: str, rel: tuple[str, ...]) -> int:
    follow = rel in _LINKABLE and _linked_allowed()
    try:
        return os.open(name, _DIR_FLAGS | (0 if follow else _NOFOLLOW), dir_fd=fd)
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
            raise
        st = _lstat_at(fd, name)
        if st is not None and stat.S_ISREG(st.st_mode):
            raise  # a file where a folder belongs: the OS's own error
        # a link or special file; or the entry changed since the open refused it (a swap)
        raise _refuse(rel, None if st is None or stat.S_ISDIR(st.st_mode) else st) from None


def _folder(root: str, names: tuple[str, ...], *, create: bool) -> int:
    """A directory fd of ``root/names…``, each step opened without following a link."""
    if create:
        os.makedirs(root, exist_ok=True)  # `dcx -C NEW init`: the goal root is the user's to name
    fd = os.open(root, _DIR_FLAGS)
    try:
        for depth, name in enumerate(names):
            rel = names[: depth + 1]
            try:
                inner = _open_dir_at(fd, name, rel)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o777, dir_fd=fd)
                inner = _open_dir_at(fd, name, rel)
            os.close(fd)
            fd = inner
            if create and rel[:2] == PRIVATE_PARTS and os.fstat(fd).st_mode & 0o777 != PRIVATE_DIR:
                os.fchmod(
                    fd, PRIVATE_DIR
                )  # every folder from private/ down is 0700 (the umask aside)
    except BaseException:
        os.close(fd)
        raise
    return fd


class _Place:
    """An open folder (``fd``) and one name in it; ``rel`` names it for people."""

    __slots__ = ("confined", "fd", "name", "path", "rel")

    def __init__(
        self, fd: int, name: str, rel: tuple[str, ...], path: Path, confined: bool
    ) -> None:
        self.fd, self.name, self.rel, self.path, self.confined = fd, name, rel, path, confined

    @property
    def shown(self) -> str:
        return "/".join(self.rel) if self.confined else self.path.name

    def check_entry(self) -> os.stat_result | None:
        """The entry's own stat (never through a link); a link or special file is refused."""
        st = _lstat_at(self.fd, self.name)
        linkable = self.rel in _LINKABLE and _linked_allowed()
        if (
            self.confined
            and st is not None
            and not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode) or linkable)
        ):
            raise _refuse(self.rel, st)
        return st


@contextlib.contextmanager
def _place(path: Path, *, create: bool = False, write: bool = False) -> Iterator[_Place]:
    split = _split(path)
    if split is None:
        parent = os.path.dirname(os.path.abspath(path))
        if create:
            os.makedirs(parent, exist_ok=True)
        fd = os.open(parent, _DIR_FLAGS)
        place = _Place(fd, os.path.basename(os.path.abspath(path)), (), path, False)
    else:
        root, names = split
        if write:
            preflight(Path(root))
        fd = _folder(root, names[:-1], create=create)
        place = _Place(fd, names[-1], names, path, True)
    try:
        yield place
    finally:
        os.close(fd)


def preflight(root: Path) -> None:
    """Before a command's first write: no link or special file anywhere in ``.decision-context/``.

    So a committed link stops a command before it writes anything at all; the
    per-operation walk above keeps holding if one appears afterwards.
    """
    key = str(root)
    if key in _preflighted:
        return
    top = root / DC_DIR
    try:
        st = top.lstat()
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode) and not _linked_allowed():
        raise _refuse((DC_DIR,), st)
    for rel, entry_st in _foreign(top, (DC_DIR,), skip=()):
        raise _refuse(rel, entry_st)
    _preflighted.add(key)


def _foreign(
    folder: Path, rel: tuple[str, ...], *, skip: tuple[str, ...]
) -> Iterator[tuple[tuple[str, ...], os.stat_result | None]]:
    """(rel, lstat) of every link or special file below ``folder``, never entering a link."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        return
    for entry in entries:
        here = (*rel, entry.name)
        if len(here) == 2 and entry.name in skip:
            continue
        if entry.is_symlink():
            if here in _LINKABLE and _linked_allowed() and entry.is_dir():
                yield from _foreign(Path(entry.path), here, skip=skip)
                continue
            yield here, entry.stat(follow_symlinks=False)
        elif entry.is_dir(follow_symlinks=False):
            yield from _foreign(Path(entry.path), here, skip=skip)
        elif not entry.is_file(follow_symlinks=False):
            yield here, entry.stat(follow_symlinks=False)


def foreign_entries(dc: Path, *, skip: tuple[str, ...] = ()) -> list[str]:
    """Workspace-relative names of every link and special file below ``dc`` (``verify``, ``audit``);
    ``skip`` names top-level entries left out (the private ones)."""
    out = []
    try:
        st = dc.lstat()
    except FileNotFoundError:
        return []
    if stat.S_ISLNK(st.st_mode) and not _linked_allowed():
        return [DC_DIR]
    for rel, _st in _foreign(dc, (DC_DIR,), skip=skip):
        out.append("/".join(rel))
    return out


def check_workspace_root(root: Path) -> None:
    """``.decision-context`` itself may not be a link (unless allowed): checked when it is found."""
    top = root / DC_DIR
    with contextlib.suppress(FileNotFoundError):
        st = top.lstat()
        if stat.S_ISLNK(st.st_mode) and not _linked_allowed():
            raise _refuse((DC_DIR,), st)


def _disk_full(exc: OSError, place: _Place) -> OSError | DiskFull:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return DiskFull(
            f"no space left on the device writing {place.shown}",
            hint="free some space and run the command again (nothing was half written)",
        )
    return exc


def _open_entry(place: _Place, flags: int, mode: int = 0o644) -> int:
    """Open the place's name relative to its folder; inside a workspace never through a link, and
    only a regular file (O_NONBLOCK: a planted FIFO cannot hang the open)."""
    extra = _NOFOLLOW | os.O_NONBLOCK if place.confined else 0
    try:
        fd = os.open(place.name, flags | extra | os.O_CLOEXEC, mode, dir_fd=place.fd)
    except OSError as exc:
        if place.confined and exc.errno in (errno.ELOOP, errno.ENXIO):
            st = _lstat_at(place.fd, place.name)
            raise _refuse(
                place.rel, st if st is not None and not stat.S_ISREG(st.st_mode) else None
            ) from None
        raise
    if place.confined:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            os.close(fd)
            raise _refuse(place.rel, st)
        if extra:
            os.set_blocking(fd, True)
    return fd


_real_roots: dict[str, str] = {}
_PROC_FD = "/proc/self/fd/"


def _open_read(path: Path) -> int:
    """A read-only fd of ``path``. Inside a workspace the cheap way first (one open, then the
    kernel's own name for what was opened, ``/proc/self/fd/N``, must be the path asked for: a
    link anywhere on the way shows as another name); anything else takes the folder walk, which
    also says which entry is the link."""
    split = _split(path)
    if split is not None and not _linked_allowed() and os.path.isdir(_PROC_FD):
        root, names = split
        real = _real_roots.get(root)
        if real is None:
            real = _real_roots[root] = os.path.realpath(root)
        full = os.path.join(real, *names)
        try:
            fd = os.open(full, os.O_RDONLY | _NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            fd = -1  # missing, a link, a FIFO...: the walk gives the precise answer
        if fd >= 0:
            try:
                same = os.readlink(f"{_PROC_FD}{fd}") == full and stat.S_ISREG(os.fstat(fd).st_mode)
            except OSError:
                same = False
            if same:
                os.set_blocking(fd, True)
                return fd
            os.close(fd)
    with _place(path) as place:
        return _open_entry(place, os.O_RDONLY)


def read_bytes(path: Path) -> bytes:
    """A file's bytes; below ``.decision-context`` never through a link (SPEC §3.5 v4)."""
    with os.fdopen(_open_read(path), "rb") as handle:
        return handle.read()


def read_text(path: Path, encoding: str = "utf-8") -> str:
    return read_bytes(path).decode(encoding)


def tighten(path: Path, mode: int) -> int | None:
    """Narrow ``path``'s permission bits to ``mode`` (never through a link); the old bits when they
    were looser, else None. A missing file is ``FileNotFoundError``."""
    with _place(path) as place:
        fd = _open_entry(place, os.O_RDONLY)
    try:
        old = stat.S_IMODE(os.fstat(fd).st_mode)
        if old & ~mode:
            os.fchmod(fd, mode)
            return old
        return None
    finally:
        os.close(fd)


def check_path(path: Path, *, write: bool = False) -> None:
    """For a library that opens ``path`` itself (sqlite, the index): no link on the way or at it.

    Checked, then opened by name: dcx's own private folder, not a public file a clone brings.
    """
    with _place(path, create=write, write=write) as place:
        place.check_entry()


def unlink(path: Path, *, missing_ok: bool = False) -> None:
    """Remove one file (a link itself, never what it points at)."""
    with _place(path, write=True) as place:
        try:
            os.unlink(place.name, dir_fd=place.fd)
        except FileNotFoundError:
            if not missing_ok:
                raise


def list_dir(path: Path) -> list[tuple[str, str]]:
    """(name, ``file``|``dir``|``link``|``other``) of a folder's entries, sorted; the folder reached
    without following a link. Missing folder: empty."""
    split = _split(path)
    try:
        if split is None:
            fd = os.open(path, _DIR_FLAGS)
        else:
            fd = _folder(split[0], split[1], create=False)
    except (FileNotFoundError, NotADirectoryError):
        return []
    try:
        with os.scandir(fd) as entries:
            out = []
            for entry in entries:
                if entry.is_symlink():
                    kind = "link"
                elif entry.is_dir(follow_symlinks=False):
                    kind = "dir"
                elif entry.is_file(follow_symlinks=False):
                    kind = "file"
                else:
                    kind = "other"
                out.append((entry.name, kind))
    finally:
        os.close(fd)
    return sorted(out)


def ensure_dir(directory: Path) -> None:
    """``mkdir -p``; inside ``private/`` every folder from ``private/`` down is 0700 (the umask aside)."""
    split = _split(directory)
    if split is None:
        directory.mkdir(parents=True, exist_ok=True)
        return
    preflight(Path(split[0]))
    try:
        os.close(_folder(split[0], split[1], create=True))
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise DiskFull(
                f"no space left on the device creating {'/'.join(split[1])}",
                hint="free some space and run the command again",
            ) from None
        raise


def file_mode(path: Path, mode: int) -> int:
    """``mode``, narrowed to owner-only for a file under ``private/`` (every private file is 0600)."""
    return mode & 0o700 if private_root(path) is not None else mode


def create_file(path: Path, mode: int = 0o644) -> None:
    """Create ``path`` empty if it is missing, with ``mode`` (owner-only under ``private/``), before
    another library (sqlite, a lock) opens it with its own default mode; a loose private file is narrowed."""
    mode = file_mode(path, mode)
    with _place(path, create=True, write=True) as place:
        try:
            fd = _open_entry(place, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        except FileExistsError:
            fd = _open_entry(place, os.O_RDONLY)
            try:
                if private_root(path) is not None and os.fstat(fd).st_mode & 0o077:
                    os.fchmod(fd, mode)
            finally:
                os.close(fd)
            return
        except OSError as exc:
            raise _disk_full(exc, place) from None
        try:
            os.fchmod(fd, mode)
        finally:
            os.close(fd)


def atomic_write(path: Path, data: bytes, *, mode: int = 0o644) -> None:
    """Replace ``path`` with ``data`` so that a crash leaves the old or the new bytes."""
    mode = file_mode(path, mode)
    with _place(path, create=True, write=True) as place:
        place.check_entry()  # a link or FIFO at the target is refused, not replaced
        tmp = f".{place.name}.{os.urandom(6).hex()}.tmp"
        try:
            fd = os.open(
                tmp,
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | os.O_CLOEXEC,
                mode,
                dir_fd=place.fd,
            )
        except OSError as exc:
            raise _disk_full(exc, place) from None
        try:
            try:
                write_all(fd, data)
                os.fsync(fd)
                os.fchmod(fd, mode)  # the umask may have narrowed it
            finally:
                os.close(fd)
            fault_point("atomic_write.before_replace")
            os.replace(tmp, place.name, src_dir_fd=place.fd, dst_dir_fd=place.fd)
        except BaseException as exc:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp, dir_fd=place.fd)
            if isinstance(exc, OSError):
                raise _disk_full(exc, place) from None
            raise
        fault_point("atomic_write.after_replace")
        os.fsync(place.fd)


def write_private(path: Path, data: bytes) -> None:
    atomic_write(path, data, mode=0o600)


def is_temp(path: Path) -> bool:
    return path.name.startswith(".") and path.name.endswith(".tmp")


@contextlib.contextmanager
def file_lock(
    target: Path, *, wait: float = DEFAULT_WAIT, display: str | None = None
) -> Iterator[None]:
    """Hold an exclusive OS lock on ``<target>.lock`` (portalocker, imported lazily).

    The lock file is opened by dcx (never through a link) and portalocker locks
    that handle. A timeout is ``LockBusy`` (exit 4) naming the lock file, never a hang.
    """
    import time

    import portalocker

    lock_path = target.with_name(target.name + ".lock")
    create_file(lock_path)
    with _place(lock_path, write=True) as place:
        fd = _open_entry(place, os.O_RDWR | os.O_APPEND)
    handle = os.fdopen(fd, "a")
    flags = portalocker.LockFlags.EXCLUSIVE | portalocker.LockFlags.NON_BLOCKING
    deadline = time.monotonic() + max(0.0, wait)
    try:
        while True:
            try:
                portalocker.lock(handle, flags)
                break
            except portalocker.exceptions.LockException:
                if time.monotonic() >= deadline:
                    name = display or lock_path.name
                    raise LockBusy(
                        f"{name}.lock is held by another dcx process (waited {wait:g} s)",
                        hint="wait for it to finish, or retry with --wait SECONDS",
                    ) from None
                time.sleep(0.05)
        try:
            yield
        finally:
            portalocker.unlock(handle)
    finally:
        handle.close()


def read_lines(path: Path) -> tuple[list[str], bool]:
    """The complete lines of an append-only log, and whether its last line is torn."""
    try:
        data = read_bytes(path)
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
        with _place(path, create=True, write=True) as place:
            try:
                fd = _open_entry(
                    place, os.O_WRONLY | os.O_APPEND | os.O_CREAT, file_mode(path, 0o644)
                )
            except OSError as exc:
                raise _disk_full(exc, place) from None
            try:
                size = os.fstat(fd).st_size
                write_all(fd, line)
                os.fsync(fd)
            except OSError as exc:
                with contextlib.suppress(OSError):  # a full disk: no half line is left behind
                    os.ftruncate(fd, size)
                raise _disk_full(exc, place) from None
            finally:
                os.close(fd)
        return line


def set_aside_torn_tail(log: Path, aside: Path, *, wait: float, display: str) -> bool:
    """Move a torn last line of ``log`` (a crash mid-append) to ``aside``/torn-….fragment,
    under the log's lock — the one rewrite dcx does (``dcx verify --repair``, and the
    statement log's own next append). True if there was a fragment."""
    import blake3

    with file_lock(log, wait=wait, display=display):
        data = read_bytes(log)
        cut = data.rfind(b"\n") + 1
        fragment = data[cut:]
        if not fragment:
            return False
        ensure_dir(aside)
        name = f"torn-{log.stem}-{blake3.blake3(fragment).hexdigest()[:12]}.fragment"
        atomic_write(aside / name, fragment, mode=0o600)
        atomic_write(log, data[:cut])
    return True


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
