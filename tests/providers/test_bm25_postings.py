"""The index's own posting lists, and the search over them, against FTS5 itself.

Oracles, none of them dcx's code:

- FTS5's own view of the index: ``fts5vocab`` (``instance``) gives every
  (term, row) and how often the term occurs there; ``chunks_docsize`` each
  row's token count; the FTS5 table's ``sid`` column each row's source. The
  ``postings`` rows must say exactly that, after a build and after updates.
- A from-scratch build of the same files: an incrementally updated index must
  hold the same lists and term statistics (rows matched by source, path and
  chunk ordinal, since an update gives changed files new rowids).
- FTS5's ``ORDER BY bm25(chunks), rowid`` over every match, filtered to the
  scope: the search's ids, order and scores must equal it to the last bit.

The corpus spans several 4096-row blocks (and more after updates), has terms in
30-95% of the rows, repeated terms, one-row terms, non-ASCII text (counted by
FTS5 at index time) and a source holding 1% of the rows.
Knob: ``DCX_HYPOTHESIS_PROFILE=deep`` runs more seeds and queries.
"""

from __future__ import annotations

import os
import random
import sqlite3
import time
from collections import Counter
from pathlib import Path

import pytest

from dcx.core.clock import clock_from_env
from dcx.ops.index import index
from dcx.providers.bm25 import Bm25Provider, query_terms
from dcx.providers.bm25_index import LEGACY_SCHEMAS, SCHEMA, IndexUnavailable, index_path
from dcx.providers.bm25_postings import BLOCK, BLOCK_BITS, decode
from dcx.providers.bm25_search import _varints, postings_top_k
from tests.support.recall import enable, request

DEEP = os.environ.get("DCX_HYPOTHESIS_PROFILE") == "deep"
SEEDS = [3, 17, 29, 41, 57] if DEEP else [3]
QUERIES = 400 if DEEP else 60
SOURCES = ("alpha", "beta", "tiny")  # tiny: 1% of the rows
EXTRA = ["café", "naïve", "Straße", "über", "ÉCOLE"]


def _vocabulary(rng: random.Random) -> list[str]:
    words: dict[str, None] = {}
    while len(words) < 900:
        words.setdefault(
            "".join(rng.choice("abcdefghijklmnop") for _ in range(rng.randint(2, 6))), None
        )
    return list(words)


class Corpus:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.words = _vocabulary(self.rng)
        self.weights = [1 / (rank + 1) ** 1.1 for rank in range(len(self.words))]
        self.common = self.words[:3]
        self.share = {w: s for w, s in zip(self.common, (0.3, 0.55, 0.95), strict=True)}
        self.serial = 0

    def chunk(self) -> str:
        rng = self.rng
        body = rng.choices(self.words, weights=self.weights, k=rng.randint(1, 30))
        for term in self.common:
            if rng.random() < self.share[term]:
                body.insert(rng.randrange(len(body) + 1), term)
        if rng.random() < 0.1:
            body.extend([rng.choice(body)] * rng.randint(2, 25))
        if rng.random() < 0.02:
            body.append(rng.choice(EXTRA))
        self.serial += 1
        return f"## h{self.serial}x\n\n" + " ".join(body)

    def file(self, chunks: int) -> str:
        return "\n\n".join(self.chunk() for _ in range(chunks)) + "\n"

    def tree(self, rows: int) -> dict[str, dict[str, str]]:
        """About ``rows`` chunks: alpha and beta share 99%, tiny holds 1%."""
        out: dict[str, dict[str, str]] = {s: {} for s in SOURCES}
        for source, share in (("alpha", 0.6), ("beta", 0.39), ("tiny", 0.01)):
            made = 0
            while made < rows * share:
                n = self.rng.randint(5, 15)
                out[source][f"d{len(out[source]) % 5}/f{len(out[source]):05d}.md"] = self.file(n)
                made += n
        return out


def _write(root: Path, tree: dict[str, dict[str, str]]) -> None:
    for source, files in tree.items():
        for rel, text in files.items():
            path = root / source / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)


def _index(root: Path, *, rebuild: bool = False) -> None:
    ws = enable(root, sources=_sources())
    index(clock=clock_from_env(), ws=ws, agent_id=None, rebuild=rebuild)


def _sources() -> tuple[dict[str, str], ...]:
    return tuple({"source_id": s, "locator": s} for s in SOURCES)


