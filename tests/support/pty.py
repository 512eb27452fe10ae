"""Run a process on a real pseudo-terminal and collect every byte it writes (terminal tests)."""

from __future__ import annotations

import os
import select
import subprocess


def read_all(leader: int, proc: subprocess.Popen, what: object) -> bytes:
    """Every byte written to the pty until the process closes it; a 60 s silence is a hang."""
    chunks = []
    while True:
        ready, _, _ = select.select([leader], [], [], 60)
        if not ready:
            proc.kill()
            raise AssertionError(f"dcx {what} hung")
        try:
            data = os.read(leader, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    return b"".join(chunks)
