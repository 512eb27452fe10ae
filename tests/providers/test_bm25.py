"""The bm25 provider and its persistent, incremental FTS5 index (SPEC §6.3)."""

from __future__ import annotations

import math
import os
import sqlite3
import time
from pathlib import Path

import pytest

from dcx.core.clock import clock_from_env
from dcx.core.workspace import Workspace
from dcx.ops.index import index
from dcx.providers import bm25, bm25_search
from dcx.providers.bm25 import (
    Bm25Provider,
    ChunkRef,
    format_resource_ref,
    parse_resource_ref,
    query_terms,
)
from dcx.providers.bm25_index import index_path
from tests.support.recall import enable, request
from tests.support.sources import file_revision

FILLER = {
    f"note-{i}.md": f"# Note {i}\n\nRoutine weekly status about the storefront team and catalog reviews {i}.\n"
    for i in range(12)
}
PLANTED = (
    "# Quokka failover drill\n\nThe marsupial-themed failover drill rotates the zebrafish shard "
    "before the quarterly catalog freeze.\n"
)


def _setup(root: Path, tree, files: dict[str, str | bytes] | None = None, **enable_kw) -> Workspace:
    ws = enable(root, **enable_kw)
    tree(root, {"docs": files if files is not None else {**FILLER, "drills/quokka.md": PLANTED}})
    return ws


def _recall(ws: Workspace, query: str, **kw) -> object:
    deadline = time.monotonic() + 10
    return Bm25Provider(ws).retrieve(request(query=query, **kw), deadline=deadline)


def _rows(ws: Workspace) -> dict[str, list[int]]:
    conn = sqlite3.connect(index_path(ws.index))
    try:
        rows = conn.execute(
            "SELECT f.path, cf.rowid FROM chunk_files cf JOIN files f ON f.fid = cf.fid ORDER BY cf.rowid"
        ).fetchall()
    finally:
        conn.close()
    out: dict[str, list[int]] = {}
    for path, rowid in rows:
        out.setdefault(path, []).append(rowid)
    return out


def test_distinctive_query_returns_the_planted_passage_first(fresh_ws: Path, tree) -> None:
    ws = _setup(fresh_ws, tree)
    index(clock=clock_from_env(), ws=ws, agent_id=None)
    result = _recall(ws, "quokka failover zebrafish drill")
    assert result.status == "completed" and result.items
    top = result.items[0]
    assert top.content == PLANTED.strip()
    assert top.summary == "Local lexical match in docs"
    assert all(a.score >= b.score for a, b in zip(result.items, result.items[1:], strict=False))
    ref = parse_resource_ref(top.resource_ref)
    assert ref == ChunkRef("docs", "drills/quokka.md", 0, file_revision(PLANTED.encode()))


def test_unanswerable_query_is_completed_with_no_items(fresh_ws: Path, tree) -> None:
    ws = _setup(fresh_ws, tree)
    index(clock=clock_from_env(), ws=ws, agent_id=None)
    result = _recall(ws, "xylophone platypus kumquat")
    assert (result.status, result.reason_code, result.items, result.search_performed) == (
        "completed",
        None,
        (),
        True,
    )


def test_scores_are_okapi_bm25_with_k1_1_2_and_b_0_75(fresh_ws: Path, tree) -> None:
    docs = {
        "a.md": "apple banana cherry",
        "b.md": "apple apple durian elderberry fig grape",
        "c.md": "kiwi lemon",
        "d.md": "mango nectarine orange papaya",
        "e.md": "quince raspberry",
        "f.md": "strawberry tangerine",
    }
    ws = _setup(fresh_ws, tree, docs)
    index(clock=clock_from_env(), ws=ws, agent_id=None)
    result = _recall(ws, "apple durian", max_results=8)
    tokens = {name: text.split() for name, text in docs.items()}
    n_docs, avgdl = len(docs), sum(len(t) for t in tokens.values()) / len(docs)

    def bm25_score(doc: list[str]) -> float:
        total = 0.0
        for term in ("apple", "durian"):
            df = sum(term in t for t in tokens.values())
            idf = max(math.log((n_docs - df + 0.5) / (df + 0.5)), 1e-6)
            tf = doc.count(term)
            total += idf * tf * 2.2 / (tf + 1.2 * (1 - 0.75 + 0.75 * len(doc) / avgdl))
        return total

    got = {parse_resource_ref(i.resource_ref).path: i.score for i in result.items}
    assert set(got) == {"a.md", "b.md"}
    for name, score in got.items():
        assert score == pytest.approx(bm25_score(tokens[name]), abs=2e-6)
    assert [parse_resource_ref(i.resource_ref).path for i in result.items] == ["b.md", "a.md"]


