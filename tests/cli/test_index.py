"""``dcx index``: activation, corruption, interrupted writers, readers beside writers, the lock, progress."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

from dcx.core.workspace import Workspace
from dcx.providers.bm25_index import index_path
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
    orphan = target.parent / "bm25-0a1b2c3d4e5f"  # a build killed before its record was written
    orphan.mkdir()
    (orphan / "meta.json").write_bytes(b"left by a killed build")
    rebuilt = dcx("-C", str(example), "index", "--rebuild", "--format", "json")
    assert rebuilt.exit_code == 0 and rebuilt.json()["data"]["created"] is True
    assert _recall_json(dcx, example)["status"] == "completed"
    record = json.loads(target.read_text())
    leftovers = sorted(p.name for p in target.parent.iterdir())
    assert leftovers == sorted([record["directory"], "bm25.json", "bm25.lock"])


def _index_dir(example: Path) -> Path:
    ws = Workspace(example)
    return ws.index / json.loads(index_path(ws.index).read_text())["directory"]


# a process that opens tantivy's writer on the index, adds a document and then either
# dies without committing (argv[2] == "crash") or holds the writer until killed
_WRITER = (
    "import os, sys, time, tantivy\n"
    "from dcx.providers.bm25_index import ANALYZER, text_analyzer, tokenizer_name\n"
    "index = tantivy.Index.open(sys.argv[1])\n"
    "index.register_tokenizer(tokenizer_name(ANALYZER), text_analyzer(ANALYZER))\n"
    "w = index.writer(num_threads=1)\n"
    "doc = tantivy.Document()\n"
    "doc.add_text('text', 'roll back the catalog cache TTL ' * 50)\n"
    "w.add_document(doc)\n"
    "print('writing', flush=True)\n"
    "if sys.argv[2] == 'crash':\n"
    "    os._exit(0)\n"
    "time.sleep(30)\n"
)


def test_an_interrupted_writer_leaves_the_last_commit_and_index_goes_on(dcx, example: Path) -> None:
    assert dcx("-C", str(example), "index").exit_code == 0
    answer = _recall_json(dcx, example)
    subprocess.run([sys.executable, "-c", _WRITER, str(_index_dir(example)), "crash"], check=True)
    before = tree_bytes(example / ".decision-context")
    again = _recall_json(dcx, example)
    assert again["status"] == "completed" and again["results"] == answer["results"]
    assert tree_bytes(example / ".decision-context") == before  # the reader repaired nothing
    (example / "docs" / "new.md").write_text("a new note about the catalog cache TTL rollback\n")
    result = dcx("-C", str(example), "index", "--format", "json")
    assert result.exit_code == 0 and result.json()["data"]["files_indexed"] == 1
    assert _recall_json(dcx, example)["status"] == "completed"


def test_a_reader_never_waits_for_a_writer(dcx, example: Path) -> None:
    assert dcx("-C", str(example), "index").exit_code == 0
    answer = _recall_json(dcx, example)
    holder = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(_index_dir(example)), "hold"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "writing"
        packet = _recall_json(dcx, example, "--timeout", "1")
        assert packet["status"] == "completed" and packet["results"] == answer["results"]
    finally:
        holder.kill()
        holder.wait()


def test_index_lock_busy_is_exit_4(example: Path) -> None:
    target = Workspace(example).index / "bm25"
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
        assert result.exit_code == 4 and "bm25.lock" in result.stderr
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


def test_an_fts5_index_of_an_earlier_dcx_is_removed_and_rebuilt_said_once(dcx, example) -> None:
    import sqlite3

    index_dir = Workspace(example).index
    index_dir.mkdir(parents=True, exist_ok=True)
    old = sqlite3.connect(index_dir / "bm25.sqlite")
    old.execute("CREATE VIRTUAL TABLE chunks USING fts5(body)")
    old.execute("INSERT INTO chunks VALUES ('an index of dcx before v4')")
    old.commit()
    old.close()
    (index_dir / "bm25.sqlite.lock").touch()
    assert _recall_json(dcx, example)["reason_code"] == "index_missing"  # never read
    first = dcx("-C", str(example), "index", "--format", "json").json()
    assert first["data"]["created"] is True and first["data"]["replaced_legacy"] is True
    assert [w for w in first["warnings"] if "FTS5" in w]
    assert (
        not (index_dir / "bm25.sqlite").exists() and not (index_dir / "bm25.sqlite.lock").exists()
    )
    assert _recall_json(dcx, example)["status"] == "completed"
    second = dcx("-C", str(example), "index", "--format", "json").json()
    assert second["data"]["replaced_legacy"] is False
    assert not [w for w in second["warnings"] if "FTS5" in w]
    text = dcx("-C", str(example), "index", "--rebuild")
    assert "FTS5" not in text.stdout + text.stderr
    # for people: the run that replaces one says it in one line, the next says nothing
    (index_dir / "bm25.sqlite").write_bytes(b"an FTS5 database of dcx before v4")
    replaced = dcx("-C", str(example), "index")
    assert replaced.exit_code == 0, replaced.stderr
    said = [line for line in (replaced.stdout + replaced.stderr).splitlines() if "FTS5" in line]
    assert len(said) == 1 and "bm25.sqlite" in said[0], said
    assert not (index_dir / "bm25.sqlite").exists()
    again = dcx("-C", str(example), "index")
    assert "FTS5" not in again.stdout + again.stderr
