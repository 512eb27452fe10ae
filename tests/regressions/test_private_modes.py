"""Issue 11 §3: every private file is 0600 and every private directory 0700, whatever the umask."""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

from tests.support.cycle import run_cycle


def _loose(private: Path) -> list[str]:
    bad = []
    for path in [private, *private.rglob("*")]:
        mode = stat.S_IMODE(path.lstat().st_mode)
        if path.is_symlink():
            continue
        if path.is_dir() and mode != 0o700:
            bad.append(f"{path.relative_to(private)}/ {oct(mode)}")
        elif path.is_file() and mode & 0o077:
            bad.append(f"{path.relative_to(private)} {oct(mode)}")
    return bad


def test_private_state_of_a_full_cycle_is_owner_only(example: Path) -> None:
    old = os.umask(0o022)
    try:
        run_cycle(example)
    finally:
        os.umask(old)
    private = example / ".decision-context" / "private"
    assert (private / "refs.sqlite").exists()
    assert _loose(private) == []


def test_sqlite_journal_is_owner_only(example: Path) -> None:
    """A journal sqlite creates while a write is open takes the database's mode: hold one open and look."""
    old = os.umask(0o022)
    try:
        run_cycle(example)
        db = example / ".decision-context" / "private" / "refs.sqlite"
        con = sqlite3.connect(db)
        con.execute("BEGIN IMMEDIATE")
        con.execute("CREATE TABLE IF NOT EXISTS probe(x)")
        journals = [p for p in db.parent.iterdir() if p.name.startswith("refs.sqlite-")]
        modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in journals}
        con.rollback()
        con.close()
    finally:
        os.umask(old)
    assert journals and all(mode & 0o077 == 0 for mode in modes.values()), modes
