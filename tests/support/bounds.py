"""Time bounds a loaded machine cannot break.

A test that waits on something hostile (a hang, a flood, a held lock) asserts that dcx
stopped waiting *long before the hostile side would have stopped by itself*: the hostile
side lasts ``HOSTILE_SECONDS`` or more, and the wait must end within ``LOAD_SLACK``
seconds past its deadline. What the test decides on is the outcome (``scan_timeout``,
``extension_timeout``, the process group gone); the bound only says the wait was cut,
not waited out. The tight figure — deadline + 1 s of grace — is measured by the tests and
printed, with its goal, by ``bench/reliability.py`` (a speed goal lives in a bench, never
in a margin of a second or two that a busy machine eats).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

LOAD_SLACK = 30.0  # seconds past a deadline that no amount of load on a CI machine reaches
HOSTILE_SECONDS = 600  # how long a hostile helper sleeps or hangs: far beyond any bound here


def cut_short(elapsed: float, deadline: float) -> bool:
    """Whether a wait with this ``deadline`` ended well before a hostile side would have."""
    return elapsed < deadline + LOAD_SLACK


def soon(condition: Callable[[], bool], within: float = LOAD_SLACK) -> bool:
    """Whether ``condition()`` holds within ``within`` seconds (polled): for what the kernel
    finishes a moment after dcx (a killed process group vanishing, a zombie reaped)."""
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def gone(pid: int) -> bool:
    """Whether process ``pid`` no longer runs (gone, or a zombie no reaper collected yet)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state == "Z"
