"""``dcx compare PLAN``: explicit profiles on a frozen corpus, through the real recall command (SPEC §11).

Order: read and check the plan, its queries, its qrels and every profile
file (any problem is exit 2 naming the file and line, before anything
runs); then the corpus against its lock (``--freeze`` writes the lock first;
a difference is exit 1 ``corpus_changed``); then each profile in a throwaway
workspace, one ``dcx recall`` subprocess per query; then the metrics
(ir-measures over pytrec_eval) and the report. The command needs no
workspace of its own and writes nothing but the lock and the report folder.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from dcx.comparison import corpus as corpus_mod
from dcx.comparison import metrics
from dcx.comparison.plan import Plan, Query, load_plan, load_qrels, load_queries
from dcx.comparison.runner import QueryRun, SetupError, effective_max_results, run_profile
from dcx.core.clock import Clock
from dcx.core.errors import DcxError, InvalidInput
from dcx.core.result import Result
from dcx.packets import comparison as packet
from dcx.state.profile import Profile, read_profile


def _profiles(plan: Plan) -> list[Profile]:
    out = []
    for entry in plan.profiles:
        field = f"{entry.field}.profile"
        try:
            profile = read_profile(entry.profile, plan.shown(entry.profile))
        except DcxError as exc:
            raise plan.error(field, f"not a valid profile ({exc.message})") from None
        if not profile.enabled or not profile.enabled_agents:
            raise plan.error(
                field,
                f"{plan.shown(entry.profile)} is not enabled for an agent "
                "(enabled = true and enabled_agents are needed to recall)",
            )
        if profile.context_provider.provider == "none":
            raise plan.error(
                field, f"{plan.shown(entry.profile)} has no [context_provider]: nothing to compare"
            )
        out.append(profile)
    return out


def _freeze(plan: Plan, body: dict[str, Any]) -> None:
    from dcx.core.fsutil import atomic_write

    atomic_write(plan.lock, corpus_mod.lock_bytes(body))


def _profile_row(
    name: str,
    profile: Profile,
    max_results: int,
    runs: tuple[QueryRun, ...],
    qrels: dict[str, dict[str, int]],
    ks: tuple[int, ...],
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    answerable = {q for q, judged in qrels.items() if any(g > 0 for g in judged.values())}
    measured = {
        r.query_id: list(r.ranking)
        for r in runs
        if r.status == "completed" and r.query_id in answerable
    }
    values = {k: metrics.per_query(qrels, measured, k) for k in ks}
    at_k = [
        {"k": k, **{m: metrics.mean([values[k][q][m] for q in measured]) for m in metrics.NAMES}}
        for k in ks
    ]
    versions = sorted({r.provider_version for r in runs if r.provider_version})
    row = {
        "name": name,
        "provider": profile.context_provider.provider,
        "provider_version": versions[0] if len(versions) == 1 else None,
        "max_results": max_results,
        "queries_run": len(runs),
        "queries_measured": len(measured),
        **_run_counts(runs),
        "metrics": at_k,
        "latency_ms": _percentiles(
            [r.latency_ms for r in runs if r.latency_ms is not None and r.status == "completed"]
        ),
        "wall_ms": _percentiles([r.wall_ms for r in runs]),
        "unanswerable": _unanswerable([r for r in runs if r.query_id not in answerable]),
    }
    return row, [_query_row(name, r, answerable, measured, values, ks) for r in runs]


def _run_counts(runs: tuple[QueryRun, ...]) -> dict[str, Any]:
    """A profile's unavailable queries and its item counts."""
    return {
        "unavailable": [
            {"query_id": r.query_id, "reason_code": r.reason_code or "unavailable"}
            for r in runs
            if r.status != "completed"
        ],
        "items": sum(r.items for r in runs),
        "matched_items": sum(r.items - r.unmatched for r in runs),
        "unmatched_items": sum(r.unmatched for r in runs),
        "spanning_items": sum(r.spanning for r in runs),
    }


def _unanswerable(hard: list[QueryRun]) -> dict[str, int]:
    """What a profile made of the queries no judged document answers."""
    return {
        "queries": len(hard),
        "answered": sum(r.status == "completed" for r in hard),
        "with_candidates": sum(r.items > 0 for r in hard),
        "candidates": sum(r.items for r in hard),
    }


