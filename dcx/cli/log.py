from __future__ import annotations

from typing import Annotated

import typer

from dcx.cli._boundary import run
from dcx.cli._options import FormatOpt, OutputFormat
from dcx.cli.readers.log import render
from dcx.core.result import Result


def command(
    ctx: typer.Context,
    decision_id: Annotated[
        str | None, typer.Option("--decision-id", help="Only this decision.")
    ] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="At most N decisions.")
    ] = None,
    fmt: FormatOpt = OutputFormat.text,
) -> None:
    """List decisions newest first, each with its chain of packets, like git log.

    The chain runs assembly → evidence → proposal → outcomes → events →
    commit receipt → feedback (or, settled by review: proposal → gate →
    review → validation event → commit; "outcome due" after an approve), with short refs (give any of them to `dcx show`).
    Goal-level scans are listed apart.

    Example: dcx log --limit 5
    """

    def call(g) -> Result:
        from dcx.ops.log import log

        return log(ws=g.ws(), decision_id=decision_id, limit=limit)

    run(ctx, fmt, call, render)
