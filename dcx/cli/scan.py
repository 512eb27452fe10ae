from __future__ import annotations

from typing import Annotated

import typer

from dcx.cli._boundary import run
from dcx.cli._options import AgentOpt, FormatOpt, ObservedAtOpt, OutputFormat
from dcx.cli.readers.scan import render, scan_call

__all__ = ["command", "render"]


def command(
    ctx: typer.Context,
    source: Annotated[
        list[str] | None,
        typer.Option(
            "--source", help="Scan only this source id (repeatable; may name an on-demand source)."
        ),
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
    run(
        ctx,
        fmt,
        scan_call(
            agent_id=agent_id, source_ids=source or [], observed_at=observed_at, fmt=fmt_value
        ),
        render,
    )
