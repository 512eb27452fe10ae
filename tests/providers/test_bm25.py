"""The bm25 provider and its persistent, incremental tantivy index (SPEC §6.3)."""

from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path

import pytest

from dcx.core.clock import clock_from_env
from dcx.core.workspace import Workspace
from dcx.ops.index import index
from dcx.providers import bm25
from dcx.providers.bm25 import (
    Bm25Provider,
    ChunkRef,
    format_resource_ref,
    parse_resource_ref,
    query_terms,
)
from dcx.providers.bm25_index import index_path
from dcx.providers.bm25_indexer import indexed_paths
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


def _rows(ws: Workspace) -> dict[str, list[tuple[int, str]]]:
    """path -> [(chunk ordinal, revision)] of every live document, read with tantivy itself."""
    import tantivy

    record = json.loads(index_path(ws.index).read_text())
    index = tantivy.Index.open(str(ws.index / record["directory"]))
    searcher = index.searcher()
    out: dict[str, list[tuple[int, str]]] = {}
    for _, address in searcher.search(tantivy.Query.all_query(), 10_000).hits:
        doc = searcher.doc(address)
        out.setdefault(doc.get_first("path"), []).append(
            (doc.get_first("ordinal"), doc.get_first("revision"))
        )
    return {path: sorted(rows) for path, rows in out.items()}


def _opstamp(ws: Workspace) -> int:
    return json.loads(index_path(ws.index).read_text())["opstamp"]


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


def test_scores_are_okapi_bm25_with_k1_1_2_and_b_0_75_and_tantivy_idf(fresh_ws: Path, tree) -> None:
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
            idf = math.log(1 + (n_docs - df + 0.5) / (df + 0.5))
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
    before, stamp = _rows(ws), _opstamp(ws)
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
    # tantivy stamps each operation (a deleted term, an added document, the commit): the
    # first build was 13 additions and a commit; this run deleted note-3's chunks (one
    # term), added its one new chunk and committed, nothing else
    assert stamp == 14 and _opstamp(ws) - stamp == 3
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
    index_path(ws.index).write_bytes(b"this is not a dcx index record" * 100)
    result = _recall(ws, "quokka")
    assert (result.status, result.reason_code, result.items) == ("unavailable", "index_corrupt", ())


def test_index_of_another_schema_is_corrupt(fresh_ws: Path, tree) -> None:
    ws = _setup(fresh_ws, tree)
    index(clock=clock_from_env(), ws=ws, agent_id=None)
    record = json.loads(index_path(ws.index).read_text())
    index_path(ws.index).write_text(json.dumps({**record, "schema_version": "dcx_bm25_index_v9"}))
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
    # terms are the analyzer's, de-duplicated after it (SPEC §6.3 v4)
    assert query_terms("Café, CAFÉ; foo_bar cafe") == ["cafe", "foo", "bar"]


def test_a_term_in_every_chunk_still_matches_and_counts(fresh_ws: Path, tree) -> None:
    """No term is pruned: tantivy's IDF is positive even for a term in every chunk."""
    files = {
        f"f{i:02d}.md": " ".join(["storefront"] * (1 + i % 3) + ["pad"] * i) for i in range(24)
    }
    files["rare.md"] = "storefront storefront storefront rare"
    ws = _setup(fresh_ws, tree, files)
    index(clock=clock_from_env(), ws=ws, agent_id=None)
    common = _recall(ws, "storefront", max_results=4).items
    assert len(common) == 4 and all(i.score > 0 for i in common)
    both = _recall(ws, "rare storefront", max_results=2).items
    assert parse_resource_ref(both[0].resource_ref).path == "rare.md"
    alone = {i.resource_ref: i.score for i in _recall(ws, "rare", max_results=2).items}
    assert both[0].score > alone[both[0].resource_ref]  # the common term added its share


def test_repeated_query_terms_weigh_once(fresh_ws: Path, tree) -> None:
    ws = _setup(fresh_ws, tree)
    index(clock=clock_from_env(), ws=ws, agent_id=None)
    once = _recall(ws, "quokka catalog").items
    assert once
    assert _recall(ws, "Quokka quokka QUOKKA catalog CATALOG").items == once


