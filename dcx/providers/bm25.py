"""The built-in ``bm25`` provider (SPEC §6.3): lexical recall over the local index.

- Scorer: Okapi BM25 as FTS5's ``bm25()`` computes it (k1 = 1.2, b = 0.75;
  IDF = ln((N - n + 0.5) / (n + 0.5)), floored at 1e-6). ``score`` is the
  negated value, so higher is better.
- Query: tokenised like the index (Unicode letters and digits; FTS5 itself
  lower-cases and strips diacritics inside each quoted string), de-duplicated,
  each term a quoted FTS5 string, OR-ed. Raw MATCH syntax never reaches FTS5.
  In an index of at least ``PRUNE_MIN_CHUNKS`` chunks, a term found in half of
  the chunks or more (IDF floored to ~0: it adds nothing to any score) is
  pruned so that it does not make half the index a candidate.
- Ranking: exact top-k without ranking every match (``bm25_search``: rows
  with a rare term are ranked by the full query; bounds prove the rest lose).
- Scope: empty (every indexed source) or ``source:<id>[,<id>…]``.
- Read-only: the index is opened with ``mode=ro``; recall never re-indexes
  (a stale index is how stale recall arises, and the decision cycle catches it).
  The deadline is checked before and after the search and, between SQLite
  VM steps, by a progress handler; an answer that arrives late is not used.
"""

from __future__ import annotations

import re
import sqlite3
import time
import unicodedata
from typing import NamedTuple

from dcx.providers.base import (
    Retrieval,
    RetrievalItem,
    RetrievalRequest,
    completed,
    unavailable,
)
from dcx.providers.bm25_index import IndexUnavailable, classify, index_path, open_read_only
from dcx.providers.bm25_search import Term, term_stats, top_k
from dcx.providers.validate import admit
from dcx.workspace import Workspace

NAME = "bm25"
# the scorer and index format (SQLite's own version is not part of it: results
# must not change their receipts from one machine to the next)
VERSION = "dcx-bm25-fts5-v0"
PRUNE_MIN_CHUNKS = 2000
REF_PREFIX = "bm25:"
_TERM_RE = re.compile(r"[^\W_]+")
_OVERFETCH = 2


class ChunkRef(NamedTuple):
    """What a bm25 ``resource_ref`` names: a chunk of one revision of one file."""

    source_id: str
    path: str  # relative to the source's locator root, '/'-separated (as the walker reports it)
    ordinal: int  # 0-based chunk number within the file
    revision: str  # blake3 hex of the file's bytes when it was indexed


def format_resource_ref(ref: ChunkRef) -> str:
    """``bm25:<source_id>/<revision>/<ordinal>/<path>``: source ids hold no '/', the path comes last."""
    return f"{REF_PREFIX}{ref.source_id}/{ref.revision}/{ref.ordinal}/{ref.path}"


def parse_resource_ref(value: str) -> ChunkRef | None:
    """The chunk a bm25 ``resource_ref`` names, or None if ``value`` is not one.

    A revision is 64 hex (a local file's blake3, a sha256 repository's blob
    id) or 40 hex (a sha1 repository's blob id).
    """
    if not value.startswith(REF_PREFIX):
        return None
    parts = value[len(REF_PREFIX):].split("/", 3)
    if len(parts) != 4 or not all(parts) or not parts[2].isdigit() or not re.fullmatch(r"[0-9a-f]{64}|[0-9a-f]{40}", parts[1]):
        return None
    return ChunkRef(parts[0], parts[3], int(parts[2]), parts[1])


def query_terms(query: str) -> list[str]:
    """Distinct query terms in order of first appearance (NFC, letters and digits)."""
    seen: dict[str, None] = {}
    for term in _TERM_RE.findall(unicodedata.normalize("NFC", query)):
        seen.setdefault(term, None)
    return list(seen)