def test_editing_one_file_reindexes_only_that_file(fresh_ws: Path, tree) -> None:
    ws = _setup(fresh_ws, tree)
    past = time.time() - 3600
    for path in (fresh_ws / "docs").rglob("*.md"):
        os.utime(path, (past, past))  # older than the stat cache: the cache may answer for them
    first = index(clock=clock_from_env(), ws=ws, agent_id=None).data
    assert first["created"] and first["files_indexed"] == 13
    before = _rows(ws)
    (fresh_ws / "docs" / "note-3.md").write_text(
        "# Note 3\n\nRewritten: the pelican runbook moved.\n"
    )
    second = index(clock=clock_from_env(), ws=ws, agent_id=None).data
    row = second["sources"][0]
    assert (second["created"], row["files_indexed"], row["files_hashed"], row["files_removed"]) == (
        False,
        1,
        1,
        0,
    )
    after = _rows(ws)
    assert {p: r for p, r in after.items() if p != "note-3.md"} == {
        p: r for p, r in before.items() if p != "note-3.md"
    }
    assert after["note-3.md"] != before["note-3.md"]
    assert _recall(ws, "pelican").items[0].content.endswith("the pelican runbook moved.")
    third = index(clock=clock_from_env(), ws=ws, agent_id=None).data["sources"][0]
    assert (
        third["files_indexed"] == 0
    )  # (note-3 may be re-hashed once more under the racy-git rule)
    assert third["files_hashed"] <= 1


def test_deleted_files_and_dropped_sources_leave_the_index(fresh_ws: Path, tree) -> None:
    ws = _setup(fresh_ws, tree)
    index(clock=clock_from_env(), ws=ws, agent_id=None)
    (fresh_ws / "docs" / "drills" / "quokka.md").unlink()
    report = index(clock=clock_from_env(), ws=ws, agent_id=None).data
    assert report["files_removed"] == 1
    assert _recall(ws, "quokka").items == ()
    enable(
        fresh_ws, sources=({"source_id": "docs", "locator": "docs", "exact_read_policy": "never"},)
    )
    report = index(clock=clock_from_env(), ws=ws, agent_id=None).data
    assert (
        report["sources"][0]["status"] == "skipped"
        and report["sources"][0]["reason_code"] == "exact_read_disabled"
    )
    assert report["chunk_count"] == 0 and _rows(ws) == {}


def test_binary_and_oversize_files_are_recorded_not_indexed(fresh_ws: Path, tree) -> None:
    files = {
        "text.md": "plain words here",
        "blob.bin": b"\xff\xfe\x00binary",
        "big.md": "huge " * 400,
    }
    ws = _setup(fresh_ws, tree, files, extra="[bounds]\nmax_read_bytes = 1000")
    row = index(clock=clock_from_env(), ws=ws, agent_id=None).data["sources"][0]
    assert (row["files"], row["files_indexed"], row["skipped_binary"], row["skipped_oversize"]) == (
        3,
        1,
        1,
        1,
    )
    assert _recall(ws, "huge").items == ()
    again = index(clock=clock_from_env(), ws=ws, agent_id=None).data["sources"][0]
    assert again["files_indexed"] == 0  # recorded by revision: not re-read


def test_scope_selects_sources(fresh_ws: Path, tree) -> None:
    sources = (
        {"source_id": "source:docs", "locator": "docs"},
        {"source_id": "notes", "locator": "notes"},
    )
    ws = enable(fresh_ws, sources=sources)
    tree(
        fresh_ws,
        {"docs": {"a.md": "heron migration plan"}, "notes": {"b.md": "heron sighting log"}},
    )
    index(clock=clock_from_env(), ws=ws, agent_id=None)

    def sources_of(scope: str) -> set[str]:
        return {
            parse_resource_ref(i.resource_ref).source_id
            for i in _recall(ws, "heron", scope_ref=scope).items
        }

    assert sources_of("") == {"source:docs", "notes"}
    assert sources_of("source:notes") == {"notes"}
    assert sources_of("source:docs") == {"source:docs"}  # the id itself begins with source:
    assert sources_of("source:source:docs,notes") == {"source:docs", "notes"}
    assert _recall(ws, "heron", scope_ref="source:nope").reason_code == "scope_source_not_indexed"
    assert _recall(ws, "heron", scope_ref="viking://x").reason_code == "provider_scope_unsupported"


def test_missing_and_corrupt_index_degrade_to_unavailable(fresh_ws: Path, tree) -> None:
    ws = _setup(fresh_ws, tree)
    assert _recall(ws, "quokka").reason_code == "index_missing"
    index(clock=clock_from_env(), ws=ws, agent_id=None)
    index_path(ws.index).write_bytes(b"this is not an sqlite database" * 100)
    result = _recall(ws, "quokka")
    assert (result.status, result.reason_code, result.items) == ("unavailable", "index_corrupt", ())


