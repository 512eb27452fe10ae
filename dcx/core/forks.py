"""The one fork helper: parts of one job done by forked copies of this process.

A large scan (``core.sweep``) and a long ``dcx report`` split their work into parts.
``fork_map`` forks a child for every part but the first, does the first in this
process meanwhile, and collects each child's answer through a pipe (``marshal``:
values of the built-in types only). A child inherits everything loaded so far
(a stat cache, compiled checks) and costs no import.

The answer never depends on the children: a part whose child could not be forked,
failed or sent nothing readable is done again here, in order, so an error is
raised as a loop over the parts would raise it. Nothing forks where a forked child
could inherit a lock held by another thread (a process running other threads: the
MCP server, the workbench) or off Linux; the parts are then all done here.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any


def can_fork() -> bool:
    """Whether forking is safe here: Linux, and no other thread (whose locks a child would
    inherit held). Whether it pays (how many CPUs) is the caller's question."""
    return sys.platform == "linux" and threading.active_count() == 1


def fork_map(
    work: Callable[[Any], Any],
    parts: Sequence[Any],
    *,
    here: Callable[[Any], Any] | None = None,
) -> list[Any]:
    """``[here(parts[0]), work(parts[1]), ...]``: the parts after the first in forked children
    (when ``can_fork``), the first in this process meanwhile (by ``here``, default ``work``).

    ``work`` returns what ``marshal`` writes. Children never collected (this process
    failed first) are killed and reaped."""
    if not parts:
        return []
    first = here or work
    if len(parts) == 1 or not can_fork():
        return [first(parts[0]), *(work(part) for part in parts[1:])]
    children = [_fork(work, part) for part in parts[1:]]
    try:
        results = [first(parts[0])]
        for index, child in enumerate(children):
            children[index] = None  # reaped by _collect, whatever happens there
            answer = _collect(*child) if child is not None else None
            results.append(answer[0] if answer is not None else work(parts[index + 1]))
    finally:
        for child in children:
            if child is not None:
                _abandon(*child)
    return results


def _fork(work: Callable[[Any], Any], part: Any) -> tuple[int, int] | None:
    """A child doing ``work(part)``: (pid, read fd), or None when forking failed."""
    read_fd, write_fd = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_fd)
        os.close(write_fd)
        return None
    if pid == 0:  # the child: work, send, leave without running any of the parent's cleanup
        code = 1
        try:
            os.close(read_fd)
            view = memoryview(marshal.dumps(work(part)))
            while view:
                view = view[os.write(write_fd, view) :]
            code = 0
        finally:
            os._exit(code)
    os.close(write_fd)
    return pid, read_fd


def _collect(pid: int, read_fd: int) -> tuple[Any] | None:
    """The child's answer, in a 1-tuple (the child is always reaped); None when it failed."""
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
        return (marshal.loads(b"".join(chunks)),)
    except (ValueError, EOFError, TypeError):
        return None


def _abandon(pid: int, read_fd: int) -> None:
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        os.waitpid(pid, 0)
    with contextlib.suppress(OSError):
        os.close(read_fd)
