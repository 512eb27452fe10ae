"""Exact top-k BM25 over the index, without ranking every match.

Two searches give the same answer. ``postings_top_k`` (the usual one) reads the
index's own posting lists (``bm25_postings``) and never calls ``bm25()``: see
its doc. ``search`` below asks FTS5 itself; it answers queries with a term that
is not ASCII (only FTS5 knows how it folds and splits those) and indexes of the
earlier format, which have no posting lists.

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

**Weak terms** (``search``). A term in half the chunks or more has FTS5's
floored IDF, 1e-6, yet every statement that calls ``bm25()`` with it in the
MATCH first counts its whole doclist (to compute that IDF), and iterating its
matches makes half the index a candidate. In an index of ``WEAK_MIN_CHUNKS``
or more, such terms are kept out of the SQL: the other (*strong*) terms are
ranked as above, and each candidate's weak share — ``1e-6 * tf*(k1+1) /
(tf + k1*(1 - b + b*|d|/avgdl))``, with tf counted as unicode61 counts it (the
ASCII regex of ``bm25_bounds``; FTS5's ``highlight()`` for other text) and
|d|, avgdl read from FTS5's own size records — is added in Python. The
answer stays exact: candidates are taken until the k-th strong score beats
everything outside them plus the weak terms' bound, and when the strong terms
cannot fill k rows (a query of common words, or a scope they miss) the plain
full query ranks every match. Dropping weak terms instead (what dcx did
before) emptied scoped queries whose scope held every query term.

**Scopes.** ``sid`` is an unindexed column: filtering on it reads each
matching row's content record. A scope that holds at most a quarter of the
chunks is filtered instead by the rowid set of its chunks (from
``chunk_files``), and its statements are bounded to the rowid range that set
spans, so FTS5 seeks its doclists there instead of walking the whole index.

Ties: equal scores come in rowid order, which is index order (a first build
indexes sources by id, files by path, chunks in order; a file re-indexed
later gets new, higher rowids).
"""

from __future__ import annotations

import heapq
import math
import re
import sqlite3
import time
import unicodedata
from array import array
from bisect import bisect_left
from typing import NamedTuple

from dcx.providers.bm25_bounds import term_bound
from dcx.providers.bm25_index import IndexUnavailable
from dcx.providers.bm25_postings import BLOCK, BLOCK_BITS, decode

K1 = 1.2
B = 0.75
BOUND_SLACK = 1e-9  # float noise between FTS5's arithmetic and ours
MAX_ATTEMPTS = 4
GUESS = 0.8  # first guess: the k-th score is about this share of the filling term's bound
WEAK_MIN_CHUNKS = (
    2000  # smaller indexes rank weak terms in SQL: counting their doclists is cheap there
)
FLOOR_IDF = 1e-6  # FTS5's IDF for a term in half the rows or more
SMALL_SCOPE_SHARE = 4  # a scope of at most 1/4 of the chunks is filtered by its rowids
WEAK_MARGIN = (
    8  # rows fetched past the limit, so the strong score there leaves room for the weak terms
)


class Term(NamedTuple):
    text: str  # as written in the query (FTS5 folds it inside the quoted string)
    df: int | None  # rows that contain it; None when the vocabulary lookup could not say
    m: float | None = None  # its largest tf factor (``bm25_bounds``), None when unknown
    at: float = 1.0  # the average row length ``m`` was computed at


def folded(term: str) -> str:
    """A term as ``unicode61 remove_diacritics 2`` stores it (to look up its frequency)."""
    decomposed = unicodedata.normalize("NFD", term.lower())
    return unicodedata.normalize(
        "NFC", "".join(c for c in decomposed if not unicodedata.combining(c))
    )


def idf(total: int, df: int) -> float:
    value = math.log((total - df + 0.5) / (df + 0.5))
    return value if value > 0 else 1e-6


def term_stats(conn: sqlite3.Connection, terms: list[str]) -> list[Term]:
    """Each term with its df and bound; a term the table does not know stays unbounded."""
    out = []
    for term in terms:
        row = conn.execute(
            "SELECT df, m, avgdl FROM term_bounds WHERE term = ?", (folded(term),)
        ).fetchone()
        out.append(
            Term(term, None)
            if row is None
            else Term(term, int(row[0]), float(row[1]), float(row[2]))
        )
    return out


