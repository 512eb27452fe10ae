"""Per-term statistics that let the search skip rows without losing exactness.

``term_bounds`` holds, per term:

- ``df``: how many chunks contain it, kept exact by counting the terms of
  every chunk added (+1) and removed (-1). FTS5's ``fts5vocab`` gives the same
  number but walks the whole doclist to count it, which costs milliseconds
  for a common term; the search reads it here in microseconds.
- ``m``: a term adds ``idf * (k1 + 1) * g`` to a row's score, with
  ``g = tf / (tf + k1 * (1 - b + b * dl / avgdl))`` < 1; ``m`` is the largest
  ``g`` over the chunks added with it, computed at the average length
  ``avgdl`` of that run. For a later average ``A``, ``g`` can grow by at most
  ``A / avgdl`` (never past 1), so ``min(1, m * max(1, A / avgdl))`` stays an
  upper bound — also after deletions, which only lower the true maximum.

Token counts must be FTS5's own. For ASCII text ``unicode61`` splits on
everything that is not ``[A-Za-z0-9]`` and lower-cases, which a regex repeats
exactly; other text is tokenised by FTS5 itself in a temporary in-memory
table with the same tokenizer, read back through ``fts5vocab``.
"""

from __future__ import annotations

import re
import sqlite3
from collections import Counter
from collections.abc import Iterable

from dcx.providers.bm25_index import TOKENIZER
from dcx.providers.bm25_postings import PostingsBuilder

K1 = 1.2
B = 0.75
_ASCII_TOKEN = re.compile(r"[a-z0-9]+")


def factor(tf: int, dl: int, avgdl: float) -> float:
    return tf / (tf + K1 * (1 - B + B * dl / avgdl))


def term_bound(m: float, at: float, avgdl: float) -> float:
    """The largest tf factor ``g`` the term can reach now (see the module doc)."""
    return min(1.0, m * max(1.0, avgdl / at))


def _fts5_counts(
    conn: sqlite3.Connection, chunks: list[tuple[int, str]]
) -> dict[int, Counter[str]]:
    """Term counts per chunk as FTS5 tokenises them (for text the regex cannot split exactly)."""
    conn.execute(
        f"CREATE VIRTUAL TABLE temp.bound_chunks USING fts5(body, tokenize = '{TOKENIZER}')"
    )
    conn.execute(
        "CREATE VIRTUAL TABLE temp.bound_vocab USING fts5vocab(temp, bound_chunks, instance)"
    )
    try:
        conn.executemany("INSERT INTO temp.bound_chunks (rowid, body) VALUES (?, ?)", chunks)
        per_doc: dict[int, Counter[str]] = {rowid: Counter() for rowid, _ in chunks}
        for term, doc in conn.execute("SELECT term, doc FROM temp.bound_vocab"):
            per_doc[doc][term] += 1
    finally:
        conn.execute("DROP TABLE temp.bound_vocab")
        conn.execute("DROP TABLE temp.bound_chunks")
    return per_doc


class BoundsBuilder:
    """What one index run changes: per-term df deltas, the added chunks' best (tf, dl), and
    the posting lists' changes (``bm25_postings``)."""

    def __init__(self) -> None:
        self.frontier: dict[str, dict[int, int]] = {}  # term -> {tf: shortest dl with that tf}
        self.df: Counter[str] = Counter()
        self.postings = PostingsBuilder()
        self.deferred_added: list[tuple[int, str]] = []
        self.deferred_removed: list[tuple[int, str]] = []
        self.deferred_sid: dict[int, int] = {}  # rowid -> sid of the deferred chunks

    def add(self, rowid: int, text: str, sid: int = 0) -> int | None:
        """The chunk's token count, or None when FTS5 must count it (non-ASCII text)."""
        if not text.isascii():
            self.deferred_added.append((rowid, text))
            self.deferred_sid[rowid] = sid
            return None
        tokens = _ASCII_TOKEN.findall(text.lower())
        counts = Counter(tokens)
        self._added(counts, len(tokens))
        self.postings.add(rowid, sid, counts, len(tokens))
        return len(tokens)

    def remove(self, chunks: Iterable[tuple[int, str]], sid: int = 0) -> None:
        for rowid, text in chunks:
            if text.isascii():
                terms = set(_ASCII_TOKEN.findall(text.lower()))
                self.df.subtract(terms)
                self.postings.remove(rowid, sid, terms)
            else:
                self.deferred_removed.append((rowid, text))
                self.deferred_sid[rowid] = sid

    def _added(self, counts: Counter[str], dl: int) -> None:
        frontier = self.frontier
        self.df.update(counts.keys())
        for term, tf in counts.items():
            per = frontier.get(term)
            if per is None:
                frontier[term] = {tf: dl}
            elif dl < per.get(tf, dl + 1):
                per[tf] = dl

    def resolve_deferred(self, conn: sqlite3.Connection) -> dict[int, int]:
        """Count the non-ASCII chunks with FTS5; return their token counts (rowid -> dl)."""
        lengths = {}
        if self.deferred_added:
            for rowid, counts in _fts5_counts(conn, self.deferred_added).items():
                lengths[rowid] = sum(counts.values())
                self._added(counts, lengths[rowid])
                self.postings.add(
                    rowid, self.deferred_sid[rowid], counts, lengths[rowid], late=True
                )
        if self.deferred_removed:
            for rowid, counts in _fts5_counts(conn, self.deferred_removed).items():
                self.df.subtract(counts.keys())
                self.postings.remove(rowid, self.deferred_sid[rowid], counts)
        self.deferred_added.clear()
        self.deferred_removed.clear()
        self.deferred_sid.clear()
        return lengths

    def store(self, conn: sqlite3.Connection, avgdl: float) -> None:
        """Apply the df deltas and merge the new maxima at the run's final average length."""
        touched = set(self.df) | set(self.frontier)
        if not touched:
            return
        old = {
            term: (df, m, at)
            for term, df, m, at in conn.execute(
                "SELECT term, df, m, avgdl FROM term_bounds WHERE term IN (SELECT value FROM json_each(?))",
                (_json_list(touched),),
            )
        }
        rows, gone = [], []
        for term in touched:
            df_old, m_old, at_old = old.get(term, (0, 0.0, avgdl or 1.0))
            df = df_old + self.df.get(term, 0)
            if df <= 0:
                gone.append((term,))
                continue
            best, at = m_old, at_old
            per = self.frontier.get(term)
            if per and avgdl > 0:
                best = max(
                    max(factor(tf, dl, avgdl) for tf, dl in per.items()),
                    term_bound(m_old, at_old, avgdl),
                )
                at = avgdl
            rows.append((term, df, best, at))
        conn.executemany("DELETE FROM term_bounds WHERE term = ?", gone)
        conn.executemany(
            "INSERT OR REPLACE INTO term_bounds (term, df, m, avgdl) VALUES (?, ?, ?, ?)", rows
        )


def _json_list(terms: Iterable[str]) -> str:
    import json

    return json.dumps(list(terms))
