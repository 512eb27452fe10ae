from __future__ import annotations

from dcx.cli._declare import Option, declare
from dcx.cli._globals import Globals
from dcx.cli._options import FORMAT
from dcx.core.result import Result


def render(console, result: Result) -> None:
    from dcx.cli.views.report import render_report

    render_report(console, result)


@declare(
    render=render,
    decision_id=Option("--decision-id", metavar="ID", help="Only this decision."),
    since=Option(
        "--since", metavar="TIME", help="Only decisions started at or after this RFC 3339 time."
    ),
    html=Option("--html", help="Also write a self-contained HTML page with SVG charts to FILE."),
    workspaces=Option(
        "-C",
        "--workspace",
        multiple=True,
        metavar="PATH",
        help="A goal's workspace to report on; repeat to combine goals.",
    ),
    fmt=FORMAT,
)
def command(
    g: Globals,
    *,
    decision_id: str | None,
    since: str | None,
    html: str | None,
    workspaces: list[str] | None,
    fmt: str,
) -> Result:
    """Measure decision quality from public files only: authority, recall, stale-claim
    rejection, evidence-driven changes, outcomes, calibration, the provider stop
    condition and the promotion gate (definitions in docs/report.md).

    Works on a fresh clone (no key, no profile) and on a merged history. `-C`
    after `report`, repeated, names each goal to combine. A packet that does
    not verify is left out and named; an accepted stale claim exits 1.

    Example: dcx report -C ../catalog -C ../checkout --html report.html
    """
    from dcx.core.workspace import find_workspace
    from dcx.ops.report import report

    chosen = [find_workspace(path) for path in workspaces] if workspaces else [g.ws()]
    return report(workspaces=chosen, decision_id=decision_id, since=since, html=html)
