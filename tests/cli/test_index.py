"""``dcx index``: activation, corruption, interrupted writers, busy readers, the lock, progress."""

from __future__ import annotations

import io
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from dcx.core.workspace import Workspace
from dcx.providers.bm25_index import index_path
from tests.support.bounds import cut_short
from tests.support.cli import run_dcx
from tests.support.workspace import tree_bytes

QUERY = "roll back the catalog cache TTL"


def _recall_json(dcx, root: Path, *extra: str) -> dict:
    result = dcx(
        "-C",
        str(root),
        "recall",
        "--scope",
        "",
        "--query",
        QUERY,
        "--query-summary",
        "s",
        *extra,
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.stderr
    return result.json()["data"]


def test_index_needs_activation(dcx, fresh_ws: Path) -> None:
    result = dcx("-C", str(fresh_ws), "index")
    assert result.exit_code == 3 and "not active" in result.stderr


def test_corrupt_index_is_refused_until_rebuilt(dcx, example: Path) -> None:
    assert dcx("-C", str(example), "index").exit_code == 0
    target = index_path(Workspace(example).index)
    target.write_bytes(b"\x00garbage" * 512)
    assert _recall_json(dcx, example)["reason_code"] == "index_corrupt"
    refused = dcx("-C", str(example), "index", "--format", "json")
    assert refused.exit_code == 1 and refused.json()["error"]["code"] == "index_corrupt"
    assert "--rebuild" in refused.json()["error"]["hint"]
    (target.parent / ".bm25.sqlite.0a1b2c.tmp").write_bytes(b"left by a killed build")
    rebuilt = dcx("-C", str(example), "index", "--rebuild", "--format", "json")
    assert rebuilt.exit_code == 0 and rebuilt.json()["data"]["created"] is True
    assert _recall_json(dcx, example)["status"] == "completed"
    leftovers = [p.name for p in target.parent.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []


def test_an_interrupted_writer_is_busy_for_readers_and_repaired_by_index(
    dcx, example: Path
) -> None:
    assert dcx("-C", str(example), "index").exit_code == 0
    target = index_path(Workspace(example).index)
    writer = (
        "import os, sqlite3, sys\n"
        "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "c.execute('PRAGMA cache_size = 1')\n"
        "c.execute('BEGIN')\n"
        "c.execute('DELETE FROM chunk_files')\n"
        "c.executemany('INSERT INTO meta VALUES (?, ?)', [(f'k{i}', 'v' * 2000) for i in range(200)])\n"
        "os._exit(0)\n"  # a crash mid-transaction: the rollback journal stays behind
    )
    subprocess.run([sys.executable, "-c", writer, str(target)], check=True)
    assert Path(f"{target}-journal").exists()
    before = tree_bytes(example / ".decision-context")
    assert _recall_json(dcx, example)["reason_code"] == "index_busy"
    assert tree_bytes(example / ".decision-context") == before  # the reader did not roll it back
    assert dcx("-C", str(example), "index").exit_code == 0  # the writer does
    assert not Path(f"{target}-journal").exists()
    assert _recall_json(dcx, example)["status"] == "completed"


def test_a_reader_waits_for_a_writer_within_its_deadline(dcx, example: Path) -> None:
    assert dcx("-C", str(example), "index").exit_code == 0
    conn = sqlite3.connect(index_path(Workspace(example).index), isolation_level=None)
    conn.execute("BEGIN EXCLUSIVE")
    try:
        started = time.monotonic()
        packet = _recall_json(dcx, example, "--timeout", "1")
        assert packet["reason_code"] == "index_busy"
        assert cut_short(time.monotonic() - started, 1)  # the writer holds it until ROLLBACK
    finally:
        conn.execute("ROLLBACK")
        conn.close()


def test_index_lock_busy_is_exit_4(example: Path) -> None:
    target = index_path(Workspace(example).index)
    target.parent.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import time\nfrom pathlib import Path\nfrom dcx.core.fsutil import file_lock\n"
            f"with file_lock(Path({str(target)!r})):\n print('held', flush=True)\n time.sleep(30)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        result = run_dcx("-C", str(example), "index", "--wait", "0.2")
        assert result.exit_code == 4 and "bm25.sqlite.lock" in result.stderr
    finally:
        holder.kill()
        holder.wait()


def test_index_creates_the_key_so_recall_never_has_to(dcx, example: Path) -> None:
    key = example / ".decision-context" / "private" / "key"
    key.unlink()
    missing = dcx(
        "-C", str(example), "recall", "--scope", "", "--query", QUERY, "--query-summary", "s"
    )
    assert missing.exit_code == 3 and "dcx init" in missing.stderr and not key.exists()
    assert dcx("-C", str(example), "index").exit_code == 0 and key.exists()
    assert _recall_json(dcx, example)["status"] == "completed"


def test_progress_shows_on_a_terminal_only(monkeypatch) -> None:
    from dcx.cli import index as index_cli

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    with index_cli._progress("text", True) as tick:
        assert tick is None
    terminal = Tty()
    monkeypatch.setattr(sys, "stderr", terminal)
    with index_cli._progress("json", True) as tick:
        assert tick is None
    with index_cli._progress("text", True) as tick:
        assert tick is not None
        tick("docs", 3)
    assert "docs" in terminal.getvalue()


def test_index_text_output(dcx, example: Path) -> None:
    result = dcx("-C", str(example), "index")
    assert result.exit_code == 0
    assert "source:authority:docs" in result.stdout and "built" in result.stdout
    assert os.environ.get("HOME", "") not in result.stdout


def test_index_lists_the_files_it_cannot_search(dcx, example) -> None:
    (example / "docs" / "diagram.md").write_bytes(b"\xff\xfe not utf-8")
    (example / "docs" / "notes.md").write_text("plain text is searchable\n")
    result = dcx("-C", str(example), "index")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert "  not searchable (1):" in lines
    assert "    diagram.md  (binary)" in lines
    data = dcx("-C", str(example), "index", "--format", "json").json()["data"]
    assert data["sources"][0]["skipped"] == [{"path": "diagram.md", "why": "binary"}]
