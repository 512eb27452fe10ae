from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from dcx.core.errors import LockBusy, Refused
from dcx.core.fsutil import atomic_write, file_lock, locked_append, read_lines
from tests.support.bounds import cut_short


def test_atomic_write_replaces_and_sets_mode(tmp_path: Path) -> None:
    target = tmp_path / "state" / "state.json"
    atomic_write(target, b"old")
    atomic_write(target, b"new", mode=0o600)
    assert target.read_bytes() == b"new"
    assert (target.stat().st_mode & 0o777) == 0o600
    assert [p.name for p in target.parent.iterdir()] == ["state.json"]


def test_atomic_write_failure_leaves_old_bytes_and_no_temp(tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "state" / "state.json"
    atomic_write(target, b"old")

    def boom(*_a, **_k):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        atomic_write(target, b"new")
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in target.parent.iterdir()) == ["state.json"]


def test_fault_point_kills_before_replace(tmp_path: Path) -> None:
    target = tmp_path / "state.json"
    target.write_bytes(b"old")
    code = textwrap.dedent(
        f"""
        from pathlib import Path
        from dcx.core.fsutil import atomic_write
        atomic_write(Path({str(target)!r}), b"new")
        """
    )
    env = {**os.environ, "DCX_FAULT_POINT": "atomic_write.before_replace"}
    proc = subprocess.run([sys.executable, "-c", code], env=env)
    assert proc.returncode == -9
    assert target.read_bytes() == b"old"
    # the temp file a crash leaves is skipped by readers and never blocks the next write
    atomic_write(target, b"next")
    assert target.read_bytes() == b"next"


def test_lock_timeout_is_lock_busy_naming_the_lock(tmp_path: Path) -> None:
    target = tmp_path / "cursors.json"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
            import sys, time
            from pathlib import Path
            from dcx.core.fsutil import file_lock
            with file_lock(Path({str(target)!r})):
                print("held", flush=True)
                time.sleep(600)
        """),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        with (
            pytest.raises(LockBusy) as err,
            file_lock(target, wait=0.3, display="private/cursors.json"),
        ):
            pass
        assert cut_short(time.monotonic() - started, 0.3)  # the holder keeps it 10 minutes
        assert "private/cursors.json.lock" in err.value.message
        assert err.value.exit_code == 4
    finally:
        holder.kill()
        holder.wait()
    with file_lock(target, wait=1):
        pass  # released when the holder died


def test_locked_append_is_idempotent_and_refuses_torn_tail(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    assert locked_append(log, lambda lines: b'{"n":1}') == b'{"n":1}\n'
    assert locked_append(log, lambda lines: None if lines else b"x") is None
    assert read_lines(log) == (['{"n":1}'], False)
    with log.open("ab") as handle:
        handle.write(b'{"n":2')  # a crash mid-append
    assert read_lines(log) == (['{"n":1}'], True)
    with pytest.raises(Refused, match="incomplete") as err:
        locked_append(log, lambda lines: b'{"n":3}')
    assert "verify --repair" in (err.value.hint or "")
