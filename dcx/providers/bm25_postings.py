"""The index's own posting lists: per term, per source, per block of rowids (``postings``).

FTS5 keeps its doclists private: the only way to a row's term frequencies is
``bm25()`` (or ``highlight()``), and every statement that calls ``bm25()``
first walks the whole doclist of every query term to count it. For a term in
a fifth of a 100k-chunk index that alone is milliseconds. So the indexer also
keeps, for each (term, source, block of ``BLOCK`` rowids), the rows holding the
term with its tf and the row's token count ``dl``; the search
(``bm25_search.postings_top_k``) reads only the lists of the query's terms
within the scope's sources and computes FTS5's own formula itself.

Row format (``data``): one little-endian ``uint16`` array of ``3 n`` values —
the rows' offsets within the block (sorted), then their tf, then their dl.
Offsets fit since a block spans 4096 rowids; tf and dl fit since a chunk holds
at most 2000 characters (so at most 1000 tokens).

Maintenance: an update removes the offsets of every chunk it deletes from the
rows of that chunk's terms, and appends its new chunks (fresh rowids, always
higher) to the last block. Only the touched rows are rewritten; a test compares
an updated index with a from-scratch build of the same files.
"""

from __future__ import annotations

import sqlite3
import sys
from array import array
from bisect import bisect_left
from collections import Counter

BLOCK_BITS = 12
BLOCK = 1 << BLOCK_BITS
_MAX = 0xFFFF
_SWAP = sys.byteorder != "little"


def decode(data: bytes) -> tuple[array, array, array]:
    """(offsets, tfs, dls) of one stored row."""
    values = array("H")
    values.frombytes(data)
    if _SWAP:
        values.byteswap()
    n = len(values) // 3
    return values[:n], values[n : 2 * n], values[2 * n :]


def encode(offsets: array, tfs: array, dls: array) -> bytes:
    values = offsets + tfs + dls
    if _SWAP:
        values.byteswap()
    return values.tobytes()


class PostingsBuilder:
    """What one index run adds to and removes from the posting lists.

    Both are kept per (sid, block), then per term, so a chunk's terms cost a dict
    lookup and three appends each. Chunks come in rowid order, except those whose
    terms FTS5 counts at the end of the run (non-ASCII text): their rows are sorted
    when stored.
    """

    def __init__(self) -> None:
        # (sid, block) -> term -> (offset, tf, dl, offset, tf, dl, ...) of the chunks added
        self.added: dict[tuple[int, int], dict[str, array]] = {}
        self.removed: dict[tuple[int, int], dict[str, set[int]]] = {}
        self.unsorted: set[tuple[int, int]] = set()

    def add(
        self, rowid: int, sid: int, counts: Counter[str], dl: int, *, late: bool = False
    ) -> None:
        if dl > _MAX:
            raise ValueError(f"a chunk of {dl} tokens (chunks hold at most 2000 characters)")
        place, offset = (sid, rowid >> BLOCK_BITS), rowid & (BLOCK - 1)
        terms = self.added.get(place)
        if terms is None:
            terms = self.added[place] = {}
        if late:
            self.unsorted.add(place)
        for term, tf in counts.items():
            try:
                terms[term].extend((offset, tf, dl))
            except KeyError:
                terms[term] = array("H", (offset, tf, dl))

    def remove(self, rowid: int, sid: int, terms: set[str] | Counter[str]) -> None:
        place, offset = (sid, rowid >> BLOCK_BITS), rowid & (BLOCK - 1)
        removed = self.removed.setdefault(place, {})
        for term in terms:
            removed.setdefault(term, set()).add(offset)

    def _keys(self) -> list[tuple[str, int, int]]:
        keys = {
            (term, sid, block)
            for touched in (self.added, self.removed)
            for (sid, block), terms in touched.items()
            for term in terms
        }
        return sorted(keys)

    def store(self, conn: sqlite3.Connection, *, fresh: bool) -> None:
        """Write the touched rows (``fresh``: the table is empty, nothing to read back)."""
        if fresh:
            self._store_fresh(conn)
            return
        keys = self._keys()
        stored: dict[tuple[str, int, int], bytes] = {}
        if not fresh and keys:
            # one sorted join instead of a lookup per row: the rows come in b-tree order
            conn.execute(
                "CREATE TEMP TABLE touched (term TEXT, sid INTEGER, block INTEGER, "
                "PRIMARY KEY (term, sid, block)) WITHOUT ROWID"
            )
            try:
                conn.executemany("INSERT INTO temp.touched VALUES (?, ?, ?)", keys)
                stored = {
                    (term, sid, block): data
                    for term, sid, block, data in conn.execute(
                        "SELECT p.term, p.sid, p.block, p.data FROM temp.touched t "
                        "JOIN postings p ON p.term = t.term AND p.sid = t.sid AND p.block = t.block"
                    )
                }
            finally:
                conn.execute("DROP TABLE temp.touched")
        rows: list[tuple[str, int, int, bytes]] = []
        gone: list[tuple[str, int, int]] = []
        for key in keys:
            term, sid, block = key
            old = stored.get(key)
            if old is None:
                offsets, tfs, dls = array("H"), array("H"), array("H")
            else:
                offsets, tfs, dls = decode(old)
            dropped = self.removed.get((sid, block), {}).get(term)
            if dropped:
                for offset in sorted(dropped, reverse=True):
                    i = bisect_left(offsets, offset)
                    if i < len(offsets) and offsets[i] == offset:
                        del offsets[i], tfs[i], dls[i]
            new = self.added.get((sid, block), {}).get(term)
            if new is not None:
                # new chunks have rowids above every stored one: they go after them
                offsets.extend(new[0::3])
                tfs.extend(new[1::3])
                dls.extend(new[2::3])
                if (sid, block) in self.unsorted:
                    merged = sorted(zip(offsets, tfs, dls, strict=True))
                    offsets = array("H", (p[0] for p in merged))
                    tfs = array("H", (p[1] for p in merged))
                    dls = array("H", (p[2] for p in merged))
            if offsets:
                rows.append((term, sid, block, encode(offsets, tfs, dls)))
            elif old is not None:
                gone.append(key)
        conn.executemany("DELETE FROM postings WHERE term = ? AND sid = ? AND block = ?", gone)
        conn.executemany(
            "INSERT OR REPLACE INTO postings (term, sid, block, data) VALUES (?, ?, ?, ?)", rows
        )
        self.added.clear()
        self.removed.clear()
        self.unsorted.clear()

    def _store_fresh(self, conn: sqlite3.Connection) -> None:
        rows = []
        for (sid, block), terms in self.added.items():
            late = (sid, block) in self.unsorted
            for term, values in terms.items():
                offsets, tfs, dls = values[0::3], values[1::3], values[2::3]
                if late:
                    merged = sorted(zip(offsets, tfs, dls, strict=True))
                    offsets = array("H", (p[0] for p in merged))
                    tfs = array("H", (p[1] for p in merged))
                    dls = array("H", (p[2] for p in merged))
                rows.append((term, sid, block, encode(offsets, tfs, dls)))
        rows.sort(key=lambda row: row[:3])  # b-tree order: every insert appends
        conn.executemany("INSERT INTO postings (term, sid, block, data) VALUES (?, ?, ?, ?)", rows)
        self.added.clear()
        self.unsorted.clear()
