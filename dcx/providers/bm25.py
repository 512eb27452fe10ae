"""The built-in ``bm25`` provider (SPEC §6.3): lexical recall over the local index.

- Scorer: Okapi BM25 as FTS5's ``bm25()`` computes it (k1 = 1.2, b = 0.75;
  IDF = ln((N - n + 0.5) / (n + 0.5)), floored at 1e-6). ``score`` is the
  negated value, so higher is better.
- Query: tokenised like the index (Unicode letters and digits; FTS5 itself
  lower-cases and strips diacritics inside each quoted string), de-duplicated,
  each term a quoted FTS5 string, OR-ed. Raw MATCH syntax never reaches FTS5.
- Ranking: exact top-k without ranking every match. ``bm25_search.postings_top_k``
  reads the index's own posting lists (``bm25_postings``) and scores with
  FTS5's arithmetic, MaxScore bounds proving the rest lose; a query with a
  non-ASCII term, or an index of the earlier format, goes to FTS5's ``bm25()``
  (``bm25_search.search``). Equal scores come in index order (a first build:
  source id, path, chunk ordinal).
- Scope: empty (every indexed source) or ``source:<id>[,<id>…]``; the scores
  are the whole index's (one shared scorer), the scope only filters.
- Read-only: the index is opened with ``mode=ro``; recall never re-indexes
  (a stale index is how stale recall arises, and the decision cycle catches it).
  The deadline is checked before and after the search, between SQLite VM
  steps (a progress handler) and before each block of each posting list the
  search reads; an answer that arrives late is not used.
"""

from __future__ import annotations

import re
import sqlite3
import time
import unicodedata
from typing import Any, NamedTuple

from dcx.core.workspace import Workspace
from dcx.providers.base import (
    Retrieval,
    RetrievalItem,
    RetrievalRequest,
    completed,
    unavailable,
)
from dcx.providers.bm25_index import IndexUnavailable, classify, index_path, open_read_only
from dcx.providers.bm25_search import Term, postings_top_k, scope_filter, search, term_stats
from dcx.providers.validate import admit

