from __future__ import annotations

import sys
import time

from dcx.core.process import run_bounded

PY = sys.executable


def _running(pid: int) -> bool:
    """Alive and not a zombie (an orphan may wait for a reaper that never comes here)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


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
        f"p = subprocess.Popen([{PY!r}, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pidfile)!r}, 'w').write(str(p.pid))\n"
        "time.sleep(60)\n"
    )
    started = time.monotonic()
    out = run_bounded([PY, "-c", script], timeout=1.0)
    assert out.status == "timeout"
    assert time.monotonic() - started < 1.0 + 1.0 + 1.5
    grandchild = int(pidfile.read_text())
    time.sleep(0.2)
    assert not _running(grandchild)


def test_sigterm_ignoring_child_is_killed_after_grace() -> None:
    script = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('ready', flush=True)\ntime.sleep(60)\n"
    started = time.monotonic()
    out = run_bounded([PY, "-c", script], timeout=0.5)
    assert out.status == "timeout"
    assert time.monotonic() - started < 0.5 + 1.0 + 1.5


def test_stdout_flood_is_capped() -> None:
    out = run_bounded(
        [PY, "-c", "import sys\nwhile True: sys.stdout.write('x' * 65536)"], timeout=10, cap=200_000
    )
    assert out.status == "output_too_large" and out.stdout == b""


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
    script = f"import subprocess\nsubprocess.Popen([{PY!r}, '-c', 'import time; time.sleep(30)'])\nprint('done')\n"
    started = time.monotonic()
    out = run_bounded([PY, "-c", script], timeout=10)
    assert out.ok and out.stdout == b"done\n"
    assert time.monotonic() - started < 5
