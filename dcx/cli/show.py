from __future__ import annotations

import sys
from typing import Annotated

import typer

from dcx.cli._boundary import run
from dcx.cli._options import FormatOpt, OutputFormat
from dcx.cli.readers.show import render
from dcx.core.result import Result


def command(
    ctx: typer.Context,
    ref: Annotated[str, typer.Argument(help="A packet ref, or a unique prefix of one (like git).")],
    reveal: Annotated[
        bool,
        typer.Option(
            "--reveal", help="Resolve opaque refs to local paths and values (terminal only)."
        ),
    ] = False,
    fmt: FormatOpt = OutputFormat.text,
) -> None:
    """Show one packet, verified; --format json prints its stored bytes exactly.

    With --reveal, opaque refs (source-change, source-revision, source-cursor,
    provider) are resolved from this machine's private ref map for the person
    at the terminal. It refuses to print into a pipe or file, so private
    values cannot end up in one by accident.

    Example: dcx show decision-source-manifest-3fa2
    """

    def call(g) -> Result:
        from dcx.core.errors import InvalidInput
        from dcx.ops.show import show

        if reveal and (getattr(fmt, "value", fmt) == "json" or not sys.stdout.isatty()):
            raise InvalidInput(
                "--reveal prints only to a terminal, in text format",
                field="--reveal",
                hint="run it in a terminal without --format json or a pipe",
            )
        return show(ws=g.ws(), ref=ref, reveal_refs=reveal)

    run(ctx, fmt, call, render)
