from __future__ import annotations

from typing import Annotated

import typer

from dcx.cli._boundary import run
from dcx.cli._options import FormatOpt, OutputFormat
from dcx.core.result import Result


def command(
    ctx: typer.Context,
    decision_id: Annotated[
        str | None, typer.Option("--decision-id", help="Only this decision.")
    ] = None,
    since: Annotated[
        str | None,
        typer.Option("--since", help="Only decisions started at or after this RFC 3339 time."),
    ] = None,
    html: Annotated[
        str | None,
        typer.Option(
            "--html", help="Also write a self-contained HTML page with SVG charts to FILE."
        ),
    ] = None,
    workspaces: Annotated[
        list[str] | None,
        typer.Option(
            "-C", "--workspace", help="A goal's workspace to report on; repeat to combine goals."
        ),
    ] = None,
    fmt: FormatOpt = OutputFormat.text,
) -> None:
    """Measure decision quality from public files only: authority, recall, stale-claim
    rejection, evidence-driven changes, outcomes, calibration, the provider stop
    condition and the promotion gate (definitions in docs/report.md).

    Works on a fresh clone (no key, no profile) and on a merged history. `-C`
    after `report`, repeated, names each goal to combine. A packet that does
    not verify is left out and named; an accepted stale claim exits 1.

    Example: dcx report -C ../catalog -C ../checkout --html report.html
    """

    def call(g) -> Result:
        from dcx.core.workspace import find_workspace
        from dcx.ops.report import report

        chosen = [find_workspace(path) for path in workspaces] if workspaces else [g.ws()]
        return report(workspaces=chosen, decision_id=decision_id, since=since, html=html)

    run(ctx, fmt, call, render)


def render(console, result: Result) -> None:
    from dcx.cli.views.report import render_report

    render_report(console, result)
