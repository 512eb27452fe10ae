"""``dcx_provider_comparison_v0``: what ``dcx compare`` reports (SPEC §11).

A transient, public-safe projection: ``--format json`` prints it in ``data``
and ``--report DIR`` writes it as ``report.json``. It holds ids, docids
(paths relative to the corpus), counts, metric values and latencies — never
content, never a provider payload, never an absolute path, and query text
only when the caller asked for it (``--include-queries``). Every text field
passes the public-safety detector or the report is refused.
"""

from __future__ import annotations

from dcx.core.fields import (
    Bool,
    Const,
    Enum,
    Int,
    Number,
    Obj,
    Pattern,
    PrivateText,
    ReasonCode,
    Records,
    Shape,
    Summary,
    Text,
    Timestamp,
    Token,
)

SCHEMA = "dcx_provider_comparison_v0"
STATEMENT = (
    "This report measures retrieval against frozen relevance judgements. It does not measure "
    "outcome utility, and it grants no provider any activation."
)
MAX_ROWS = 8 * 1000


def _metric(doc: str) -> Number:
    return Number(lo=0, hi=1, nullable=True, doc=doc)


AT_K = Shape(
    "metrics_at_k",
    {
        "k": Int(lo=1, hi=8),
        "recall": _metric("Mean R@k (trec_eval) over the measured queries; null when none."),
        "precision": _metric("Mean P@k: relevant within k, divided by k."),
        "mrr": _metric("Mean RR@k: 1/rank of the first relevant document within k."),
        "ndcg": _metric("Mean nDCG@k: graded gains, log2 discount."),
    },
)
PERCENTILES = Shape(
    "percentiles",
    {
        "p50": Number(lo=0, nullable=True),
        "p95": Number(lo=0, nullable=True),
    },
    doc="Nearest-rank percentiles in milliseconds (0 under DCX_NOW, as every dcx latency).",
)
UNAVAILABLE = Shape("unavailable_query", {"query_id": Token(limit=64), "reason_code": ReasonCode()})
UNANSWERABLE = Shape(
    "unanswerable",
    {
        "queries": Int(lo=0, doc="Queries with no relevant document in the qrels."),
        "answered": Int(lo=0, doc="Of those, how many the provider answered (completed)."),
        "with_candidates": Int(
            lo=0, doc="Of those, how many still got candidates: none of them can be correct."
        ),
        "candidates": Int(lo=0, doc="Items returned for them, matched or not."),
    },
)
PROFILE = Shape(
    "comparison_profile",
    {
        "name": Token(limit=64),
        "provider": Enum(values=("bm25", "openviking", "extension", "none")),
        "provider_version": Token(nullable=True),
        "max_results": Int(lo=1, hi=8),
        "queries_run": Int(lo=0),
        "queries_measured": Int(
            lo=0, doc="Answerable queries the provider answered: the metrics' denominator."
        ),
        "unavailable": Records(
            shape=UNAVAILABLE, id_field="query_id", max_items=1000, ordered=True
        ),
        "items": Int(lo=0),
        "matched_items": Int(lo=0),
        "unmatched_items": Int(
            lo=0, doc="Returned items found in no frozen document: kept and counted."
        ),
        "spanning_items": Int(lo=0, doc="Matched items that run past the section they start in."),
        "metrics": Records(shape=AT_K, id_field="k", min_items=1, max_items=8, ordered=True),
        "latency_ms": Obj(
            shape=PERCENTILES, doc="The provider's latency, from the retrieval receipts."
        ),
        "wall_ms": Obj(
            shape=PERCENTILES, doc="The caller's wall time around each whole `dcx recall` process."
        ),
        "unanswerable": Obj(shape=UNANSWERABLE),
    },
)
PER_QUERY = Shape(
    "comparison_query",
    {
        "profile": Token(limit=64),
        "query_id": Token(limit=64),
        "answerable": Bool(),
        "status": Enum(values=("completed", "unavailable")),
        "reason_code": ReasonCode(nullable=True),
        "ranking": Records(
            shape=Shape("ranked", {"rank": Int(lo=1, hi=8), "docid": Text()}),
            id_field="docid",
            max_items=8,
            ordered=True,
        ),
        "items": Int(lo=0, hi=8),
        "unmatched": Int(lo=0, hi=8),
        "latency_ms": Int(lo=0, nullable=True),
        "wall_ms": Int(lo=0),
        "metrics": Records(
            shape=AT_K,
            id_field="k",
            max_items=8,
            ordered=True,
            doc="This query's values; empty for an unanswerable or unavailable query.",
        ),
    },
)
QUERY_TEXT = Shape(
    "comparison_query_text",
    {
        "query_id": Token(limit=64),
        "query": PrivateText(
            limit=1000, doc="Present only with --include-queries; checked by the detector."
        ),
        "query_summary": Summary(),
    },
)
SHAPE = Shape(
    SCHEMA,
    {
        "schema_version": Const(value=SCHEMA),
        "generated_at": Timestamp(),
        "plan": Text(doc="The plan file, relative to where dcx ran (or its name)."),
        "measures": Const(value="retrieval"),
        "outcome_utility_measured": Const(value=False),
        "activation_granted": Const(value=False),
        "statement": Text(),
        "granularity": Enum(values=("file", "section")),
        "corpus": Obj(
            shape=Shape(
                "comparison_corpus",
                {
                    "files": Int(lo=1),
                    "documents": Int(
                        lo=1, doc="Units the qrels name: files, or sections at section granularity."
                    ),
                    # a digest dcx computes, not a token a person types: its shape, not the
                    # detector (64 hex is the detector's bare-secret length, SPEC §3.4)
                    "lock_blake3": Pattern(
                        regex="[0-9a-f]{64}",
                        limit=64,
                        what="a blake3 hex digest",
                        doc="blake3 of the corpus.lock bytes the run was checked against.",
                    ),
                },
            )
        ),
        "queries": Obj(
            shape=Shape(
                "comparison_queries",
                {
                    "total": Int(lo=1),
                    "answerable": Int(lo=0),
                    "unanswerable": Int(lo=0),
                },
            )
        ),
        "profiles": Records(shape=PROFILE, id_field="name", min_items=1, max_items=8, ordered=True),
        "per_query": Records(shape=PER_QUERY, max_items=MAX_ROWS, ordered=True),
        "query_text": Records(
            shape=QUERY_TEXT, id_field="query_id", max_items=1000, ordered=True, optional=True
        ),
    },
    doc="A provider comparison on a frozen corpus: retrieval metrics, never outcome utility, no activation.",
)
