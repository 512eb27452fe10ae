from __future__ import annotations

import sys
from typing import Annotated

import typer

from dcx.cli._boundary import run
from dcx.cli._options import FormatOpt, OutputFormat
from dcx.core.result import Result

app = typer.Typer(
    help="Share one workspace key between the hosts of one goal.\n\nExample: dcx key export > goal.key",
    no_args_is_help=True,
)


@app.command("export")
def export(ctx: typer.Context, fmt: FormatOpt = OutputFormat.text) -> None:
    """Print the workspace key as 64 hex digits (keep it private).

    Example: dcx key export > goal.key
    """

    def call(g) -> Result:
        from dcx.state.keys import export_hex, load_key

        return Result("key export", {"key": export_hex(load_key(g.ws(), create=False))})

    def show(console, r: Result) -> None:
        sys.stdout.write(r.data["key"] + "\n")  # the bare key, for `> goal.key`

    run(ctx, fmt, call, show)


@app.command("import")
def import_(
    ctx: typer.Context,
    source: Annotated[str, typer.Argument(help="A file holding the hex key, or - for stdin.")],
    force: Annotated[
        bool, typer.Option("--force", help="Replace a different existing key.")
    ] = False,
    fmt: FormatOpt = OutputFormat.text,
) -> None:
    """Install a key exported from another host of the same goal.

    Example: dcx key import goal.key
    """

    def call(g) -> Result:
        from pathlib import Path

        from dcx.core.errors import InvalidInput
        from dcx.state.keys import import_hex

        ws = g.ws()
        try:
            data = sys.stdin.buffer.read() if source == "-" else Path(source).read_bytes()
        except OSError:
            raise InvalidInput("key import: cannot read the key file", field="FILE") from None
        key = import_hex(ws, data, force=force)
        return Result("key import", {"key_id": key.key_id})

    run(
        ctx,
        fmt,
        call,
        lambda console, r: console.print(f"key {r.data['key_id']} installed", markup=False),
    )
