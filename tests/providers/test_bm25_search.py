"""The pruned top-k search returns exactly what ranking every match would."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

from dcx.core.clock import clock_from_env
from dcx.ops.index import index
from dcx.providers.bm25 import query_terms
from dcx.providers.bm25_bounds import BoundsBuilder, factor
from dcx.providers.bm25_index import index_path
from dcx.providers.bm25_search import idf, term_stats, top_k
from tests.support.recall import enable

VOCABULARY = [f"w{i}" for i in range(300)] + ["café", "Straße", "naïve", "über", "日本語", "ÉCOLE"]


def _section(rng: random.Random, s: int, longest: int = 60) -> str:
    weights = [1 / (rank + 1) for rank in range(len(VOCABULARY))]
    return f"## s{s}\n\n" + " ".join(
        rng.choices(VOCABULARY, weights=weights, k=rng.randint(3, longest))
    )


def _corpus(rng: random.Random, files: int = 100) -> dict[str, str]:
    return {f"f{f}.md": "\n\n".join(_section(rng, s) for s in range(10)) for f in range(files)}


def _df_matches_fts5(path: Path) -> None:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    ours = dict(conn.execute("SELECT term, df FROM term_bounds"))
    fts5 = dict(conn.execute("SELECT term, doc FROM vocab"))
    conn.close()
    assert ours == fts5


def _check(conn: sqlite3.Connection, rng: random.Random, rounds: int = 120) -> int:
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    total, tokens = (
        int(v)
        for v in conn.execute(
            "SELECT (SELECT value FROM meta WHERE key = 'chunk_count'), (SELECT value FROM meta WHERE key = 'total_tokens')"
        ).fetchone()
    )
    pruned = 0
    for _ in range(rounds):
        words = [
            rng.choice(VOCABULARY[:15] if rng.random() < 0.5 else VOCABULARY)
            for _ in range(rng.randint(1, 6))
        ]
        terms = term_stats(conn, query_terms(" ".join(words)))
        limit = rng.choice([3, 9, 17])
        statements.clear()
        got = top_k(conn, terms, total=total, limit=limit, sids=[], avgdl=tokens / total)
        match = " OR ".join(f'"{t.text}"' for t in terms)
        want = [
            (r, -s)
            for r, s in conn.execute(
                "SELECT rowid, rank FROM chunks WHERE chunks MATCH ? ORDER BY rank LIMIT ?",
                (match, limit),
            )
        ]
        assert [round(s, 9) for _, s in got] == [round(s, 9) for _, s in want], words
        boundary = round(want[-1][1], 9) if want else None
        assert {r for r, s in got if round(s, 9) != boundary} == {
            r for r, s in want if round(s, 9) != boundary
        }
        pruned += any("+rowid IN" in s for s in statements)
    conn.set_trace_callback(None)
    return pruned


def test_pruned_top_k_equals_the_full_ranking_across_updates(fresh_ws: Path, tree) -> None:
    rng = random.Random(7)
    ws = enable(fresh_ws)
    tree(fresh_ws, {"docs": _corpus(rng)})
    index(clock=clock_from_env(), ws=ws, agent_id=None)
    path = index_path(ws.index)
    _df_matches_fts5(path)
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    assert _check(conn, rng) > 20  # the bounds proved the short path exact often enough to matter
    conn.close()
    # longer sections raise the average length; deletions leave bounds loose but valid
    docs = fresh_ws / "docs"
    for f in range(0, 100, 7):
        (docs / f"f{f}.md").write_text(
            "\n\n".join(_section(rng, s, longest=400) for s in range(10))
        )
    for f in range(1, 100, 9):
        (docs / f"f{f}.md").unlink()
    index(clock=clock_from_env(), ws=ws, agent_id=None)
    _df_matches_fts5(path)
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    assert _check(conn, rng) > 10
    conn.close()


def test_token_counts_match_fts5_for_ascii_and_other_text(fresh_ws: Path, tree) -> None:
    ws = enable(fresh_ws)
    tree(
        fresh_ws,
        {
            "docs": {
                "a.md": "Plain ASCII, with_underscores & 42 numbers+symbols.",
                "b.md": "Ünïcode café CAFÉ straße 日本語 naïve—dash",
            }
        },
    )
    index(clock=clock_from_env(), ws=ws, agent_id=None)
    conn = sqlite3.connect(index_path(ws.index))
    conn.execute("CREATE VIRTUAL TABLE temp.inst USING fts5vocab(main, chunks, instance)")
    fts5 = dict(conn.execute("SELECT doc, count(*) FROM temp.inst GROUP BY doc"))
    ours = dict(conn.execute("SELECT rowid, dl FROM chunk_files"))
    assert ours == fts5
    total = conn.execute("SELECT value FROM meta WHERE key = 'total_tokens'").fetchone()[0]
    assert int(total) == sum(fts5.values())
    bounds = dict(conn.execute("SELECT term, m FROM term_bounds"))
    assert set(bounds) == {t for (t,) in conn.execute("SELECT DISTINCT term FROM temp.inst")}
    conn.close()


def test_builder_keeps_the_largest_factor() -> None:
    builder = BoundsBuilder()
    builder.add(1, "alpha alpha beta")
    builder.add(2, "alpha " + "gamma " * 20)
    assert builder.frontier["alpha"] == {2: 3, 1: 21}
    assert builder.df["alpha"] == 2 and builder.df["gamma"] == 1
    builder.remove([(1, "alpha alpha beta")])
    assert builder.df["alpha"] == 1 and builder.df["beta"] == 0
    assert factor(2, 3, 10) > factor(1, 21, 10)


def test_idf_is_fts5s() -> None:
    assert idf(100, 10) > idf(100, 40) > 0
    assert idf(100, 50) == 1e-6 and idf(100, 90) == 1e-6
