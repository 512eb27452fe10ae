"""The built-in ``bm25`` provider (SPEC §6.3): lexical recall over the local index.

- Engine: tantivy (``bm25_index``). Scorer: Okapi BM25 as tantivy computes it
  (k1 = 1.2, b = 0.75, IDF = ln(1 + (N - n + 0.5) / (n + 0.5)), the chunk's
  length as tantivy's field norm); ``score`` is tantivy's, higher is better.
- Query: split by the index's own analyzer (``bm25_index.text_analyzer``), the
  terms de-duplicated after it ("Purge purge PURGE" is one term), each a term
  query, OR-ed. Query syntax never reaches a parser: there is none.
- Scope: empty (every indexed source) or ``source:<id>[,<id>…]``: a term filter
  on the ``source`` field inside the query, scoring nothing, so the scope's
  best chunks are found however few they are; the statistics stay the whole
  index's (one shared scorer, the scope only filters).
- Equal scores come in index order (a first build: source id, path, chunk
  ordinal).
- Read-only: the index is opened without creating or writing a file; recall
  never re-indexes (a stale index is how stale recall arises, and the decision
  cycle catches it). The deadline is checked before opening, before the search
  and after it (a tantivy search is one uninterruptible call of a few
  milliseconds); an answer that arrives late is not used.
"""

from __future__ import annotations

import contextlib
import re
import time
from typing import Any, NamedTuple

from dcx.core.workspace import Workspace
from dcx.providers.base import (
    Retrieval,
    RetrievalItem,
    RetrievalRequest,
    completed,
    unavailable,
)
from dcx.providers.bm25_index import IndexUnavailable, Record, open_read_only, text_analyzer
from dcx.providers.validate import admit

NAME = "bm25"
# the scorer and index format (the tantivy package's own version is not part of it:
# pyproject.toml pins one minor release, and receipts must not differ by machine)
VERSION = "dcx-bm25-tantivy-v1"
REF_PREFIX = "bm25:"
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
    """Distinct terms of ``query`` after the index's analyzer, in order of first appearance."""
    return list(dict.fromkeys(text_analyzer().analyze(query)))


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
        # the engine loads with the provider, before the retrieval's clock starts: a
        # receipt's latency_ms is the search's, not Python's import of tantivy (a few
        # ms once per process). A failed import fails the retrieval, where it is contained.
        with contextlib.suppress(ImportError):
            import tantivy  # noqa: F401

    def retrieve(self, request: RetrievalRequest, *, deadline: float) -> Retrieval:
        scope = parse_scope(request.scope_ref)
        if scope is None:
            return unavailable(
                request, NAME, "provider_scope_unsupported", provider_version=self.version
            )
        try:
            if time.monotonic() > deadline:
                raise IndexUnavailable("provider_search_timeout")
            index, record = open_read_only(self.ws.index)
            sources = self._sources(record, scope)
        except IndexUnavailable as exc:
            return unavailable(request, NAME, exc.reason_code, provider_version=self.version)
        try:
            return self._search(index, request, sources, deadline=deadline)
        except IndexUnavailable as exc:
            return unavailable(
                request, NAME, exc.reason_code, provider_version=self.version, search_performed=True
            )
        except Exception:  # tantivy reports a damaged segment as ValueError/OSError text
            return unavailable(
                request, NAME, "index_corrupt", provider_version=self.version, search_performed=True
            )

    def _sources(self, record: Record, scope: list[str]) -> list[str]:
        """The scope's source ids; [] when it names every indexed source (no filter)."""
        if not scope:
            return []
        known = set(record.sources)
        out = []
        for name in scope:
            sid = name if name in known else f"source:{name}"
            if sid not in known:
                raise IndexUnavailable("scope_source_not_indexed")
            out.append(sid)
        return [] if set(out) >= known else sorted(set(out))

    def _search(
        self, index: Any, request: RetrievalRequest, sources: list[str], *, deadline: float
    ) -> Retrieval:
        import tantivy

        terms = query_terms(request.query)
        schema = index.schema
        text = tantivy.Query.boolean_query(
            [
                (tantivy.Occur.Should, tantivy.Query.term_query(schema, "text", t, "freq"))
                for t in terms
            ]
        )
        query = text
        if sources:
            # a filter that scores nothing: the scope's own best chunks, at whole-index scores
            # term queries, not a term set: their postings seek (a set is read whole)
            named = [tantivy.Query.term_query(schema, "source", sid, "basic") for sid in sources]
            either = (
                named[0]
                if len(named) == 1
                else tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in named])
            )
            where = tantivy.Query.const_score_query(either, 0.0)
            query = tantivy.Query.boolean_query(
                [(tantivy.Occur.Must, text), (tantivy.Occur.Must, where)]
            )
        searcher = index.searcher()
        items: tuple[RetrievalItem, ...] = ()
        dropped, capped = 0, False
        # one hit past the limit says whether the cap applied; when items are dropped
        # (a ref over 512 characters, the content budget) more candidates are ranked
        for limit in (request.max_results + 1, request.max_results * _OVERFETCH + 1):
            if time.monotonic() > deadline:
                raise IndexUnavailable("provider_search_timeout")
            hits = searcher.search(query, limit, count=False).hits if terms else []
            if time.monotonic() > deadline:
                raise IndexUnavailable("provider_search_timeout")
            items, dropped, capped = admit(self._items(searcher, hits), request)
            if not dropped or len(hits) < limit:
                break
        return completed(
            request,
            NAME,
            items,
            provider_version=self.version,
            items_dropped=dropped,
            result_cap_applied=capped,
        )

    def _items(self, searcher: Any, hits: list[tuple[float, Any]]) -> list[RetrievalItem]:
        out = []
        for score, address in hits:
            doc = searcher.doc(address)
            source_id = doc.get_first("source")
            ref = ChunkRef(
                source_id,
                doc.get_first("path"),
                int(doc.get_first("ordinal")),
                doc.get_first("revision"),
            )
            out.append(
                RetrievalItem(
                    resource_ref=format_resource_ref(ref),
                    summary=f"Local lexical match in {source_id}",
                    content=doc.get_first("text"),
                    score=round(float(score), 6),
                )
            )
        return out


def find_by_content(ws: Workspace, content: str, limit: int) -> list[tuple[str, str]]:
    """(source_id, path) of the files whose chunks the index ranks best for ``content``.

    For matching a recalled item to its authority (``dcx.evidence.assembler``):
    at most ``limit`` hits within 5 seconds; an unreadable index finds nothing.
    """
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