def test_scope_is_a_filter_inside_the_query(fresh_ws: Path, tree) -> None:
    """The scope's own best chunks come back however many better ones lie outside it,
    at the scores the whole index gives them (one shared scorer)."""
    sources = ({"source_id": "big", "locator": "big"}, {"source_id": "small", "locator": "small"})
    ws = enable(fresh_ws, sources=sources)
    big = {f"b{i:03d}.md": "heron heron heron migration plan " + "x " * (i % 5) for i in range(200)}
    small = {"s.md": "a note that mentions a heron once among many other words here"}
    tree(fresh_ws, {"big": big, "small": small})
    index(clock=clock_from_env(), ws=ws, agent_id=None)
    scoped = _recall(ws, "heron", scope_ref="source:small", max_results=8).items
    assert [parse_resource_ref(i.resource_ref).path for i in scoped] == ["s.md"]
    everything = _recall(ws, "heron", max_results=8).items
    assert all(parse_resource_ref(i.resource_ref).source_id == "big" for i in everything)
    assert scoped[0].score < everything[-1].score
    both = _recall(ws, "heron", scope_ref="source:big,small", max_results=8).items
    assert both == everything  # a scope naming every indexed source filters nothing


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


def test_recall_creates_and_writes_no_file(fresh_ws: Path, tree) -> None:
    """SPEC §6.7: tantivy's reader flocks ``.tantivy-meta.lock``, which the writer leaves;
    without it the index is refused rather than have a reader create it."""
    ws = _setup(fresh_ws, tree)
    index(clock=clock_from_env(), ws=ws, agent_id=None)

    def state() -> dict[str, tuple[bytes, int]]:
        return {
            str(p.relative_to(fresh_ws)): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted((fresh_ws / ".decision-context").rglob("*"))
            if p.is_file()
        }

    before = state()
    assert _recall(ws, "quokka").items and _recall(ws, "quokka", scope_ref="source:docs").items
    assert state() == before
    # the readers above are gone before the lock file is: a live tantivy reader's watcher
    # thread takes the meta lock again when it polls, and would make the file anew
    import gc

    gc.collect()
    directory = ws.index / json.loads(index_path(ws.index).read_text())["directory"]
    (directory / ".tantivy-meta.lock").unlink()
    before = state()
    assert _recall(ws, "quokka").reason_code == "index_corrupt"
    assert state() == before


def test_a_damaged_segment_is_index_corrupt(fresh_ws: Path, tree) -> None:
    ws = _setup(fresh_ws, tree)
    index(clock=clock_from_env(), ws=ws, agent_id=None)
    directory = ws.index / json.loads(index_path(ws.index).read_text())["directory"]
    (directory / "meta.json").write_text("{not json")
    result = _recall(ws, "quokka")
    assert (result.status, result.reason_code) == ("unavailable", "index_corrupt")


def test_a_crash_between_commit_and_file_list_rebuilds_whole(fresh_ws: Path, tree) -> None:
    ws = _setup(fresh_ws, tree)
    index(clock=clock_from_env(), ws=ws, agent_id=None)
    record = json.loads(index_path(ws.index).read_text())
    listed = ws.index / record["directory"] / "dcx-files.json"
    body = json.loads(listed.read_text())
    listed.write_text(json.dumps({**body, "opstamp": body["opstamp"] + 7}))  # out of step
    again = index(clock=clock_from_env(), ws=ws, agent_id=None).data
    assert again["created"] is True and again["files_indexed"] == 13
    assert _recall(ws, "quokka").items[0].content == PLANTED.strip()
    dirs = [p.name for p in ws.index.iterdir() if p.is_dir()]
    assert dirs == [json.loads(index_path(ws.index).read_text())["directory"]]


def test_indexed_paths_lists_every_file_the_index_holds(fresh_ws: Path, tree) -> None:
    files = {"a.md": "words here", "sub/b.md": "more words", "blob.bin": b"\xff\xfe\x00"}
    ws = _setup(fresh_ws, tree, files)
    assert indexed_paths(ws) == []
    index(clock=clock_from_env(), ws=ws, agent_id=None)
    assert indexed_paths(ws) == [("docs", "a.md"), ("docs", "blob.bin"), ("docs", "sub/b.md")]


def test_find_by_content_names_the_file_of_a_chunk(fresh_ws: Path, tree) -> None:
    ws = _setup(fresh_ws, tree)
    index(clock=clock_from_env(), ws=ws, agent_id=None)
    assert bm25.find_by_content(ws, PLANTED, 2)[0] == ("docs", "drills/quokka.md")
