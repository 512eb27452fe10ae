"""The one subprocess boundary (SPEC §6.5), shared by extensions, plugin source
adapters and the OpenViking ``ov`` CLI.

- argv without a shell;
- an allow-listed environment: PATH, HOME, LANG, LC_*, TMPDIR plus names the
  caller lists — a secret in dcx's environment does not reach the child;
- its own process group (session), so the whole tree can be stopped;
- stdin, stdout and stderr capped (1,000,000 bytes by default);
- with ``spool``, stdout goes to an anonymous in-memory file (``memfd``; a
  deleted temporary file elsewhere), read once the child is done: a child
  that writes many small pieces (``git cat-file --batch`` writes twice per
  object) then costs no wake-up per piece here. The child's file-size limit
  is set to the cap where the platform allows (``prlimit``), and the size is
  checked on every tick besides;
- at the deadline: SIGTERM to the group, 1 s grace, SIGKILL to the group
  (grandchildren included); stragglers are killed after a normal exit too;
- stderr is read only to bound it: never parsed, never copied.

The outcome says what happened in words a receipt can reduce to a reason code.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

try:
    import resource
except ImportError:  # not on Windows
    resource = None  # type: ignore[assignment]

OUTPUT_CAP = 1_000_000
KILL_GRACE_SECONDS = 1.0
SPOOL_TICK_SECONDS = 0.05  # a spooling child's stdout size is checked at least this often
DRAIN_SECONDS = 0.2  # after the child exits, how long to keep reading its pipes
BASE_ENV = ("PATH", "HOME", "LANG", "TMPDIR")


class ProcessOutcome(NamedTuple):
    status: str  # exited | timeout | output_too_large | request_too_large | spawn_failed
    returncode: int | None
    stdout: bytes
    stderr_bytes: int
    elapsed_seconds: float

    @property
    def ok(self) -> bool:
        return self.status == "exited" and self.returncode == 0


def child_env(allow: Iterable[str] = (), extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a child sees: the base allow-list, ``LC_*``, the named extras."""
    names = set(BASE_ENV) | set(allow)
    env = {k: v for k, v in os.environ.items() if k in names or k.startswith("LC_")}
    env.update(extra or {})
    return env


def _kill_group(proc: subprocess.Popen[bytes], sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """TERM the group, wait up to the grace period, then KILL the group."""
    _kill_group(proc, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=KILL_GRACE_SECONDS)
    _kill_group(proc, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=KILL_GRACE_SECONDS)


def run_bounded(
    argv: Sequence[str],
    *,
    timeout: float,
    stdin: bytes = b"",
    env_allow: Iterable[str] = (),
    extra_env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    cap: int = OUTPUT_CAP,
    spool: bool = False,
) -> ProcessOutcome:
    """Run ``argv`` within ``timeout`` seconds under every bound above."""
    started = time.monotonic()
    if len(stdin) > cap:
        return ProcessOutcome("request_too_large", None, b"", 0, 0.0)
    if spool:
        return start_spooled(
            argv,
            timeout=timeout,
            stdin=stdin,
            env_allow=env_allow,
            extra_env=extra_env,
            cwd=cwd,
            cap=cap,
            started=started,
        ).finish()
    try:
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=child_env(env_allow, extra_env),
            cwd=cwd,
            start_new_session=True,
            close_fds=True,
        )
    except (OSError, ValueError):
        return ProcessOutcome("spawn_failed", None, b"", 0, time.monotonic() - started)

    deadline = started + timeout
    stdout = bytearray()
    stderr_bytes = 0
    status = "exited"
    pending = memoryview(stdin)
    selector = selectors.DefaultSelector()
    assert proc.stdin and proc.stdout and proc.stderr
    for stream in (proc.stdout, proc.stderr):
        os.set_blocking(stream.fileno(), False)
        selector.register(stream, selectors.EVENT_READ)
    if pending:
        os.set_blocking(proc.stdin.fileno(), False)
        selector.register(proc.stdin, selectors.EVENT_WRITE)
    else:
        proc.stdin.close()
    exited_at: float | None = None
    try:
        while selector.get_map():
            now = time.monotonic()
            remaining = deadline - now
            if remaining <= 0:
                status = "timeout"
                break
            if exited_at is None and proc.poll() is not None:
                exited_at = now
            if exited_at is not None and now - exited_at > DRAIN_SECONDS:
                break  # the child is done; a grandchild still holds the pipes
            for key, _ in selector.select(timeout=min(remaining, 0.25)):
                stream = key.fileobj  # type: ignore[assignment]  # a selector key: one of the pipes above
                if stream is proc.stdin:
                    try:
                        written = os.write(proc.stdin.fileno(), pending[:65536])
                        pending = pending[written:]
                    except BrokenPipeError:
                        pending = pending[:0]
                    if not pending:
                        selector.unregister(proc.stdin)
                        proc.stdin.close()
                    continue
                try:
                    chunk = os.read(stream.fileno(), 65536)
                except BlockingIOError:
                    continue
                if not chunk:
                    selector.unregister(stream)
                    continue
                if stream is proc.stdout:
                    stdout += chunk
                    if len(stdout) > cap:
                        status = "output_too_large"
                else:
                    stderr_bytes += len(chunk)  # bounded, never kept
                    if stderr_bytes > cap:
                        status = "output_too_large"
            if status != "exited":
                break
        if status == "exited":
            remaining = max(0.0, deadline - time.monotonic())
            try:
                proc.wait(timeout=remaining)
            except subprocess.TimeoutExpired:
                status = "timeout"
    finally:
        selector.close()
        if status != "exited" or proc.poll() is None:
            _stop(proc)
        else:
            _kill_group(proc, signal.SIGKILL)  # grandchildren left behind
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            with contextlib.suppress(OSError):
                stream.close()
    elapsed = time.monotonic() - started
    if status != "exited":
        return ProcessOutcome(status, proc.returncode, b"", stderr_bytes, elapsed)
    return ProcessOutcome("exited", proc.returncode, bytes(stdout), stderr_bytes, elapsed)