def parse_scope(scope_ref: str) -> list[str] | None:
    """Source ids named by a bm25 scope ([] = all), or None if the scope is not a bm25 scope.

    ``source:authority:docs`` names the source ``authority:docs`` if there is one,
    else ``source:authority:docs`` (source ids often begin with ``source:``).
    """
    if scope_ref == "":
        return []
    if not scope_ref.startswith("source:"):
        return None
    names = scope_ref[len("source:"):].split(",")
    if not all(names):
        return None
    return names


class Bm25Provider:
    name = NAME

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.version = VERSION

    def retrieve(self, request: RetrievalRequest, *, deadline: float) -> Retrieval:
        scope = parse_scope(request.scope_ref)
        if scope is None:
            return unavailable(request, NAME, "provider_scope_unsupported", provider_version=self.version)
        try:
            conn = open_read_only(index_path(self.ws.index), busy_timeout=min(2.0, deadline - time.monotonic()))
        except IndexUnavailable as exc:
            return unavailable(request, NAME, exc.reason_code, provider_version=self.version)
        try:
            # FTS5 ranks inside one VM step, so the handler bounds the rest; the
            # checks before and after keep a late answer from being used
            conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 1000)
            if time.monotonic() > deadline:
                raise IndexUnavailable("provider_search_timeout")
            answer = self._search(conn, request, scope)
            if time.monotonic() > deadline:
                raise IndexUnavailable("provider_search_timeout")
            return answer
        except IndexUnavailable as exc:
            return unavailable(request, NAME, exc.reason_code, provider_version=self.version)
        except sqlite3.Error as exc:
            return unavailable(request, NAME, classify(exc), provider_version=self.version, search_performed=True)
        finally:
            conn.close()

    def _sids(self, conn: sqlite3.Connection, scope: list[str]) -> list[int]:
        known = dict(conn.execute("SELECT source_id, sid FROM sources").fetchall())
        sids = []
        for name in scope:
            sid = known.get(name, known.get(f"source:{name}"))
            if sid is None:
                raise IndexUnavailable("scope_source_not_indexed")
            sids.append(int(sid))
        return sids

    def _terms(self, conn: sqlite3.Connection, query: str, total: int) -> list[Term]:
        terms = term_stats(conn, query_terms(query))
        if total < PRUNE_MIN_CHUNKS:
            return terms
        # IDF floored to ~0: the term adds nothing to any score, only candidates
        return [t for t in terms if t.df is None or 2 * t.df < total]

    def _search(self, conn: sqlite3.Connection, request: RetrievalRequest, scope: list[str]) -> Retrieval:
        sids = self._sids(conn, scope)
        meta = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('chunk_count', 'total_tokens')"))
        total, tokens = int(meta["chunk_count"]), int(meta["total_tokens"])
        ranked = top_k(conn, self._terms(conn, request.query, total), total=total,
                       limit=request.max_results * _OVERFETCH + 1, sids=sids, avgdl=tokens / total if total else 0.0)
        bodies = dict(conn.execute(
            f"SELECT rowid, body FROM chunks WHERE rowid IN ({','.join('?' * len(ranked))})", [r for r, _ in ranked]
        ).fetchall()) if ranked else {}
        rows = [(rowid, score, bodies[rowid]) for rowid, score in ranked]
        where = {
            rowid: (source_id, path, ordinal, revision)
            for rowid, ordinal, path, revision, source_id in conn.execute(
                "SELECT cf.rowid, cf.ordinal, f.path, f.revision, s.source_id FROM chunk_files cf "
                "JOIN files f ON f.fid = cf.fid JOIN sources s ON s.sid = f.sid "
                f"WHERE cf.rowid IN ({','.join('?' * len(rows))})",
                [r[0] for r in rows],
            )
        } if rows else {}
        candidates = []
        for rowid, score, body in rows:
            source_id, path, ordinal, revision = where[rowid]
            candidates.append(
                RetrievalItem(
                    resource_ref=format_resource_ref(ChunkRef(source_id, path, int(ordinal), revision)),
                    summary=f"Local lexical match in {source_id}",
                    content=body,
                    score=round(float(score), 6),
                )
            )
        items, dropped, capped = admit(candidates, request)
        return completed(request, NAME, items, provider_version=self.version,
                         items_dropped=dropped, result_cap_applied=capped)