def test_index_of_another_schema_is_corrupt(fresh_ws: Path, tree) -> None:
    ws = _setup(fresh_ws, tree)
    index(clock=clock_from_env(), ws=ws, agent_id=None)
    conn = sqlite3.connect(index_path(ws.index))
    conn.execute("UPDATE meta SET value = 'dcx_bm25_index_v9' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    assert _recall(ws, "quokka").reason_code == "index_corrupt"


def test_query_syntax_never_reaches_match(fresh_ws: Path, tree) -> None:
    ws = _setup(fresh_ws, tree)
    index(clock=clock_from_env(), ws=ws, agent_id=None)
    for query in [
        'quokka" OR NEAR(',
        "quokka*",
        "-quokka",
        "^quokka AND",
        "col:quokka",
        '"""',
        "(((",
        "!!!",
    ]:
        result = _recall(ws, query)
        assert result.status == "completed", query
    assert _recall(ws, '"quokka" AND NOT drill').items  # terms are OR-ed, never operators


def test_diacritics_and_case_fold(fresh_ws: Path, tree) -> None:
    ws = _setup(fresh_ws, tree, {"a.md": "Le CAFÉ de la gare sert un crème brûlée"})
    index(clock=clock_from_env(), ws=ws, agent_id=None)
    assert _recall(ws, "cafe creme brulee").items
    assert query_terms("Café, CAFÉ; foo_bar") == ["Café", "CAFÉ", "foo", "bar"]


def test_near_zero_idf_terms_are_scored_not_dropped(fresh_ws: Path, tree, monkeypatch) -> None:
    """A term in half the index is kept out of the SQL (large indexes) but still scored and matched."""
    files = {
        f"f{i:02d}.md": " ".join(
            ["storefront"] * (1 + i % 3)
            + ["mid"] * (i < 8) * (1 + i % 4)
            + ["rare"] * (i in (3, 11))
            + ["pad"] * i
            + ["Café"] * (i % 2) * (1 + i % 5)
        )
        for i in range(24)
    }
    ws = _setup(fresh_ws, tree, files)
    index(clock=clock_from_env(), ws=ws, agent_id=None)
    queries = [
        (q, n)
        for q in (
            "storefront",
            "storefront mid",
            "mid storefront rare",
            "rare storefront",
            "cafe mid",
            "mid CAFÉ rare",
        )
        for n in (1, 2, 4)
    ]
    plain = {(q, n): _recall(ws, q, max_results=n).items for q, n in queries}
    assert (
        len(plain[("storefront", 4)]) == 4
    )  # in every chunk: FTS5 floors its IDF, it still matches
    monkeypatch.setattr(
        bm25_search, "WEAK_MIN_CHUNKS", 1
    )  # take the weak-term path in this small index
    statements: list[str] = []
    real = bm25_search.search

    def traced(conn, *args, **kwargs):
        conn.set_trace_callback(statements.append)
        return real(conn, *args, **kwargs)

    monkeypatch.setattr(bm25, "search", traced)
    scored_beside = 0
    for (query, n), items in plain.items():
        statements.clear()
        assert _recall(ws, query, max_results=n).items == items, (query, n)
        scored_beside += any(
            "chunks_docsize" in s for s in statements
        )  # the weak share's row lengths
    assert (
        scored_beside >= 3
    )  # (when the strong terms cannot fill the limit, FTS5 ranks every match)


def test_a_passed_deadline_interrupts_the_search(fresh_ws: Path, tree) -> None:
    files = {
        f"f{i}.md": "\n\n".join(f"alpha beta gamma {i} {j}" for j in range(20)) for i in range(60)
    }
    ws = _setup(fresh_ws, tree, files)
    index(clock=clock_from_env(), ws=ws, agent_id=None)
    result = Bm25Provider(ws).retrieve(
        request(query="alpha beta gamma"), deadline=time.monotonic() - 1
    )
    assert (result.status, result.reason_code) == ("unavailable", "provider_search_timeout")


def test_result_limit_and_cap(fresh_ws: Path, tree) -> None:
    ws = _setup(fresh_ws, tree)
    index(clock=clock_from_env(), ws=ws, agent_id=None)
    result = _recall(ws, "catalog", max_results=2)
    assert len(result.items) == 2 and result.result_cap_applied
    few = _recall(ws, "quokka", max_results=8)
    assert len(few.items) == 1 and not few.result_cap_applied


def test_resource_ref_round_trips_and_rejects_others() -> None:
    ref = ChunkRef("source:authority:docs", "a/b c/d|e.md", 7, "ab" * 32)
    assert parse_resource_ref(format_resource_ref(ref)) == ref
    for bad in (
        "bm25:docs/zz/1/a.md",
        "bm25:docs/" + "ab" * 32 + "/x/a.md",
        "other:1",
        "bm25:docs",
    ):
        assert parse_resource_ref(bad) is None
