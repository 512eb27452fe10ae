from __future__ import annotations

import typer

from dcx.cli._boundary import run
from dcx.cli._options import FormatOpt, OutputFormat, WaitOpt
from dcx.core.result import Result


def command(ctx: typer.Context, wait: WaitOpt = 5.0, fmt: FormatOpt = OutputFormat.text) -> None:
    """Turn decision context off for this goal (enabled = false); nothing else changes.

    Example: dcx disable
    """

    def call(g) -> Result:
        from dcx.ops.config import disable

        return disable(ws=g.ws(), wait=wait)

    run(
        ctx,
        fmt,
        call,
        lambda console, result: console.print("decision context disabled", markup=False),
    )
