from __future__ import annotations

from typing import Annotated

import typer

from dcx.cli._boundary import run
from dcx.cli._options import FormatOpt, OutputFormat, WaitOpt
from dcx.cli.readers.verify import render
from dcx.core.result import Result


def command(
    ctx: typer.Context,
    repair: Annotated[
        bool,
        typer.Option(
            "--repair",
            help="Move a torn last log line to private/log/; rewind a cursor no receipt backs.",
        ),
    ] = False,
    require_signatures: Annotated[
        bool,
        typer.Option(
            "--require-signatures",
            help="Make every unsigned packet or event a problem (as require_signatures = true does).",
        ),
    ] = False,
    wait: WaitOpt = 5.0,
    fmt: FormatOpt = OutputFormat.text,
) -> None:
    """Re-hash every packet and event, check every link and signature; exit 1 listing each problem.

    Each packet and event is reported signed (by which agent and key), unsigned
    (a warning, unless signatures are required), or failed (bad_signature,
    unknown_signer, revoked_signer, signer_mismatch: always a problem).

    Example: dcx verify
    """

    def call(g) -> Result:
        from dcx.ops.verify import verify

        return verify(ws=g.ws(), repair=repair, wait=wait, require_signatures=require_signatures)

    run(ctx, fmt, call, render)