def _bound(term: Term, total: int, avgdl: float) -> float:
    """The most ``term`` can add to any row's score now."""
    if term.df is None:
        return math.inf
    g = 1.0 if term.m is None or avgdl <= 0 else term_bound(term.m, term.at, avgdl)
    return (K1 + 1) * idf(total, term.df) * g


def _match(terms: list[Term]) -> str:
    return " OR ".join('"' + t.text.replace('"', '""') + '"' for t in terms)


class Scope(NamedTuple):
    """An SQL filter for a scope's rows: ``sql`` follows a MATCH constraint, ``params`` fill it."""

    sql: str = ""
    params: tuple[int, ...] = ()


def scope_filter(conn: sqlite3.Connection, sids: list[int], *, total: int) -> Scope:
    """The cheapest exact filter for the rows of sources ``sids`` ([] = every row)."""
    if not sids:
        return Scope()
    marks = ",".join("?" * len(sids))
    held = conn.execute(
        f"SELECT COALESCE(SUM(chunk_count), 0) FROM files WHERE sid IN ({marks})", sids
    ).fetchone()[0]
    if held * SMALL_SCOPE_SHARE > total:
        return Scope(f" AND sid IN ({marks})", tuple(sids))
    lo, hi = conn.execute(
        "SELECT MIN(cf.rowid), MAX(cf.rowid) FROM chunk_files cf JOIN files f ON f.fid = cf.fid "
        f"WHERE f.sid IN ({marks})",
        sids,
    ).fetchone()
    if lo is None:
        return Scope(" AND 0")
    rows = (
        "SELECT cf.rowid FROM chunk_files cf JOIN files f ON f.fid = cf.fid "
        f"WHERE f.sid IN ({marks})"
    )
    return Scope(f" AND rowid BETWEEN ? AND ? AND +rowid IN ({rows})", (int(lo), int(hi), *sids))


def top_k(
    conn: sqlite3.Connection,
    terms: list[Term],
    *,
    total: int,
    limit: int,
    sids: list[int] | Scope,
    avgdl: float = 0.0,
) -> list[tuple[int, float]]:
    """(rowid, bm25 score — higher is better) of the best ``limit`` rows, best first."""
    if not terms:
        return []
    where = (
        sids
        if isinstance(sids, Scope)
        else Scope(f" AND sid IN ({','.join('?' * len(sids))})" if sids else "", tuple(sids))
    )
    scope, sids = where.sql, list(where.params)
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
    fill = next(
        (
            i
            for i in range(1, len(ordered) + 1)
            if sum(t.df or 0 for t in ordered[:i]) >= limit or ordered[i - 1].df is None
        ),
        len(ordered),
    )
    j = next((i for i in range(fill, len(ordered)) if rest[i] <= GUESS * bounds[fill - 1]), fill)
    for _ in range(MAX_ATTEMPTS):
        if j >= len(ordered) or not math.isfinite(rest[j]):
            break
        rows = conn.execute(
            "SELECT rowid, bm25(chunks) AS s FROM chunks WHERE chunks MATCH ?"
            f"{scope} AND +rowid IN (SELECT rowid FROM chunks WHERE chunks MATCH ?) ORDER BY s, rowid LIMIT ?",
            (full, *sids, _match(ordered[:j]), limit),
        ).fetchall()
        kth = -rows[-1][1] if len(rows) == limit else -math.inf
        if kth >= rest[j] * (1 + BOUND_SLACK) + BOUND_SLACK:
            return [(rowid, -score) for rowid, score in rows]
        j = next(
            (
                i
                for i in range(j + 1, len(ordered))
                if kth >= rest[i] * (1 + BOUND_SLACK) + BOUND_SLACK
            ),
            len(ordered),
        )
    return plain(conn, full, where, limit)