def _postings(conn: sqlite3.Connection) -> dict[tuple[str, int], tuple[int, int, int]]:
    """(term, rowid) -> (sid, tf, dl), decoded from ``postings``."""
    out = {}
    for term, sid, block, data in conn.execute("SELECT term, sid, block, data FROM postings"):
        offsets, tfs, dls = decode(data)
        assert list(offsets) == sorted(set(offsets)), (term, block)
        for offset, tf, dl in zip(offsets, tfs, dls, strict=True):
            out[(term, (block << BLOCK_BITS) + offset)] = (sid, tf, dl)
    return out


def _fts5_view(conn: sqlite3.Connection) -> dict[tuple[str, int], tuple[int, int, int]]:
    """The same, from FTS5's own records: instances, row sizes and the sid column."""
    conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.inst USING fts5vocab(main, chunks, instance)"
    )
    sizes = {
        rowid: sum(_varints(sz)) for rowid, sz in conn.execute("SELECT id, sz FROM chunks_docsize")
    }
    sids = dict(conn.execute("SELECT rowid, sid FROM chunks"))
    counts = Counter(conn.execute("SELECT term, doc FROM temp.inst"))
    return {(term, doc): (sids[doc], tf, sizes[doc]) for (term, doc), tf in counts.items()}


def _by_place(conn: sqlite3.Connection) -> tuple[dict, dict]:
    """Postings and term statistics keyed by (source id, path, ordinal) instead of rowid."""
    place = {
        rowid: (source_id, path, ordinal)
        for rowid, source_id, path, ordinal in conn.execute(
            "SELECT cf.rowid, s.source_id, f.path, cf.ordinal FROM chunk_files cf "
            "JOIN files f ON f.fid = cf.fid JOIN sources s ON s.sid = f.sid"
        )
    }
    names = dict(conn.execute("SELECT sid, source_id FROM sources"))
    lists = {
        (term, place[rowid]): (names[sid], tf, dl)
        for (term, rowid), (sid, tf, dl) in _postings(conn).items()
    }
    return lists, dict(conn.execute("SELECT term, df FROM term_bounds"))