NAME = "bm25"
# the scorer and index format (SQLite's own version is not part of it: results
# must not change their receipts from one machine to the next)
VERSION = "dcx-bm25-fts5-v0"
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
    parts = value[len(REF_PREFIX) :].split("/", 3)
    if (
        len(parts) != 4
        or not all(parts)
        or not parts[2].isdigit()
        or not re.fullmatch(r"[0-9a-f]{64}|[0-9a-f]{40}", parts[1])
    ):
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
    names = scope_ref[len("source:") :].split(",")
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
            return unavailable(
                request, NAME, "provider_scope_unsupported", provider_version=self.version
            )
        try:
            conn, current = open_read_only(
                index_path(self.ws.index), busy_timeout=min(2.0, deadline - time.monotonic())
            )
        except IndexUnavailable as exc:
            return unavailable(request, NAME, exc.reason_code, provider_version=self.version)
        try:
            # FTS5 ranks inside one VM step, so the handler bounds the rest; the
            # checks before and after keep a late answer from being used
            conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 1000)
            if time.monotonic() > deadline:
                raise IndexUnavailable("provider_search_timeout")
            answer = self._search(conn, request, scope, postings=current, deadline=deadline)
            if time.monotonic() > deadline:
                raise IndexUnavailable("provider_search_timeout")
            return answer
        except IndexUnavailable as exc:
            return unavailable(request, NAME, exc.reason_code, provider_version=self.version)
        except sqlite3.Error as exc:
            return unavailable(
                request, NAME, classify(exc), provider_version=self.version, search_performed=True
            )
        finally:
            conn.close()

    def _sids(self, conn: sqlite3.Connection, scope: list[str]) -> list[int]:
        """The scope's source numbers; [] when it names every indexed source (no filter)."""
        if not scope:
            return []
        known = dict(conn.execute("SELECT source_id, sid FROM sources").fetchall())
        sids = []
        for name in scope:
            sid = known.get(name, known.get(f"source:{name}"))
            if sid is None:
                raise IndexUnavailable("scope_source_not_indexed")
            sids.append(int(sid))
        return [] if set(sids) >= set(known.values()) else sids

    def _search(
        self,
        conn: sqlite3.Connection,
        request: RetrievalRequest,
        scope: list[str],
        *,
        postings: bool,
        deadline: float,
    ) -> Retrieval:
        sids = self._sids(conn, scope)
        phrases = query_terms(request.query)
        fallback = None
        # one row past the limit says whether the cap applied; when items are dropped
        # (a ref over 512 characters, the content budget) more candidates are ranked
        for limit in (request.max_results + 1, request.max_results * _OVERFETCH + 1):
            ranked = (
                postings_top_k(conn, phrases, limit=limit, sids=sids, deadline=deadline)
                if postings
                else None
            )
            if ranked is None:  # an index of the earlier format, or a term that is not ASCII
                if fallback is None:
                    fallback = self._fallback(conn, phrases, sids)
                ranked = search(conn, fallback[0], limit=limit, **fallback[1])
            items, dropped, capped = admit(self._items(conn, ranked), request)
            if not dropped or len(ranked) < limit:
                break
        return completed(
            request,
            NAME,
            items,
            provider_version=self.version,
            items_dropped=dropped,
            result_cap_applied=capped,
        )

    def _fallback(
        self, conn: sqlite3.Connection, phrases: list[str], sids: list[int]
    ) -> tuple[list[Term], dict[str, Any]]:
        """The FTS5 search's inputs (``bm25_search.search``)."""
        meta = dict(
            conn.execute("SELECT key, value FROM meta WHERE key IN ('chunk_count', 'total_tokens')")
        )
        total, tokens = int(meta["chunk_count"]), int(meta["total_tokens"])
        where = scope_filter(conn, sids, total=total)
        return term_stats(conn, phrases), {
            "total": total,
            "scope": where,
            "avgdl": tokens / total if total else 0.0,
        }

    def _items(
        self, conn: sqlite3.Connection, ranked: list[tuple[int, float]]
    ) -> list[RetrievalItem]:
        if not ranked:
            return []
        marks = ",".join("?" * len(ranked))
        rowids = [r for r, _ in ranked]
        # FTS5's content table itself: a rowid IN (...) on the FTS5 table runs one FTS5
        # query per rowid
        bodies = dict(
            conn.execute(f"SELECT id, c0 FROM chunks_content WHERE id IN ({marks})", rowids)
        )
        where = {
            rowid: (source_id, path, ordinal, revision)
            for rowid, ordinal, path, revision, source_id in conn.execute(
                "SELECT cf.rowid, cf.ordinal, f.path, f.revision, s.source_id FROM chunk_files cf "
                "JOIN files f ON f.fid = cf.fid JOIN sources s ON s.sid = f.sid "
                f"WHERE cf.rowid IN ({marks})",
                rowids,
            )
        }
        out = []
        for rowid, score in ranked:
            source_id, path, ordinal, revision = where[rowid]
            out.append(
                RetrievalItem(
                    resource_ref=format_resource_ref(
                        ChunkRef(source_id, path, int(ordinal), revision)
                    ),
                    summary=f"Local lexical match in {source_id}",
                    content=bodies[rowid],
                    score=round(float(score), 6),
                )
            )
        return out


def find_by_content(ws: Workspace, content: str, limit: int) -> list[tuple[str, str]]:
    """(source_id, path) of the files whose chunks the index ranks best for ``content``.

    For matching a recalled item to its authority (``dcx.evidence.assembler``):
    at most ``limit`` hits within 5 seconds; an unreadable index finds nothing.
    """
    import time

    request = RetrievalRequest(
        namespace="decision-context",
        scope_ref="",
        query=content[:1000],
        query_summary="authority match",
        max_results=limit,
        timeout_seconds=5,
        observed_at="1970-01-01T00:00:00Z",
    )
    try:
        answer = Bm25Provider(ws).retrieve(request, deadline=time.monotonic() + 5)
    except Exception:
        return []
    found: list[tuple[str, str]] = []
    for item in answer.items:
        ref = parse_resource_ref(item.resource_ref)
        if ref is not None:
            found.append((ref.source_id, ref.path))
    return found