def plain(
    conn: sqlite3.Connection, match: str, where: Scope, limit: int
) -> list[tuple[int, float]]:
    """Every match ranked by FTS5 (the exact answer, at its full cost)."""
    rows = conn.execute(
        f"SELECT rowid, bm25(chunks) AS s FROM chunks WHERE chunks MATCH ?{where.sql} ORDER BY s, rowid LIMIT ?",
        (match, *where.params, limit),
    ).fetchall()
    return [(rowid, -score) for rowid, score in rows]


def search(
    conn: sqlite3.Connection,
    terms: list[Term],
    *,
    total: int,
    limit: int,
    scope: Scope,
    avgdl: float,
) -> list[tuple[int, float]]:
    """The exact best ``limit`` rows, best first (equal scores: lower rowid first); see the module doc."""
    if not terms or limit < 1:
        return []
    weak = {
        i
        for i, t in enumerate(terms)
        if total >= WEAK_MIN_CHUNKS and t.df is not None and 2 * t.df >= total
    }
    if not weak:
        return top_k(conn, terms, total=total, limit=limit, sids=scope, avgdl=avgdl)
    strong = [t for i, t in enumerate(terms) if i not in weak]
    weak_terms = [t for i, t in enumerate(terms) if i in weak]
    # what the weak terms can add to any row, with room for float noise
    reach = sum(_bound(t, total, avgdl) for t in weak_terms) * (1 + BOUND_SLACK) + BOUND_SLACK
    want = limit + WEAK_MARGIN
    for _ in range(MAX_ATTEMPTS):
        rows = (
            top_k(conn, strong, total=total, limit=want, sids=scope, avgdl=avgdl) if strong else []
        )
        outside = (
            rows[-1][1] if len(rows) == want else 0.0
        )  # no row left out has a higher strong score
        if len(rows) >= limit and rows[limit - 1][1] > (outside + reach) * (1 + BOUND_SLACK):
            return _add_weak(conn, rows, weak_terms)[:limit]
        if len(rows) < want:
            break  # the strong terms cannot fill the limit: rows with only weak terms compete
        want *= 16  # (a miss means a long run of equal strong scores: take all of it at once)
    return plain(conn, _match(terms), scope, limit)


def _varints(blob: bytes) -> list[int]:
    """SQLite varints (FTS5's size records): 7 bits a byte, high bit set = more; a 9th byte is whole."""
    out, value, used = [], 0, 0
    for byte in blob:
        used += 1
        if used == 9:
            out.append((value << 8) | byte)
            value, used = 0, 0
        elif byte & 0x80:
            value = (value << 7) | (byte & 0x7F)
        else:
            out.append((value << 7) | byte)
            value, used = 0, 0
    return out


def _add_weak(
    conn: sqlite3.Connection, rows: list[tuple[int, float]], weak: list[Term]
) -> list[tuple[int, float]]:
    """``rows`` (strong scores) with each weak term's share added as FTS5's ``bm25()`` computes it."""
    rowids = [rowid for rowid, _ in rows]
    marks = ",".join("?" * len(rowids))
    averages = _varints(conn.execute("SELECT block FROM chunks_data WHERE id = 1").fetchone()[0])
    avgdl = sum(averages[1:]) / averages[0]
    lengths = {
        rowid: sum(_varints(size))
        for rowid, size in conn.execute(
            f"SELECT id, sz FROM chunks_docsize WHERE id IN ({marks})", rowids
        )
    }
    bodies = dict(conn.execute(f"SELECT rowid, body FROM chunks WHERE rowid IN ({marks})", rowids))
    lowered = {rowid: body.lower() for rowid, body in bodies.items() if body.isascii()}
    scores = dict(rows)
    for term in weak:
        # unicode61 on ASCII text splits on every character outside [a-z0-9] (``bm25_bounds``)
        word = (
            re.compile(rf"(?<![a-z0-9]){re.escape(term.text.lower())}(?![a-z0-9])")
            if term.text.isascii()
            else None
        )
        for rowid in rowids:
            text = lowered.get(rowid)
            tf = float(
                len(word.findall(text))
                if word is not None and text is not None
                else _tf(conn, term, rowid, bodies[rowid])
            )
            if tf:
                scores[rowid] += FLOOR_IDF * (
                    (tf * (K1 + 1.0)) / (tf + K1 * (1 - B + B * lengths[rowid] / avgdl))
                )
    return sorted(scores.items(), key=lambda r: (-r[1], r[0]))