def _check_lists(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        ours = _postings(conn)
        assert ours == _fts5_view(conn)
        return max(rowid for _, rowid in ours)
    finally:
        conn.close()


def _queries(rng: random.Random, corpus: Corpus, n: int) -> list[str]:
    out = []
    for _ in range(n):
        kind = rng.random()
        if kind < 0.25:  # very common terms only
            terms = rng.sample(corpus.common, rng.randint(1, 3))
        elif kind < 0.45:  # one-row terms (a heading) with a common one
            terms = [f"h{rng.randint(1, corpus.serial)}x", rng.choice(corpus.common)]
        elif kind < 0.55:
            terms = ["qqnotaword", rng.choice(corpus.words)]
        else:  # Zipf head and tail
            terms = [rng.choice(corpus.words[:10]), *rng.sample(corpus.words, rng.randint(0, 4))]
        if rng.random() < 0.2:
            terms.append(terms[0].upper())  # the same term twice: two phrases in FTS5
        rng.shuffle(terms)
        out.append(" ".join(terms))
    return out


def _check_search(path: Path, corpus: Corpus, rng: random.Random) -> int:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        sids = dict(conn.execute("SELECT source_id, sid FROM sources"))
        scopes = [[], [sids["tiny"]], [sids["alpha"]], [sids["beta"], sids["tiny"]]]
        compared = 0
        for query in _queries(rng, corpus, QUERIES):
            phrases = query_terms(query)
            match = " OR ".join(f'"{t}"' for t in phrases)
            every = conn.execute(
                "SELECT rowid, sid, bm25(chunks) FROM chunks WHERE chunks MATCH ? "
                "ORDER BY bm25(chunks), rowid",
                (match,),
            ).fetchall()
            for scope in scopes:
                want_all = [(r, -s) for r, sid, s in every if not scope or sid in scope]
                for limit in (1, rng.randint(2, 17), 9, 400):
                    got = postings_top_k(conn, phrases, limit=limit, sids=scope)
                    assert got == want_all[:limit], (query, scope, limit)
                    compared += 1
        return compared
    finally:
        conn.close()


@pytest.mark.parametrize("seed", SEEDS)
def test_lists_and_search_equal_fts5_across_updates_and_a_rebuild(
    fresh_ws: Path, tmp_path: Path, seed: int
) -> None:
    corpus = Corpus(seed)
    files = corpus.tree(9000)
    _write(fresh_ws, files)
    _index(fresh_ws)
    path = index_path(fresh_ws / ".decision-context" / "private" / "index")
    first = _check_lists(path)
    assert first >= 2 * BLOCK  # the lists span several blocks
    rng = random.Random(seed)
    assert _check_search(path, corpus, rng) > 0

    # updates: rewritten, grown, shrunk, deleted and new files, in every source
    for source in SOURCES:
        names = sorted(files[source])
        for rel in rng.sample(names, max(1, len(names) // 6)):
            (fresh_ws / source / rel).write_text(corpus.file(rng.randint(1, 20)))
        for rel in rng.sample(names, max(1, len(names) // 12)):
            (fresh_ws / source / rel).unlink(missing_ok=True)
        for n in range(3):
            target = fresh_ws / source / "new" / f"n{n}.md"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(corpus.file(rng.randint(1, 12)))
    _index(fresh_ws)
    assert _check_lists(path) > first  # updated files took fresh rowids past the first build's
    assert _check_search(path, corpus, rng) > 0

    conn = sqlite3.connect(path)
    updated = _by_place(conn)
    conn.close()
    _index(fresh_ws, rebuild=True)
    conn = sqlite3.connect(path)
    rebuilt = _by_place(conn)
    conn.close()
    assert updated == rebuilt


def test_search_respects_limits_beyond_the_matches_and_absent_terms(fresh_ws: Path, tree) -> None:
    ws = enable(fresh_ws)
    tree(fresh_ws, {"docs": {"a.md": "## one\n\nalpha beta\n\n## two\n\nbeta beta gamma\n"}})
    index(clock=clock_from_env(), ws=ws, agent_id=None)
    conn = sqlite3.connect(f"file:{index_path(ws.index)}?mode=ro", uri=True)
    try:
        want = [
            (r, -s)
            for r, s in conn.execute(
                'SELECT rowid, bm25(chunks) FROM chunks WHERE chunks MATCH \'"beta" OR "zzz"\' '
                "ORDER BY bm25(chunks), rowid"
            )
        ]
        assert len(want) == 2
        assert postings_top_k(conn, ["beta", "zzz"], limit=8, sids=[]) == want
        assert postings_top_k(conn, ["zzz"], limit=8, sids=[]) == []
        assert postings_top_k(conn, ["Beta", "beta"], limit=1, sids=[])[0][0] == want[0][0]
        assert postings_top_k(conn, ["café"], limit=8, sids=[]) is None  # FTS5 answers that
        with pytest.raises(IndexUnavailable) as late:  # a deadline passed mid-search
            postings_top_k(conn, ["beta", "alpha"], limit=8, sids=[], deadline=time.monotonic())
        assert late.value.reason_code == "provider_search_timeout"
    finally:
        conn.close()


def test_an_index_of_the_earlier_format_is_read_and_then_rebuilt(fresh_ws: Path, tree) -> None:
    ws = enable(fresh_ws, max_results=8)
    rng = random.Random(5)
    corpus = Corpus(5)
    tree(fresh_ws, {"docs": {f"f{i}.md": corpus.file(rng.randint(3, 9)) for i in range(60)}})
    index(clock=clock_from_env(), ws=ws, agent_id=None)
    provider = Bm25Provider(ws)
    queries = [" ".join(rng.sample(corpus.words[:40], 3)) for _ in range(15)]
    current = [provider.retrieve(request(query=q, max_results=8), deadline=1e18) for q in queries]
    assert all(r.items for r in current)
    # the earlier format: the same tables without ``postings``
    conn = sqlite3.connect(index_path(ws.index))
    conn.execute("DROP TABLE postings")
    conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (LEGACY_SCHEMAS[0],))
    conn.commit()
    conn.close()
    legacy = [provider.retrieve(request(query=q, max_results=8), deadline=1e18) for q in queries]
    assert [r.items for r in legacy] == [r.items for r in current]
    report = index(clock=clock_from_env(), ws=ws, agent_id=None)
    assert report.data["created"] is True
    conn = sqlite3.connect(index_path(ws.index))
    assert (
        conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == SCHEMA
    )
    conn.close()
    _check_lists(index_path(ws.index))
    again = [provider.retrieve(request(query=q, max_results=8), deadline=1e18) for q in queries]
    assert [r.items for r in again] == [r.items for r in current]
