from __future__ import annotations

import sys
from typing import Any

from dcx.cli._declare import Option, declare
from dcx.cli._globals import Globals
from dcx.cli._options import AGENT, FORMAT, OBSERVED_AT
from dcx.core.result import Result


def render(page, result: Result) -> None:

    receipts = result.data["receipts"]
    rows = []
    for receipt in receipts:
        changes = str(receipt["changed_count"])
        if receipt["telemetry"]["result_cap_applied"]:
            changes += " (capped)"
        rows.append(
            [
                receipt["source_id"],
                receipt["status"],
                changes,
                receipt.get("reason_code") or "-",
                receipt["receipt_ref"].rsplit("-", 1)[1][:12],
            ]
        )  # `dcx show` takes a hex prefix
    if rows:
        page.table(("source", "status", "changes", "reason", "receipt"), rows)
    for line in alert_lines(receipts):
        page.line(line)
    summary = f"{len(receipts)} receipt(s) stored · cursors unchanged"
    if result.status == "partial":
        summary += " · partial: a source was unavailable (fail-open)"
    page.line(summary)


def alert_lines(receipts: list[dict[str, Any]]) -> list[str]:
    """One line per source whose receipt raised, holds or cleared an alert (SPEC §5.5 v4)."""
    lines = []
    for receipt in receipts:
        alerts = receipt.get("alerts")
        if not alerts or not (alerts["active"] or alerts["cleared"]):
            continue
        parts = [
            code + (" (raised)" if code in alerts["raised"] else "") for code in alerts["active"]
        ]
        parts += [f"{code} cleared" for code in alerts["cleared"]]
        streak = alerts["failure_streak"]
        if streak:
            parts.append(f"{streak} consecutive failure(s)")
        lines.append(f"alert: {receipt['source_id']}: " + ", ".join(parts))
    return lines


@declare(
    render=render,
    source=Option(
        "--source",
        multiple=True,
        metavar="SOURCE_ID",
        help="Scan only this source id (repeatable; may name an on-demand source).",
    ),
    agent_id=AGENT,
    observed_at=OBSERVED_AT,
    fmt=FORMAT,
)
def command(
    g: Globals, *, source: list[str] | None, agent_id: str | None, observed_at: str | None, fmt: str
) -> Result:
    """Scan sources against their committed cursors and store one receipt per source.

    Scans the enabled incremental and snapshot sources (or those named with
    --source), reports added, modified and deleted items, and stores a
    decision_source_scan_receipt_v0 packet for each: opaque refs and counts
    only. Never reads content exactly and never moves a cursor; a failing
    source is reported unavailable with a reason (status partial, exit 0).

    Example: dcx scan --source source:authority:docs
    """
    from dcx.ops.scan import scan

    run = dict(
        ws=g.ws(), agent_id=agent_id, source_ids=list(source or []), clock=g.clock(observed_at)
    )
    if fmt == "text" and sys.stderr.isatty():
        from dcx.cli._progress import HashProgress

        with HashProgress(no_color=g.no_color) as progress:
            return scan(**run, progress=progress)
    return scan(**run)
