from __future__ import annotations

from typing import Annotated

import typer

from dcx.cli._boundary import run
from dcx.cli._options import FormatOpt, OutputFormat
from dcx.core.result import Result

LABELS = {
    "pending": "pending companion(s)",
    "temp": "temp file(s)",
    "trees": "tree map(s)",
    "stat_caches": "stat cache(s)",
}


def command(
    ctx: typer.Context,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="List what would go; remove nothing.")
    ] = False,
    fmt: FormatOpt = OutputFormat.text,
) -> None:
    """Remove private leftovers: pending companions no commit can use, crash temp files,
    unreferenced tree maps, stat caches of removed sources. Never a public file.

    Example: dcx gc --dry-run
    """

    def call(g) -> Result:
        from dcx.ops.gc import gc

        return gc(ws=g.ws(), dry_run=dry_run)

    run(ctx, fmt, call, render)


def render(console, result: Result) -> None:
    data = result.data
    verb = "would remove" if data["dry_run"] else "removed"
    parts = [f"{len(items)} {LABELS[name]}" for name, items in data["removed"].items() if items]
    if not parts:
        console.print("nothing to remove", markup=False)
    else:
        console.print(f"{verb} {', '.join(parts)} ({data['bytes']} bytes)", markup=False)
        for items in data["removed"].values():
            for item in items:
                console.print(f"  {item['path']}  ({item['reason']})", markup=False, soft_wrap=True)
    if data["kept_recent"]:
        console.print(
            f"kept {data['kept_recent']} file(s) changed in the last 10 minutes", markup=False
        )
