from __future__ import annotations

from typing import Annotated

import typer

from dcx.cli._boundary import run
from dcx.cli._options import FormatOpt, OutputFormat
from dcx.cli.readers.sources import render
from dcx.core.result import Result


def command(
    ctx: typer.Context,
    write: Annotated[bool, typer.Option("--write", help="Store the manifest as a packet.")] = False,
    fmt: FormatOpt = OutputFormat.text,
) -> None:
    """Print the public source manifest: which sources exist and their policy.

    Never shows a locator, provider config or cursor. With --write, stores it
    as a decision_source_manifest_v0 packet (same registry, same ref).

    Example: dcx sources --write
    """

    def call(g) -> Result:
        from dcx.ops.sources import sources

        return sources(ws=g.ws(), write=write)

    run(ctx, fmt, call, render)
