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
    from dcx.cli.views.common import grid

    manifest = result.data["manifest"]
    rows = [
        [row["source_id"] if row["enabled"] else f"{row['source_id']} (off)", row["provider_id"],
         row["source_kind"], row["priority"], row["evidence_level"], row["scan_mode"], row["exact_read_policy"],
         f"{row['freshness_seconds']}s"]
        for row in manifest["sources"]
    ]
    if rows:
        grid(console, ("source", "via", "kind", "pri", "lvl", "scan", "read", "fresh"), rows)
    note = "stored" if result.data["written"] else "not stored (use --write)"
    console.print(f"{manifest['manifest_ref']} · {manifest['source_count']} source(s) · {note}", markup=False)
