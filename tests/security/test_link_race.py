"""A folder swapped for a link between dcx's check and its write (SPEC §3.5 v4: "holds under races").

A second process exchanges ``decisions/`` with a link to a folder outside the
goal, atomically and as fast as it can (``renameat2(RENAME_EXCHANGE)``, the
classic time-of-check/time-of-use attack), while this process appends to a
decision index and replaces a file in that folder thousands of times. Every
call either lands inside the goal (in the real folder, whichever name it has
at that instant) or is refused with ``workspace_symlink``; not one byte may
appear outside. The oracle is the outside folder's listing.
"""

from __future__ import annotations

import ctypes
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from dcx.core.errors import DcxError
from dcx.core.fsutil import atomic_write, locked_append, read_bytes

SWAPPER = textwrap.dedent(
    """
    import ctypes, os, sys
    libc = ctypes.CDLL(None, use_errno=True)
    a, b = (os.fsencode(p) for p in sys.argv[1:3])
    print("go", flush=True)
    while True:
        if libc.renameat2(-100, a, -100, b, 2) != 0:  # AT_FDCWD, RENAME_EXCHANGE
            raise SystemExit(ctypes.get_errno())
    """
)


def _has_exchange() -> bool:
    return hasattr(ctypes.CDLL(None), "renameat2")


@pytest.mark.skipif(not _has_exchange(), reason="needs renameat2 (Linux, glibc >= 2.28)")
def test_a_folder_swapped_for_a_link_never_lets_a_byte_out(tmp_path: Path) -> None:
    dc = tmp_path / "goal" / ".decision-context"
    folder = dc / "decisions"
    folder.mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "swap").symlink_to(outside)  # outside the workspace: the first write checks it
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(folder), str(tmp_path / "swap")],
        stdout=subprocess.PIPE,
        text=True,
    )
    outcomes: Counter[str] = Counter()
    try:
        assert swapper.stdout is not None and swapper.stdout.readline().strip() == "go"
        for n in range(3000):
            name = folder / f"p{n % 7}.json"
            for act in (
                lambda: locked_append(folder / "d.jsonl", lambda _lines: b'{"n": 1}\n'),
                lambda name=name: atomic_write(name, b"{}\n"),
                lambda name=name: read_bytes(name),
            ):
                try:
                    act()
                    outcomes["done"] += 1
                except DcxError as exc:
                    assert exc.code == "workspace_symlink", exc
                    outcomes["refused"] += 1
                except FileNotFoundError:
                    outcomes["missing"] += 1  # read before the first write reached that name
            if outside.exists() and any(outside.iterdir()):
                break
    finally:
        swapper.kill()
        swapper.wait()
    assert sorted(p.name for p in outside.iterdir()) == [], outcomes
    assert outcomes["done"] > 0 and outcomes["refused"] > 0, outcomes