def _tf(conn: sqlite3.Connection, term: Term, rowid: int, body: str) -> int:
    """How often ``term`` occurs in a row that is not all ASCII, as FTS5 counts it."""
    # highlight() marks each instance of the phrase once
    row = conn.execute(
        "SELECT highlight(chunks, 0, char(1), '') FROM chunks WHERE chunks MATCH ? AND rowid = ?",
        (_match([term]), rowid),
    ).fetchone()
    return 0 if row is None else row[0].count("\x01") - body.count("\x01")


# --- the search over the index's own posting lists (``bm25_postings``) ---------------


def fts5_totals(conn: sqlite3.Connection) -> tuple[int, int]:
    """(rows, tokens) as FTS5's own averages record holds them: what ``bm25()`` reads."""
    row = conn.execute("SELECT block FROM chunks_data WHERE id = 1").fetchone()
    if row is None:
        return 0, 0
    averages = _varints(row[0])
    return averages[0], sum(averages[1:])


Lists = dict[int, list[tuple[int, "array[int]", "array[int]", "array[int]"]]]


def _load(conn: sqlite3.Connection, tokens: list[str], sids: list[int]) -> dict[str, Lists]:
    """The terms' posting rows within the sources ``sids`` ([] = all): term -> block -> parts."""
    marks = ",".join("?" * len(tokens))
    if sids:
        rows = conn.execute(
            f"SELECT term, block, data FROM postings WHERE term IN ({marks}) AND sid IN "
            f"({','.join('?' * len(sids))})",
            (*tokens, *sids),
        )
    else:
        rows = conn.execute(
            f"SELECT term, block, data FROM postings WHERE term IN ({marks})", tokens
        )
    out: dict[str, Lists] = {t: {} for t in tokens}
    for term, block, data in rows:
        out[term].setdefault(block, []).append((block << BLOCK_BITS, *decode(data)))
    return out


def _find(lists: Lists, rowid: int) -> tuple[int, int] | None:
    """(tf, dl) of ``rowid`` in one term's lists, or None when the row lacks the term."""
    parts = lists.get(rowid >> BLOCK_BITS)
    if parts:
        offset = rowid & (BLOCK - 1)
        for _, offsets, tfs, dls in parts:
            i = bisect_left(offsets, offset)
            if i < len(offsets) and offsets[i] == offset:
                return tfs[i], dls[i]
    return None


def _size(lists: Lists) -> int:
    return sum(len(part[1]) for parts in lists.values() for part in parts)


