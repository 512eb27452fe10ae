from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated

import typer

from dcx.cli._boundary import run
from dcx.cli._options import FormatOpt, ObservedAtOpt, OutputFormat
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


def command(
    ctx: typer.Context,
    plan: Annotated[
        str, typer.Argument(help="The comparison plan (dcx_comparison_plan_v0, TOML).")
    ],
    freeze: Annotated[
        bool,
        typer.Option("--freeze", help="Write corpus.lock from the corpus as it is now, then run."),
    ] = False,
    report: Annotated[
        str | None,
        typer.Option(
            "--report",
            help="Write report.json, report.md and a self-contained report.html into this folder.",
        ),
    ] = None,
    include_queries: Annotated[
        bool,
        typer.Option(
            "--include-queries", help="Put the query text into the report (left out by default)."
        ),
    ] = False,
    observed_at: ObservedAtOpt = None,
    fmt: FormatOpt = OutputFormat.text,
) -> None:
    """Compare explicit recall profiles on a frozen corpus with trec_eval metrics.

    Runs every query of the plan once per profile through a real `dcx recall`
    process in a throwaway workspace, matches the returned content to the
    frozen documents, and reports recall, precision, MRR and nDCG at each k
    (ir-measures over pytrec_eval), provider latency beside caller wall time,
    unavailable and unanswerable queries. It measures retrieval, not outcome
    utility, and grants no activation. Needs no workspace.

    Example: dcx compare fixtures/compare/plan-file.toml --report out/compare
    """

    def call(g) -> Result:
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

    run(ctx, fmt, call, render)


def render(console, result: Result) -> None:
    from rich.table import Table

    from dcx.comparison.report import summary_rows

    data = result.data
    q = data["queries"]
    console.print(
        f"compare {data['plan']} · {data['granularity']} · {data['corpus']['documents']} documents · "
        f"{q['total']} queries ({q['unanswerable']} unanswerable)",
        markup=False,
    )
    head, rows = summary_rows(data, compact=True)
    table = Table(*head, box=None, pad_edge=False, header_style="bold")
    for row in rows:
        table.add_row(*row)
    console.print(table)
    console.print(
        "lat: provider latency (receipts), wall: the caller's dcx recall process, p50/p95 ms; "
        "unans: unanswerable queries that still got candidates",
        markup=False,
    )
    for row in data["profiles"]:
        for miss in row["unavailable"]:
            console.print(
                f"unavailable: {row['name']} {miss['query_id']} ({miss['reason_code']})",
                markup=False,
            )
    console.print(data["statement"], markup=False)
