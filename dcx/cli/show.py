from __future__ import annotations

from typing import Annotated

import typer

from dcx.cli._boundary import run
from dcx.cli._options import FormatOpt, OutputFormat
from dcx.result import Result


def command(
    ctx: typer.Context,
    ref: Annotated[str, typer.Argument(help="A packet ref, or a unique prefix of one (like git).")],
    fmt: FormatOpt = OutputFormat.text,
) -> None:
    """Show one packet, verified; --format json prints its stored bytes exactly.

    Example: dcx show decision-source-manifest-3fa2
    """

    def call(g) -> Result:
        from dcx.ops.show import show

        return show(ws=g.ws(), ref=ref)

    run(ctx, fmt, call, render)


def render(console, result: Result) -> None:
    from dcx.cli._views import render_packet

    render_packet(console, result.data["kind"], result.data["packet"])