class Spooled:
    """A child started by :func:`start_spooled`; :meth:`finish` waits for it and answers."""

    def __init__(
        self,
        proc: subprocess.Popen[bytes] | None,
        files: list[Any],
        started: float,
        deadline: float,
        cap: int,
    ) -> None:
        self.proc, self.files, self.started, self.deadline, self.cap = (
            proc,
            files,
            started,
            deadline,
            cap,
        )
        self._outcome: ProcessOutcome | None = None

    def finish(self) -> ProcessOutcome:
        if self._outcome is None:
            try:
                self._outcome = self._finish()
            finally:
                for spool in self.files:
                    with contextlib.suppress(OSError):
                        spool.close()
        return self._outcome

    def cancel(self) -> None:
        """Stop the child (its group) unanswered, if it still runs; its files are closed."""
        if self._outcome is None:
            if self.proc is not None:
                if self.proc.poll() is None:
                    _stop(self.proc)
                for stream in (self.proc.stderr,):
                    with contextlib.suppress(OSError):
                        stream.close()  # type: ignore[union-attr]
            self._outcome = ProcessOutcome("cancelled", None, b"", 0, 0.0)
            for spool in self.files:
                with contextlib.suppress(OSError):
                    spool.close()

    def _finish(self) -> ProcessOutcome:
        proc, cap = self.proc, self.cap
        if proc is None:
            return ProcessOutcome("spawn_failed", None, b"", 0, time.monotonic() - self.started)
        out = self.files[1].fileno()
        stderr_bytes = 0
        status = "exited"
        assert proc.stderr is not None
        selector = selectors.DefaultSelector()
        os.set_blocking(proc.stderr.fileno(), False)
        selector.register(proc.stderr, selectors.EVENT_READ)
        exited_at: float | None = None
        try:
            while selector.get_map():  # until stderr's end: the child is gone
                now = time.monotonic()
                remaining = self.deadline - now
                if remaining <= 0:
                    status = "timeout"
                    break
                if os.fstat(out).st_size > cap:
                    status = "output_too_large"
                    break
                if exited_at is None and proc.poll() is not None:
                    exited_at = now
                if exited_at is not None and now - exited_at > DRAIN_SECONDS:
                    break  # the child is done; a grandchild still holds its stderr
                for _ in selector.select(timeout=min(remaining, SPOOL_TICK_SECONDS)):
                    try:
                        chunk = os.read(proc.stderr.fileno(), 65536)
                    except BlockingIOError:
                        continue
                    if not chunk:
                        selector.unregister(proc.stderr)
                        continue
                    stderr_bytes += len(chunk)  # bounded, never kept
                    if stderr_bytes > cap:
                        status = "output_too_large"
                if status != "exited":
                    break
            if status == "exited":
                try:
                    proc.wait(timeout=max(0.0, self.deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    status = "timeout"
        finally:
            selector.close()
            if status != "exited" or proc.poll() is None:
                _stop(proc)
            else:
                _kill_group(proc, signal.SIGKILL)  # grandchildren left behind
            with contextlib.suppress(OSError):
                proc.stderr.close()
        elapsed = time.monotonic() - self.started
        size = os.fstat(out).st_size
        if status == "exited" and size > cap:
            status = "output_too_large"
        if status != "exited":
            return ProcessOutcome(status, proc.returncode, b"", stderr_bytes, elapsed)
        return ProcessOutcome(
            "exited", proc.returncode, _read_all(out, size), stderr_bytes, elapsed
        )


def start_spooled(
    argv: Sequence[str],
    *,
    timeout: float,
    stdin: bytes = b"",
    env_allow: Iterable[str] = (),
    extra_env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    cap: int = OUTPUT_CAP,
    started: float | None = None,
) -> Spooled:
    """Start ``argv`` under the same bounds, its stdin and stdout in anonymous files; it runs
    unattended until :meth:`Spooled.finish` (so a caller can work meanwhile).

    stdin is written to its file before the start, so the child never waits on this process
    to feed it, and writes its answer without waiting to be read. The deadline counts from
    the start; the output cap is the child's file-size limit where ``prlimit`` exists (a
    write past it fails) and is checked by ``finish`` besides.
    """
    started = time.monotonic() if started is None else started
    deadline = started + timeout
    if len(stdin) > cap:
        refused = Spooled(None, [], started, deadline, cap)
        refused._outcome = ProcessOutcome("request_too_large", None, b"", 0, 0.0)
        return refused
    files: list[Any] = []
    try:
        files = [_spool_file(), _spool_file()]
        if stdin:
            view = memoryview(stdin)
            while view:
                view = view[os.write(files[0].fileno(), view) :]
            os.lseek(files[0].fileno(), 0, os.SEEK_SET)
        proc = subprocess.Popen(
            list(argv),
            stdin=files[0],
            stdout=files[1],
            stderr=subprocess.PIPE,
            env=child_env(env_allow, extra_env),
            cwd=cwd,
            start_new_session=True,
            close_fds=True,
        )
    except (OSError, ValueError):
        for spool in files:
            spool.close()
        return Spooled(None, [], started, deadline, cap)
    _limit_file_size(proc.pid, cap)
    return Spooled(proc, files, started, deadline, cap)


def _spool_file() -> Any:
    """An anonymous file: in memory on Linux (``memfd``), a deleted temporary file elsewhere."""
    memfd = getattr(os, "memfd_create", None)
    if memfd is not None:
        with contextlib.suppress(OSError):
            return os.fdopen(memfd("dcx-spool", getattr(os, "MFD_CLOEXEC", 0)), "w+b")
    import tempfile

    return tempfile.TemporaryFile()


def _limit_file_size(pid: int, cap: int) -> None:
    """The child may write at most ``cap`` + 1 bytes to a file (its spooled stdout): past that
    its write fails, and ``finish`` reports ``output_too_large``."""
    prlimit = getattr(resource, "prlimit", None) if resource is not None else None
    if prlimit is not None:
        with contextlib.suppress(OSError, ValueError):
            prlimit(pid, resource.RLIMIT_FSIZE, (cap + 1, cap + 1))


def _read_all(fd: int, size: int) -> bytes:
    """The first ``size`` bytes of the file ``fd`` (a single ``pread`` unless it answers short)."""
    data = os.pread(fd, size, 0) if size else b""
    if len(data) == size:
        return data
    parts = [data]
    got = len(data)
    while got < size:
        piece = os.pread(fd, size - got, got)
        if not piece:
            break
        parts.append(piece)
        got += len(piece)
    return b"".join(parts)