def postings_top_k(
    conn: sqlite3.Connection,
    phrases: list[str],
    *,
    limit: int,
    sids: list[int],
    deadline: float | None = None,
) -> list[tuple[int, float]] | None:
    """The exact best ``limit`` rows, best first (equal scores: lower rowid first), computed
    from ``postings`` with FTS5's own ``bm25()`` arithmetic; None when a query term is not
    ASCII (its folding and splitting only FTS5 knows: the caller asks FTS5 then).

    Term at a time, highest bound first (the MaxScore idea): each term's rows add to their
    accumulators while a row that has none of the terms so far could still reach the k-th
    best score known (``theta``); once the bounds of the terms left are below it, the rest
    only add to the rows already held, and rows that cannot reach ``theta`` any more are
    dropped. ``theta`` is the k-th best of the partial sums, or of the full scores of the
    best rows so far (their missing terms looked up), whichever is higher. The
    accumulators use the same formula in another order; the candidates within float noise
    of ``theta`` are scored again exactly as FTS5 does (phrase by phrase, in query order),
    so the answer is bit for bit the full ranking's.

    Past ``deadline`` (``time.monotonic()``), checked before each block of each
    term's list, it raises ``IndexUnavailable('provider_search_timeout')``: a query
    of hundreds of common words reads millions of postings.
    """
    if not phrases or limit < 1:
        return []
    if not all(p.isascii() for p in phrases):
        return None
    n_row, n_token = fts5_totals(conn)
    if n_row <= 0:
        return []
    tokens = [p.lower() for p in phrases]
    unique = list(dict.fromkeys(tokens))
    # a term the table does not hold is in no row: it adds 0 to every score
    stats: dict[str, tuple[int, float, float]] = {
        term: (int(df), float(m), float(at))
        for term, df, m, at in conn.execute(
            "SELECT term, df, m, avgdl FROM term_bounds WHERE term IN "
            f"({','.join('?' * len(unique))})",
            unique,
        )
    }
    if not stats:
        return []
    avgdl = n_token / n_row
    idfs = {t: idf(n_row, df) for t, (df, _, _) in stats.items()}
    weight = {t: tokens.count(t) * idfs[t] * (K1 + 1) for t in stats}
    bound = {t: weight[t] * term_bound(m, at, avgdl) for t, (_, m, at) in stats.items()}
    order = sorted(stats, key=lambda t: (-bound[t], t))
    rest = [sum(bound[t] for t in order[i:]) for i in range(len(order) + 1)]
    lists = _load(conn, order, sids)
    a, c = K1 * (1 - B), K1 * B / avgdl
    # x reaches theta "for sure" below: x * (1 + slack) + slack >= theta
    tight = 1 + BOUND_SLACK

    acc: dict[int, float] = {}
    theta = 0.0
    closed = False
    for i, token in enumerate(order):
        if deadline is not None and time.monotonic() > deadline:
            raise IndexUnavailable("provider_search_timeout")
        w, found = weight[token], lists[token]
        if not closed and len(acc) >= limit and rest[i] * tight + BOUND_SLACK < theta:
            closed = True  # a row with none of the terms so far scores below theta
        if closed:
            cut = (theta - BOUND_SLACK) / tight - rest[i]
            acc = {r: s for r, s in acc.items() if s >= cut}
            if len(acc) * 8 < _size(found):
                for r in acc:
                    hit = _find(found, r)
                    if hit is not None:
                        tf, dl = hit
                        acc[r] += w * tf / (tf + a + c * dl)
            else:
                held = acc.get
                for base, offsets, tfs, dls in (p for parts in found.values() for p in parts):
                    if deadline is not None and time.monotonic() > deadline:
                        raise IndexUnavailable("provider_search_timeout")
                    for offset, tf, dl in zip(offsets, tfs, dls, strict=True):
                        s = held(base + offset)
                        if s is not None:
                            acc[base + offset] = s + w * tf / (tf + a + c * dl)
        else:
            held = acc.get
            for base, offsets, tfs, dls in (p for parts in found.values() for p in parts):
                if deadline is not None and time.monotonic() > deadline:
                    raise IndexUnavailable("provider_search_timeout")
                for offset, tf, dl in zip(offsets, tfs, dls, strict=True):
                    r = base + offset
                    acc[r] = held(r, 0.0) + w * tf / (tf + a + c * dl)
        if len(acc) >= limit:
            best = heapq.nlargest(limit, acc.items(), key=lambda rs: rs[1])
            theta = max(theta, best[-1][1])
            if not closed and i + 1 < len(order):
                # the best rows' full scores: a higher theta closes the search sooner
                later = [(weight[t], lists[t]) for t in order[i + 1 :]]
                full = []
                for r, s in best:
                    for wl, fl in later:
                        hit = _find(fl, r)
                        if hit is not None:
                            s += wl * hit[0] / (hit[0] + a + c * hit[1])
                    full.append(s)
                theta = max(theta, min(full))
    # the exact scores, as fts5Bm25Function sums them: phrase by phrase in query order
    cut = (theta - BOUND_SLACK) / tight
    out = []
    for r, s in acc.items():
        if s < cut:
            continue
        hits = {t: _find(lists[t], r) for t in stats}
        dl = next(hit[1] for hit in hits.values() if hit is not None)
        score = 0.0
        for token in tokens:
            hit = hits.get(token)
            if hit is not None:
                f = float(hit[0])
                score += idfs[token] * ((f * (K1 + 1.0)) / (f + K1 * (1 - B + B * dl / avgdl)))
        out.append((r, score))
    out.sort(key=lambda rs: (-rs[1], rs[0]))
    return out[:limit]