def _query_row(
    name: str,
    run: QueryRun,
    answerable: set[str],
    measured: dict[str, list[str]],
    values: dict[int, Any],
    ks: tuple[int, ...],
) -> dict[str, Any]:
    return {
        "profile": name,
        "query_id": run.query_id,
        "answerable": run.query_id in answerable,
        "status": run.status,
        "reason_code": run.reason_code,
        "ranking": [{"rank": i, "docid": d} for i, d in enumerate(run.ranking, start=1)],
        "items": run.items,
        "unmatched": run.unmatched,
        "latency_ms": run.latency_ms,
        "wall_ms": run.wall_ms,
        "metrics": [{"k": k, **values[k][run.query_id]} for k in ks]
        if run.query_id in measured
        else [],
    }


def _percentiles(values: list[float]) -> dict[str, float | None]:
    return {"p50": metrics.percentile(values, 50), "p95": metrics.percentile(values, 95)}


def compare(
    *,
    plan_path: Path,
    freeze: bool = False,
    report_dir: Path | None = None,
    include_queries: bool = False,
    clock: Clock,
    progress: Callable[[str, int, int], None] | None = None,
) -> Result:
    from blake3 import blake3

    plan = load_plan(plan_path)
    queries = load_queries(plan)
    documents = corpus_mod.read_corpus(plan.corpus, plan.include, skip=(plan.lock,))
    docids = {u.docid for u in corpus_mod.units(documents, plan.granularity)}
    qrels = load_qrels(plan, queries, docids)
    profiles = _profiles(plan)
    metrics.require()  # before the runs, not after them
    body = corpus_mod.lock_body(
        plan, documents, plan.queries_path.read_bytes(), plan.qrels_path.read_bytes()
    )
    if freeze:
        _freeze(plan, body)
    corpus_mod.check_lock(plan, body)
    matcher = corpus_mod.Matcher(documents, plan.granularity)
    rows: list[dict[str, Any]] = []
    per_query: list[dict[str, Any]] = []
    for entry, profile in zip(plan.profiles, profiles, strict=True):
        try:
            runs = run_profile(
                plan, entry, profile, queries, matcher=matcher, clock=clock, progress=progress
            )
        except SetupError as exc:
            raise plan.error(exc.field, exc.problem, code="compare_setup_failed") from None
        row, rows_q = _profile_row(
            entry.name, profile, effective_max_results(plan, entry), runs, qrels, plan.k
        )
        rows.append(row)
        per_query.extend(rows_q)
    answerable = sum(1 for q in queries if any(g > 0 for g in qrels.get(q.query_id, {}).values()))
    report: dict[str, Any] = {
        "schema_version": packet.SCHEMA,
        "generated_at": clock.now(),
        "plan": plan.display,
        "measures": "retrieval",
        "outcome_utility_measured": False,
        "activation_granted": False,
        "statement": packet.STATEMENT,
        "granularity": plan.granularity,
        "corpus": {
            "files": len(documents),
            "documents": len(docids),
            "lock_blake3": blake3(plan.lock.read_bytes()).hexdigest(),
        },
        "queries": {
            "total": len(queries),
            "answerable": answerable,
            "unanswerable": len(queries) - answerable,
        },
        "profiles": rows,
        "per_query": per_query,
    }
    if include_queries:
        report["query_text"] = [_query_text(q) for q in queries]
    report = packet.SHAPE.check(report)
    warnings = [
        f"{row['name']}: {len(row['unavailable'])} of {row['queries_run']} queries unavailable"
        for row in rows
        if row["unavailable"]
    ]
    if report_dir is not None:
        from dcx.comparison.report import write_report

        write_report(report_dir, report)
    return Result("compare", report, status="partial" if warnings else "ok", warnings=warnings)


def _query_text(query: Query) -> dict[str, str]:
    from dcx.core import public

    try:
        public.check_text(query.query, field="query", limit=1000)
    except DcxError:
        raise InvalidInput(
            f"--include-queries: query {query.query_id} does not pass the public-safety check",
            code="unsafe_public_text",
            hint="leave --include-queries out",
        ) from None
    return {"query_id": query.query_id, "query": query.query, "query_summary": query.query_summary}
