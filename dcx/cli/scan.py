from __future__ import annotations

import sys
from typing import Annotated

import typer

from dcx.cli._boundary import run
from dcx.cli._options import AgentOpt, FormatOpt, ObservedAtOpt, OutputFormat
from dcx.cli._progress import HashProgress
from dcx.core.result import Result


def command(
    ctx: typer.Context,
    source: Annotated[
        list[str] | None,
        typer.Option("--source", help="Scan only this source id (repeatable; may name an on-demand source)."),
    ] = None,
    agent_id: AgentOpt = None,
    observed_at: ObservedAtOpt = None,
    fmt: FormatOpt = OutputFormat.text,
) -> None:
    """Scan sources against their committed cursors and store one receipt per source.

    Scans the enabled incremental and snapshot sources (or those named with
    --source), reports added, modified and deleted items, and stores a
    decision_source_scan_receipt_v0 packet for each: opaque refs and counts
    only. Never reads content exactly and never moves a cursor; a failing
    source is reported unavailable with a reason (status partial, exit 0).

    Example: dcx scan --source source:authority:docs
    """
    fmt_value = getattr(fmt, "value", fmt)

    def call(g) -> Result:
        from dcx.ops.scan import scan

        if fmt_value == "text" and sys.stderr.isatty():
            with HashProgress(no_color=g.no_color) as progress:
                return scan(ws=g.ws(), agent_id=agent_id, source_ids=source or [], clock=g.clock(observed_at),
                            progress=progress)
        return scan(ws=g.ws(), agent_id=agent_id, source_ids=source or [], clock=g.clock(observed_at))

    run(ctx, fmt, call, render)


def render(console, result: Result) -> None:
    from dcx.cli.views.common import grid

    receipts = result.data["receipts"]
    rows = []
    for receipt in receipts:
        changes = str(receipt["changed_count"])
        if receipt["telemetry"]["result_cap_applied"]:
            changes += " (capped)"
        rows.append([receipt["source_id"], receipt["status"], changes, receipt.get("reason_code") or "-",
                     receipt["receipt_ref"].rsplit("-", 1)[1][:12]])  # `dcx show` takes a hex prefix
    if rows:
        grid(console, ("source", "status", "changes", "reason", "receipt"), rows)
    summary = f"{len(receipts)} receipt(s) stored · cursors unchanged"
    if result.status == "partial":
        summary += " · partial: a source was unavailable (fail-open)"
    console.print(summary, markup=False)
