"""A built-in source's current files, as the bm25 index is fed them, and single exact reads.

Expected revisions are blake3 of the bytes (SPEC §5.3) and git blob ids as git itself prints
them; the trees are real directories and real repositories.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from dcx.core.workspace import Workspace
from dcx.sources.files import CurrentFiles, listing
from dcx.state.profile import load_registry
from tests.support.git import commit, init
from tests.support.sources import binding_block, configure, file_revision, source_block
from tests.support.workspace import write_tree


def _ws(root: Path, body: str) -> tuple[Workspace, dict]:
    configure(root, body)
    ws = Workspace(root)
    return ws, {s.source_id: s for s in load_registry(ws).sources}


def test_local_listing_names_every_file_and_reads_the_bytes_it_hashes(fresh_ws: Path) -> None:
    write_tree(
        fresh_ws,
        {"docs": {"a.md": "alpha", "b.bin": b"\xff\x00", "big.md": "x" * 64, "skip.txt": "no"}},
    )
    ws, sources = _ws(
        fresh_ws,
        binding_block()
        + source_block("source:docs", '{ path = "docs", include = ["*.md", "*.bin"] }'),
    )
    got = listing(ws, sources["source:docs"], max_scan_bytes=1 << 20, max_read_bytes=32)
    assert got.unavailable is None and got.lists_skipped
    assert dict(got.revisions) == {
        "a.md": file_revision(b"alpha"),
        "b.bin": file_revision(b"\xff\x00"),
        "big.md": file_revision(b"x" * 64),
    }
    bodies = got.read(["a.md", "b.bin", "big.md"])
    assert bodies["a.md"] == (file_revision(b"alpha"), b"alpha")
    assert bodies["b.bin"] == (file_revision(b"\xff\x00"), b"\xff\x00")
    assert bodies["big.md"] == (file_revision(b"x" * 64), None)  # over max_read_bytes: not read


def test_local_listing_of_a_missing_locator_is_unavailable_with_its_reason(fresh_ws: Path) -> None:
    ws, sources = _ws(fresh_ws, binding_block() + source_block("source:gone", '"nowhere"'))
    got = listing(ws, sources["source:gone"], max_scan_bytes=1 << 20, max_read_bytes=1 << 20)
    assert got.unavailable is not None and dict(got.revisions) == {}


def test_git_listing_uses_blob_ids_and_reads_blobs(fresh_ws: Path, tmp_path: Path) -> None:
    repo = init(tmp_path / "repo")
    commit(repo, {"docs/a.md": "alpha\n", "docs/b.md": "beta\n"})
    ws, sources = _ws(
        fresh_ws,
        binding_block("git", "git")
        + source_block(
            "source:git", f'{{ repo = "{repo}", ref = "main", path = "docs" }}', provider_id="git"
        ),
    )
    got = listing(ws, sources["source:git"], max_scan_bytes=1 << 20, max_read_bytes=1 << 20)
    oids = {
        rel: subprocess.run(
            ["git", "-C", str(repo), "rev-parse", f"main:docs/{rel}"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        for rel in ("a.md", "b.md")
    }
    assert dict(got.revisions) == oids and not got.lists_skipped
    assert got.read(["b.md"]) == {"b.md": (oids["b.md"], b"beta\n")}


def test_current_files_reads_inside_the_locator_only(fresh_ws: Path) -> None:
    write_tree(
        fresh_ws,
        {"docs": {"a.md": "alpha text", "b.txt": "excluded"}, "outside.md": "not a source"},
    )
    ws, sources = _ws(
        fresh_ws,
        binding_block() + source_block("source:docs", '{ path = "docs", include = ["*.md"] }'),
    )
    files = CurrentFiles(ws, max_read_bytes=1 << 20, timeout_seconds=5)
    docs = sources["source:docs"]
    assert files.read(docs, "a.md") == (file_revision(b"alpha text"), "alpha text")
    assert files.read(docs, "b.txt") is None  # outside the include globs
    assert files.read(docs, "../outside.md") is None  # outside the locator
    assert files.read(docs, "missing.md") is None
    small = CurrentFiles(ws, max_read_bytes=4, timeout_seconds=5)
    assert small.read(docs, "a.md") is None  # over max_read_bytes: no authority
