from __future__ import annotations

from typing import Annotated

import typer

from dcx.cli._boundary import run
from dcx.cli._options import FormatOpt, OutputFormat
from dcx.result import Result


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


def render(console, result: Result) -> None:
    from rich.table import Table

    manifest = result.data["manifest"]
    table = Table(show_edge=False, pad_edge=False)
    table.add_column("source", no_wrap=True)
    for column in ("via", "kind", "pri", "lvl", "scan", "read", "fresh"):
        table.add_column(column)
    for row in manifest["sources"]:
        source = row["source_id"] if row["enabled"] else f"{row['source_id']} (off)"
        table.add_row(
            source,
            row["provider_id"],
            row["source_kind"],
            row["priority"],
            row["evidence_level"],
            row["scan_mode"],
            row["exact_read_policy"],
            f"{row['freshness_seconds']}s",
        )
    console.print(table)
    note = "stored" if result.data["written"] else "not stored (use --write)"
    console.print(f"{manifest['manifest_ref']} · {manifest['source_count']} source(s) · {note}", markup=False)
