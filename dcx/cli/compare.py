from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from dcx.cli._declare import Argument, Option, declare
from dcx.cli._globals import Globals
from dcx.cli._options import FORMAT, OBSERVED_AT
from dcx.core.result import Result


@contextlib.contextmanager
def _progress(fmt: str, no_color: bool) -> Iterator[Callable[[str, int, int], None] | None]:
    """A rich progress line on stderr, only on a terminal and never in json mode."""
    if getattr(fmt, "value", fmt) == "json" or not sys.stderr.isatty():
        yield None
        return
    from rich.progress import Progress, SpinnerColumn, TextColumn

    from dcx.cli._render import console

    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        console=console(stderr=True, no_color=no_color),
        transient=True,
    ) as bar:
        task = bar.add_task("comparing", total=None)

        def tick(profile: str, done: int, total: int) -> None:
            bar.update(task, description=f"{profile}: query {done}/{total}")

        yield tick


def render(page, result: Result) -> None:
    from dcx.comparison.report import summary_rows

    data = result.data
    q = data["queries"]
    page.line(
        f"compare {data['plan']} · {data['granularity']} · {data['corpus']['documents']} documents · "
        f"{q['total']} queries ({q['unanswerable']} unanswerable)"
    )
    head, rows = summary_rows(data, compact=True)
    page.table(head, rows)
    page.line(
        "lat: provider latency (receipts), wall: the caller's dcx recall process, p50/p95 ms; "
        "unans: unanswerable queries that still got candidates"
    )
    for row in data["profiles"]:
        for miss in row["unavailable"]:
            page.line(f"unavailable: {row['name']} {miss['query_id']} ({miss['reason_code']})")
    page.line(data["statement"])


@declare(
    render=render,
    plan=Argument(help="The comparison plan (dcx_comparison_plan_v0, TOML)."),
    freeze=Option(
        "--freeze", type=bool, help="Write corpus.lock from the corpus as it is now, then run."
    ),
    report=Option(
        "--report",
        help="Write report.json, report.md and a self-contained report.html into this folder.",
    ),
    include_queries=Option(
        "--include-queries",
        type=bool,
        help="Put the query text into the report (left out by default).",
    ),
    observed_at=OBSERVED_AT,
    fmt=FORMAT,
)
def command(
    g: Globals,
    *,
    plan: str,
    freeze: bool,
    report: str | None,
    include_queries: bool,
    observed_at: str | None,
    fmt: str,
) -> Result:
    """Compare explicit recall profiles on a frozen corpus with trec_eval metrics.

    Runs every query of the plan once per profile through a real `dcx recall`
    process in a throwaway workspace, matches the returned content to the
    frozen documents, and reports recall, precision, MRR and nDCG at each k
    (ir-measures over pytrec_eval), provider latency beside caller wall time,
    unavailable and unanswerable queries. It measures retrieval, not outcome
    utility, and grants no activation. Needs no workspace.

    Example: dcx compare fixtures/compare/plan-file.toml --report out/compare
    """
    from dcx.ops.compare import compare

    with _progress(fmt, g.no_color) as progress:
        return compare(
            plan_path=Path(plan),
            freeze=freeze,
            report_dir=Path(report) if report is not None else None,
            include_queries=include_queries,
            clock=g.clock(observed_at),
            progress=progress,
        )
