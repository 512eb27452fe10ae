"""The one subprocess boundary (SPEC §6.5), shared by extensions, plugin source
adapters and the OpenViking ``ov`` CLI.

- argv without a shell;
- an allow-listed environment: PATH, HOME, LANG, LC_*, TMPDIR plus names the
  caller lists — a secret in dcx's environment does not reach the child;
- its own process group (session), so the whole tree can be stopped;
- stdin, stdout and stderr capped (1,000,000 bytes by default);
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
from typing import NamedTuple

OUTPUT_CAP = 1_000_000
KILL_GRACE_SECONDS = 1.0
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
) -> ProcessOutcome:
    """Run ``argv`` within ``timeout`` seconds under every bound above."""
    started = time.monotonic()
    if len(stdin) > cap:
        return ProcessOutcome("request_too_large", None, b"", 0, 0.0)
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
