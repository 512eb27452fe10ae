"""Each documented exit code: the code, one line naming the field or file, no traceback."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.support.cli import run_dcx


def _one_error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line]
    assert lines and lines[0].startswith("error: ")
    assert all(line.startswith(("error: ", "hint: ")) for line in lines)
    assert "Traceback" not in stderr
    return lines[0]


def test_exit_0(dcx, example: Path) -> None:
    assert dcx("-C", str(example), "status").exit_code == 0


def test_exit_1_refused(dcx, example: Path) -> None:
    ref = dcx("-C", str(example), "sources", "--write", "--format", "json").json()["data"][
        "manifest"
    ]["manifest_ref"]
    path = example / ".decision-context" / "packets" / "manifest" / f"{ref}.json"
    path.chmod(0o644)
    path.write_text(path.read_text().replace("p0", "p1"))
    result = dcx("-C", str(example), "show", ref)
    assert result.exit_code == 1
    assert f"packets/manifest/{ref}.json" in _one_error_line(result.stderr)


def test_exit_2_bad_flag(dcx, example: Path) -> None:
    result = dcx("-C", str(example), "status", "--format", "yaml")
    assert result.exit_code == 2
    assert "--format" in _one_error_line(result.stderr)


def test_exit_2_json_envelope(dcx, example: Path, snapshot_json) -> None:
    result = dcx("-C", str(example), "show", "zzzz", "--format", "json")
    assert result.exit_code == 2
    envelope = json.loads(result.stdout)
    assert envelope == snapshot_json
    assert set(envelope) == {"schema_version", "ok", "error"}
    assert set(envelope["error"]) >= {"code", "message", "hint"}


def test_exit_3_no_workspace(dcx, tmp_path: Path) -> None:
    result = dcx("-C", str(tmp_path), "status")
    assert result.exit_code == 3
    assert "no .decision-context/" in _one_error_line(result.stderr)
    assert "dcx init" in result.stderr


def test_exit_4_lock_busy(example: Path) -> None:
    events = example / ".decision-context" / "events.jsonl"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import time\nfrom pathlib import Path\nfrom dcx.core.fsutil import file_lock\n"
            f"with file_lock(Path({str(events)!r})):\n print('held', flush=True)\n time.sleep(30)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        events.write_bytes(b'{"a":')
        result = run_dcx("-C", str(example), "verify", "--repair", "--wait", "0.2")
        assert result.exit_code == 4
        assert "events.jsonl.lock" in _one_error_line(result.stderr)
    finally:
        holder.kill()
        holder.wait()


def test_exit_5_internal_error_is_logged_not_printed(dcx, example: Path, monkeypatch) -> None:
    import dcx.ops.status as status_mod

    def boom(**_kw):
        raise RuntimeError("secret-canary-value")

    monkeypatch.setattr(status_mod, "status", boom)
    result = dcx("-C", str(example), "status")
    assert result.exit_code == 5
    line = _one_error_line(result.stderr)
    assert "RuntimeError" in line and "secret-canary-value" not in result.stderr
    logs = list((example / ".decision-context" / "private" / "log").glob("internal-*.log"))
    assert len(logs) == 1 and "secret-canary-value" in logs[0].read_text()
    verbose = dcx("-C", str(example), "-v", "status")
    assert verbose.exit_code == 5 and "Traceback" in verbose.stderr


def test_exit_130_interrupted(example: Path) -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import time, dcx.ops.status as s\n"
            "def slow(**kw):\n    time.sleep(30)\n"
            "s.status = slow\n"
            f"from dcx.cli import main\nmain(['-C', {str(example)!r}, 'status'])\n",
        ],
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(1.5)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=10)
    assert proc.returncode == 130
    assert "Traceback" not in err and "interrupted" in err
