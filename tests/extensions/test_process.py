from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from dcx.core.process import run_bounded, start
from tests.support.bounds import HOSTILE_SECONDS, cut_short, gone, soon

PY = sys.executable


def test_echo_round_trip() -> None:
    out = run_bounded(
        [PY, "-c", "import sys; sys.stdout.write(sys.stdin.read().upper())"],
        timeout=10,
        stdin=b"hello",
    )
    assert out.ok and out.stdout == b"HELLO"


def test_timeout_kills_child_and_grandchild(tmp_path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    script = (
        "import subprocess, sys, time\n"
        f"p = subprocess.Popen([{PY!r}, '-c', 'import time; time.sleep({HOSTILE_SECONDS})'])\n"
        f"open({str(pidfile)!r}, 'w').write(str(p.pid))\n"
        f"time.sleep({HOSTILE_SECONDS})\n"
    )
    started = time.monotonic()
    out = run_bounded([PY, "-c", script], timeout=1.0)
    assert out.status == "timeout"
    assert cut_short(time.monotonic() - started, 1.0)
    grandchild = int(pidfile.read_text())
    assert soon(lambda: gone(grandchild))


def test_sigterm_ignoring_child_is_killed_after_grace() -> None:
    script = (
        "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('ready', flush=True)\n"
        + f"time.sleep({HOSTILE_SECONDS})\n"
    )
    started = time.monotonic()
    out = run_bounded([PY, "-c", script], timeout=0.5)
    assert out.status == "timeout"
    assert cut_short(time.monotonic() - started, 0.5)


def test_stdout_flood_is_capped() -> None:
    started = time.monotonic()
    out = run_bounded(
        [PY, "-c", "import sys\nwhile True: sys.stdout.write('x' * 65536)"],
        timeout=HOSTILE_SECONDS,
        cap=200_000,
    )
    assert out.status == "output_too_large" and out.stdout == b""
    assert cut_short(time.monotonic() - started, 0)  # the cap stopped it, not the deadline


def test_stderr_is_bounded_and_never_kept() -> None:
    out = run_bounded(
        [PY, "-c", "import sys; sys.stderr.write('CANARY-ERR'); print('ok')"], timeout=10
    )
    assert out.ok and out.stdout == b"ok\n" and out.stderr_bytes == len("CANARY-ERR")
    assert b"CANARY" not in out.stdout


def test_environment_is_allow_listed(monkeypatch) -> None:
    monkeypatch.setenv("DCX_TEST_SECRET", "s3cret-canary")
    monkeypatch.setenv("NAMED_EXTRA", "visible")
    code = "import os, json; print(json.dumps(dict(os.environ)))"
    import json

    hidden = json.loads(run_bounded([PY, "-c", code], timeout=10).stdout)
    assert "DCX_TEST_SECRET" not in hidden and "NAMED_EXTRA" not in hidden
    shown = json.loads(run_bounded([PY, "-c", code], timeout=10, env_allow=["NAMED_EXTRA"]).stdout)
    assert shown["NAMED_EXTRA"] == "visible" and "PATH" in shown


def test_request_cap_and_spawn_failure(tmp_path) -> None:
    assert (
        run_bounded([PY, "-c", "pass"], timeout=5, stdin=b"x" * 11, cap=10).status
        == "request_too_large"
    )
    assert run_bounded([str(tmp_path / "missing")], timeout=5).status == "spawn_failed"


def test_nonzero_exit_is_reported() -> None:
    out = run_bounded([PY, "-c", "raise SystemExit(3)"], timeout=5)
    assert out.status == "exited" and out.returncode == 3 and not out.ok


def test_background_grandchild_does_not_hold_us_to_the_deadline() -> None:
    script = f"import subprocess\nsubprocess.Popen([{PY!r}, '-c', 'import time; time.sleep({HOSTILE_SECONDS})'])\nprint('done')\n"
    started = time.monotonic()
    out = run_bounded([PY, "-c", script], timeout=HOSTILE_SECONDS)
    assert out.ok and out.stdout == b"done\n"
    assert cut_short(time.monotonic() - started, 0)  # not the grandchild's sleep


# -- spooled stdin/stdout (large answers: git trees and blobs) ----------------------------
_SPOOL_CASES = [
    ("import sys; sys.stdout.write(sys.stdin.read().upper())", b"hello"),
    (
        "import sys\nfor i in range(20000): sys.stdout.write(f'{i}\\n'); sys.stdout.flush()",
        b"",
    ),  # many small writes
    (
        "import sys; sys.stdout.buffer.write(sys.stdin.buffer.read()[::-1])",
        bytes(range(256)) * 4096,
    ),
    ("import sys; sys.stderr.write('noise'); sys.exit(3)", b""),
]


@pytest.mark.parametrize(("script", "stdin"), _SPOOL_CASES)
def test_spooled_answers_as_the_pipe_does(script: str, stdin: bytes) -> None:
    """Differential: the spooled run gives the piped run's status, exit code, stdout, stderr count."""
    piped = run_bounded([PY, "-c", script], timeout=20, stdin=stdin, cap=10_000_000)
    spooled = run_bounded([PY, "-c", script], timeout=20, stdin=stdin, cap=10_000_000, spool=True)
    assert (spooled.status, spooled.returncode, spooled.stdout, spooled.stderr_bytes) == (
        piped.status,
        piped.returncode,
        piped.stdout,
        piped.stderr_bytes,
    )


def test_spooled_flood_is_capped() -> None:
    started = time.monotonic()
    out = run_bounded(
        [PY, "-c", "import sys\nwhile True: sys.stdout.write('x' * 65536)"],
        timeout=HOSTILE_SECONDS,
        cap=200_000,
        spool=True,
    )
    assert out.status == "output_too_large" and out.stdout == b""
    assert cut_short(time.monotonic() - started, 0)  # the cap stopped it, not the deadline


def test_spooled_timeout_and_refused_request() -> None:
    out = run_bounded([PY, "-c", "import time; time.sleep(60)"], timeout=0.5, spool=True)
    assert out.status == "timeout" and out.stdout == b""
    big = run_bounded([PY, "-c", "pass"], timeout=5, stdin=b"x" * 101, cap=100, spool=True)
    assert big.status == "request_too_large"
    missing = run_bounded(["/nonexistent/dcx-test-binary"], timeout=5, spool=True)
    assert missing.status == "spawn_failed"


def test_started_child_runs_unattended_until_finish() -> None:
    """The caller may work while the child runs: it neither waits to be fed nor to be read."""
    script = "import sys; data = sys.stdin.buffer.read(); sys.stdout.buffer.write(data * 4)"
    child = start([PY, "-c", script], timeout=20, stdin=b"y" * 300_000, cap=2_000_000, spool=True)
    time.sleep(0.5)  # the child has finished meanwhile (a pipe of 64 KiB would have stalled it)
    out = child.finish()
    assert out.ok and out.stdout == b"y" * 1_200_000
    assert child.finish() is out  # answered once


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_cancel_stops_the_whole_group_and_answers_cancelled(tmp_path: Path) -> None:
    """A started child and the grandchild it spawned are both gone after ``cancel``."""
    marker = tmp_path / "grandchild.pid"
    script = (
        "import subprocess, sys, time\n"
        f"child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep({HOSTILE_SECONDS})'])\n"
        f"open({str(marker)!r}, 'w').write(str(child.pid))\n"
        f"time.sleep({HOSTILE_SECONDS})\n"
    )
    for spool in (False, True):
        marker.unlink(missing_ok=True)
        child = start([PY, "-c", script], timeout=HOSTILE_SECONDS, spool=spool)
        assert soon(lambda: marker.exists() and bool(marker.read_text())), "no grandchild"
        grandchild = int(marker.read_text())
        child.cancel()
        assert child.finish().status == "cancelled"
        assert child.proc is not None and child.proc.poll() is not None
        assert soon(lambda: gone(grandchild)), "the grandchild outlived cancel"  # noqa: B023


def test_a_started_piped_child_answers_as_run_bounded() -> None:
    script = "import sys; sys.stdout.write(sys.stdin.read()[::-1])"
    started = start([PY, "-c", script], timeout=20, stdin=b"abc" * 40_000)
    ran = run_bounded([PY, "-c", script], timeout=20, stdin=b"abc" * 40_000)
    out = started.finish()
    assert (out.status, out.returncode, out.stdout) == (ran.status, ran.returncode, ran.stdout)
    assert out.stdout == (b"abc" * 40_000)[::-1]
