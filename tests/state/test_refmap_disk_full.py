"""A full disk while the private ref map grows is ``disk_full`` naming ``private/refs.sqlite``
(SPEC §3.5 v4), not an internal error; the map keeps what it held (SQLite rolls back).

A real tmpfs of 1 MiB, filled by the test; skipped where the tests may not mount.
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from dcx.core.errors import DiskFull
from dcx.core.workspace import Workspace
from dcx.state.keys import load_key
from dcx.state.refmap import RefMinter


@pytest.fixture
def tiny_disk(tmp_path: Path):
    mount = tmp_path / "disk"
    mount.mkdir()
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)], capture_output=True
    )
    if made.returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_disk_while_minting_is_disk_full_naming_the_map(
    fresh_ws: Path, tiny_disk: Path
) -> None:
    root = tiny_disk / "goal"
    shutil.copytree(fresh_ws, root, symlinks=True)
    ws = Workspace(root)
    with RefMinter(ws, load_key(ws)) as first:
        first.change_ref("docs", "docs/kept.md")
    with (tiny_disk / "filler").open("wb", buffering=0) as filler:
        try:
            while True:
                filler.write(b"\0" * 4096)
        except OSError:
            pass  # the disk is full
    minter = RefMinter(ws, load_key(ws))
    for n in range(4000):
        minter.change_ref("docs", f"docs/{n:05d}-a-long-enough-file-name-to-need-pages.md")
    with pytest.raises(DiskFull) as full:
        minter.flush()
    assert full.value.code == "disk_full" and "private/refs.sqlite" in full.value.message
    (tiny_disk / "filler").unlink()
    conn = sqlite3.connect(ws.refs_db)
    rows = conn.execute("SELECT fields FROM refs").fetchall()
    conn.close()
    assert rows == [('["docs", "docs/kept.md"]',)], "the failed transaction left nothing behind"
