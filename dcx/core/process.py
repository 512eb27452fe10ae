"""The one subprocess boundary (SPEC §6.5), shared by extensions, plugin source
adapters and the OpenViking ``ov`` CLI.

- argv without a shell;
- an allow-listed environment: PATH, HOME, LANG, LC_*, TMPDIR plus names the
  caller lists — a secret in dcx's environment does not reach the child;
- its own process group (session), so the whole tree can be stopped;
- stdin, stdout and stderr capped (1,000,000 bytes by default);
- with ``spool``, stdin and stdout are anonymous in-memory files (``memfd``; a
  deleted temporary file elsewhere), stdout read once the child is done: a
  child that writes many small pieces (``git cat-file --batch`` writes twice
  per object) then costs no wake-up per piece here, and one started with
  :func:`start` runs unattended while the caller works. The child's file-size
  limit is set to the cap where the platform allows (``prlimit``), and the
  size is checked on every tick besides;
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
    return start(
        argv,
        timeout=timeout,
        stdin=stdin,
        env_allow=env_allow,
        extra_env=extra_env,
        cwd=cwd,
        cap=cap,
        spool=spool,
    ).finish()


def start(
    argv: Sequence[str],
    *,
    timeout: float,
    stdin: bytes = b"",
    env_allow: Iterable[str] = (),
    extra_env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    cap: int = OUTPUT_CAP,
    spool: bool = False,
) -> Child:
    """Start ``argv`` under every bound above; :meth:`Child.finish` waits for it and answers.

    With ``spool`` the child runs unattended until then (so a caller can work meanwhile):
    its stdin is written to its file before the start, so it never waits to be fed, and it
    writes its answer without waiting to be read. Without, ``finish`` feeds and reads the
    pipes. The deadline counts from the start.
    """
    started = time.monotonic()
    deadline = started + timeout
    if len(stdin) > cap:
        return Child(None, [], stdin, started, deadline, cap, "request_too_large")
    files: list[Any] = []
    try:
        if spool:
            files = [_spool_file(), _spool_file()]
            if stdin:
                view = memoryview(stdin)
                while view:
                    view = view[os.write(files[0].fileno(), view) :]
                os.lseek(files[0].fileno(), 0, os.SEEK_SET)
        proc = subprocess.Popen(
            list(argv),
            stdin=files[0] if spool else subprocess.PIPE,
            stdout=files[1] if spool else subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=child_env(env_allow, extra_env),
            cwd=cwd,
            start_new_session=True,
            close_fds=True,
        )
    except (OSError, ValueError):
        for spool_file in files:
            spool_file.close()
        return Child(None, [], stdin, started, deadline, cap, "spawn_failed")
    if spool:
        _limit_file_size(proc.pid, cap)
    return Child(proc, files, b"" if spool else stdin, started, deadline, cap)


class Child:
    """A child started by :func:`start`: :meth:`finish` answers once, :meth:`cancel` stops it."""

    def __init__(
        self,
        proc: subprocess.Popen[bytes] | None,
        files: list[Any],
        stdin: bytes,
        started: float,
        deadline: float,
        cap: int,
        refused: str | None = None,
    ) -> None:
        self.proc, self.files, self.stdin = proc, files, stdin
        self.started, self.deadline, self.cap = started, deadline, cap
        self._outcome: ProcessOutcome | None = None
        if refused == "request_too_large":
            self._outcome = ProcessOutcome(refused, None, b"", 0, 0.0)
        elif refused is not None:
            self._outcome = ProcessOutcome(refused, None, b"", 0, time.monotonic() - started)

    def finish(self) -> ProcessOutcome:
        if self._outcome is None:
            try:
                self._outcome = self._finish()
            finally:
                self._close_files()
        return self._outcome

    def cancel(self) -> None:
        """Stop the child (its group) unanswered, if it still runs; its files are closed."""
        if self._outcome is None:
            proc = self.proc
            if proc is not None:
                if proc.poll() is None:
                    _stop(proc)
                for stream in (proc.stdin, proc.stdout, proc.stderr):
                    if stream is not None:
                        with contextlib.suppress(OSError):
                            stream.close()
            self._outcome = ProcessOutcome("cancelled", None, b"", 0, 0.0)
            self._close_files()

    def _close_files(self) -> None:
        for spool in self.files:
            with contextlib.suppress(OSError):
                spool.close()

    def _finish(self) -> ProcessOutcome:
        proc = self.proc
        assert proc is not None
        pipes = _Pipes(proc, self.stdin, self.cap, spooled=bool(self.files))
        out_fd = self.files[1].fileno() if self.files else -1
        try:
            status = self._watch(proc, pipes, out_fd)
        finally:
            pipes.selector.close()
            if pipes.status != "exited" or proc.poll() is None:
                _stop(proc)
            else:
                _kill_group(proc, signal.SIGKILL)  # grandchildren left behind
            pipes.close()
        elapsed = time.monotonic() - self.started
        size = os.fstat(out_fd).st_size if self.files else len(pipes.stdout)
        if status == "exited" and size > self.cap:
            status = "output_too_large"
        if status != "exited":
            return ProcessOutcome(status, proc.returncode, b"", pipes.stderr_bytes, elapsed)
        answer = _read_all(out_fd, size) if self.files else bytes(pipes.stdout)
        return ProcessOutcome("exited", proc.returncode, answer, pipes.stderr_bytes, elapsed)

    def _watch(self, proc: subprocess.Popen[bytes], pipes: _Pipes, out_fd: int) -> str:
        """Feed and read the pipes until they end, the deadline or a cap; then the status."""
        # a spooling child's stdout is a file: its size is checked on every tick
        tick = SPOOL_TICK_SECONDS if out_fd >= 0 else 0.25
        exited_at: float | None = None
        while pipes.open():  # until the pipes' end: the child is gone
            now = time.monotonic()
            remaining = self.deadline - now
            if remaining <= 0:
                pipes.status = "timeout"
            elif out_fd >= 0 and os.fstat(out_fd).st_size > self.cap:
                pipes.status = "output_too_large"
            if pipes.status != "exited":
                return pipes.status
            if exited_at is None and proc.poll() is not None:
                exited_at = now
            if exited_at is not None and now - exited_at > DRAIN_SECONDS:
                break  # the child is done; a grandchild still holds the pipes
            pipes.pump(min(remaining, tick))
            if pipes.status != "exited":
                return pipes.status
        try:
            proc.wait(timeout=max(0.0, self.deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pipes.status = "timeout"
        return pipes.status


class _Pipes:
    """A child's pipes: its stdin fed from ``stdin``, its stdout kept (unless spooled to a
    file), its stderr counted and dropped; ``status`` turns ``output_too_large`` past the cap."""

    def __init__(
        self, proc: subprocess.Popen[bytes], stdin: bytes, cap: int, *, spooled: bool
    ) -> None:
        self.proc, self.cap = proc, cap
        self.stdout = bytearray()
        self.stderr_bytes = 0
        self.status = "exited"
        self.pending = memoryview(stdin)
        self.selector = selectors.DefaultSelector()
        for stream in (proc.stderr,) if spooled else (proc.stdout, proc.stderr):
            assert stream is not None
            os.set_blocking(stream.fileno(), False)
            self.selector.register(stream, selectors.EVENT_READ)
        if proc.stdin is not None:
            if self.pending:
                os.set_blocking(proc.stdin.fileno(), False)
                self.selector.register(proc.stdin, selectors.EVENT_WRITE)
            else:
                proc.stdin.close()

    def open(self) -> bool:
        return bool(self.selector.get_map())

    def pump(self, timeout: float) -> None:
        """Write or read whatever is ready within ``timeout`` seconds."""
        for key, _ in self.selector.select(timeout=timeout):
            stream: Any = key.fileobj  # one of the child's pipes
            if stream is self.proc.stdin:
                self._feed(stream)
                continue
            try:
                chunk = os.read(stream.fileno(), 65536)
            except BlockingIOError:
                continue
            if not chunk:
                self.selector.unregister(stream)
            elif stream is self.proc.stdout:
                self.stdout += chunk
                if len(self.stdout) > self.cap:
                    self.status = "output_too_large"
            else:
                self.stderr_bytes += len(chunk)  # bounded, never kept
                if self.stderr_bytes > self.cap:
                    self.status = "output_too_large"

    def _feed(self, stdin: Any) -> None:
        try:
            written = os.write(stdin.fileno(), self.pending[:65536])
            self.pending = self.pending[written:]
        except BrokenPipeError:
            self.pending = self.pending[:0]
        if not self.pending:
            self.selector.unregister(stdin)
            stdin.close()

    def close(self) -> None:
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()


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
