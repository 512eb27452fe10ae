"""Exact top-k BM25 over the FTS5 index, without ranking every match.

FTS5's ``bm25()`` costs about a microsecond per matching row, and an OR query
with one moderately common term matches a large part of the index. So the
search runs in two steps (the "MaxScore" idea, done with SQL):

1. Terms are ordered rarest first. The rarest few are the *essential* terms;
   for the others an upper bound of what they can add to any row's score is
   known without reading a row: ``idf(t) * (k1 + 1) * g_max(t)``, where
   ``g_max`` is the term's largest tf factor kept by the indexer
   (``bm25_bounds``; 1 when unknown, since the factor is always below 1).
2. Only rows that contain an essential term are ranked, with the **full**
   query's ``bm25()`` (so their scores are exactly the full query's). If the
   k-th best of them scores at least the sum of the other terms' bounds, no
   row without an essential term can enter the top k: the answer is exact.
   Otherwise more terms become essential, and at worst the plain full query
   runs.

IDF here is FTS5's own: ``ln((N - n + 0.5) / (n + 0.5))``, floored at 1e-6,
with n from ``term_bounds`` (kept equal to what ``fts5vocab`` would count).
A term the table does not know (its folding differs from ours) has no
bound: it is always essential.
"""

from __future__ import annotations

import math
import sqlite3
import unicodedata
from typing import NamedTuple

from dcx.providers.bm25_bounds import term_bound

K1 = 1.2
B = 0.75
BOUND_SLACK = 1e-9  # float noise between FTS5's arithmetic and ours
MAX_ATTEMPTS = 4
GUESS = 0.8  # first guess: the k-th score is about this share of the filling term's bound


class Term(NamedTuple):
    text: str  # as written in the query (FTS5 folds it inside the quoted string)
    df: int | None  # rows that contain it; None when the vocabulary lookup could not say
    m: float | None = None  # its largest tf factor (``bm25_bounds``), None when unknown
    at: float = 1.0  # the average row length ``m`` was computed at


def folded(term: str) -> str:
    """A term as ``unicode61 remove_diacritics 2`` stores it (to look up its frequency)."""
    decomposed = unicodedata.normalize("NFD", term.lower())
    return unicodedata.normalize("NFC", "".join(c for c in decomposed if not unicodedata.combining(c)))


def idf(total: int, df: int) -> float:
    value = math.log((total - df + 0.5) / (df + 0.5))
    return value if value > 0 else 1e-6


def term_stats(conn: sqlite3.Connection, terms: list[str]) -> list[Term]:
    """Each term with its df and bound; a term the table does not know stays unbounded."""
    out = []
    for term in terms:
        row = conn.execute("SELECT df, m, avgdl FROM term_bounds WHERE term = ?", (folded(term),)).fetchone()
        out.append(Term(term, None) if row is None else Term(term, int(row[0]), float(row[1]), float(row[2])))
    return out


def _bound(term: Term, total: int, avgdl: float) -> float:
    """The most ``term`` can add to any row's score now."""
    if term.df is None:
        return math.inf
    g = 1.0 if term.m is None or avgdl <= 0 else term_bound(term.m, term.at, avgdl)
    return (K1 + 1) * idf(total, term.df) * g


def _match(terms: list[Term]) -> str:
    return " OR ".join('"' + t.text.replace('"', '""') + '"' for t in terms)


def top_k(conn: sqlite3.Connection, terms: list[Term], *, total: int, limit: int,
          sids: list[int], avgdl: float = 0.0) -> list[tuple[int, float]]:
    """(rowid, bm25 score — higher is better) of the best ``limit`` rows, best first."""
    if not terms:
        return []
    scope = f" AND sid IN ({','.join('?' * len(sids))})" if sids else ""
    full = _match(terms)
    # unknown frequencies first: they can only ever be essential
    ordered = sorted(terms, key=lambda t: (t.df is not None, t.df or 0))
    bounds = [_bound(t, total, avgdl) for t in ordered]
    rest = [sum(bounds[j:]) for j in range(len(ordered) + 1)]
    # j = how many of the rarest terms are essential. First guess: enough rows to
    # fill the limit, and the rest bounded below most of what the term that
    # fills it can give (each attempt reads the common terms' doclists again).
    # After a miss: from the k-th score found (it only grows with j), the fewest
    # whose remaining bound that score already beats.
    fill = next((i for i in range(1, len(ordered) + 1)
                 if sum(t.df or 0 for t in ordered[:i]) >= limit or ordered[i - 1].df is None), len(ordered))
    j = next((i for i in range(fill, len(ordered)) if rest[i] <= GUESS * bounds[fill - 1]), fill)
    for _ in range(MAX_ATTEMPTS):
        if j >= len(ordered) or not math.isfinite(rest[j]):
            break
        rows = conn.execute(
            "SELECT rowid, bm25(chunks) AS s FROM chunks WHERE chunks MATCH ?"
            f"{scope} AND +rowid IN (SELECT rowid FROM chunks WHERE chunks MATCH ?) ORDER BY s LIMIT ?",
            (full, *sids, _match(ordered[:j]), limit),
        ).fetchall()
        kth = -rows[-1][1] if len(rows) == limit else -math.inf
        if kth >= rest[j] * (1 + BOUND_SLACK) + BOUND_SLACK:
            return [(rowid, -score) for rowid, score in rows]
        j = next((i for i in range(j + 1, len(ordered)) if kth >= rest[i] * (1 + BOUND_SLACK) + BOUND_SLACK),
                 len(ordered))
    rows = conn.execute(
        f"SELECT rowid, rank FROM chunks WHERE chunks MATCH ?{scope} ORDER BY rank LIMIT ?", (full, *sids, limit)
    ).fetchall()
    return [(rowid, -score) for rowid, score in rows]
