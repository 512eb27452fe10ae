"""Retrieval metrics with trec_eval semantics, computed by ``ir-measures`` over ``pytrec_eval`` (SPEC §11).

dcx does not compute a metric itself: it hands the qrels and each query's
ranking (scores strictly decreasing with rank, so trec_eval's tie-breaking
never applies) to the pytrec_eval provider of ir-measures and averages the
per-query values over the measured queries. trec_eval semantics therefore
hold: a document is relevant when its grade is ≥ 1; ``P@k`` divides by k even
when fewer than k came back; ``nDCG@k`` uses the grades as linear gains and a
log2 rank discount; ``RR@k`` (whose mean is MRR) is 1/rank of the first
relevant document within k — computed as trec_eval's ``recip_rank`` over the
ranking cut at k, because the pytrec_eval provider of ir-measures accepts
``RR@k`` but ignores its k (a test with hand-computed values caught it). A measured query that ranked nothing scores 0
(pytrec_eval leaves it out; dcx puts it back as 0, as ``trec_eval -c`` does).

The libraries are imported here only: they are the optional ``compare``
dependency group, and nothing else in dcx needs them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from dcx.core.errors import DcxError, ExitCode

NAMES = ("recall", "precision", "mrr", "ndcg")


class MissingDependency(DcxError):
    exit_code = ExitCode.INVALID_INPUT
    default_code = "compare_dependency_missing"


def _measures(k: int) -> dict[str, Any]:
    try:
        import ir_measures
        from ir_measures import RR, P, R, nDCG
    except ImportError:
        raise MissingDependency(
            "dcx compare needs ir-measures and pytrec-eval-terrier",
            hint="pip install 'dcx[compare]' (make install does)",
        ) from None
    if not ir_measures.pytrec_eval.is_available():
        raise MissingDependency(
            "dcx compare needs pytrec-eval-terrier", hint="pip install 'dcx[compare]'"
        )
    # RR without a cut-off: the pytrec_eval provider of ir-measures 0.4 accepts RR@k but
    # silently ignores the k (trec_eval's recip_rank has none), so dcx cuts the run at k instead
    return {"recall": R @ k, "precision": P @ k, "mrr": RR, "ndcg": nDCG @ k}


def require() -> None:
    """Fail now (exit 2, with the install hint) when the ``compare`` extra is missing."""
    _measures(1)


def per_query(
    qrels: Mapping[str, Mapping[str, int]], rankings: Mapping[str, Sequence[str]], k: int
) -> dict[str, dict[str, float]]:
    """{query_id: {metric: value}} at cut-off k for every query in ``rankings``."""
    import ir_measures

    measures = _measures(k)
    by_measure = {str(m): name for name, m in measures.items()}
    judged = [
        ir_measures.Qrel(q, d, g) for q in rankings for d, g in sorted(qrels.get(q, {}).items())
    ]
    run = [
        ir_measures.ScoredDoc(q, d, float(len(docs) - i))
        for q, docs in rankings.items()
        for i, d in enumerate(docs[:k])
    ]
    out = {q: dict.fromkeys(NAMES, 0.0) for q in rankings}
    if judged and run:
        for metric in ir_measures.pytrec_eval.iter_calc(list(measures.values()), judged, run):
            out[metric.query_id][by_measure[str(metric.measure)]] = float(metric.value)
    return out


def mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def percentile(values: Sequence[float], p: float) -> float | None:
    """Nearest-rank percentile: the smallest value with at least p% of the values at or below it."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]
