from __future__ import annotations

from dcx.cli._declare import Option, declare
from dcx.cli._globals import Globals
from dcx.cli._options import FORMAT
from dcx.core.result import Result

LABELS = {
    "pending": "pending companion(s)",
    "temp": "temp file(s)",
    "trees": "tree map(s)",
    "stat_caches": "stat cache(s)",
}


def render(page, result: Result) -> None:
    data = result.data
    verb = "would remove" if data["dry_run"] else "removed"
    parts = [f"{len(items)} {LABELS[name]}" for name, items in data["removed"].items() if items]
    if not parts:
        page.line("nothing to remove")
    else:
        page.line(f"{verb} {', '.join(parts)} ({data['bytes']} bytes)")
        for items in data["removed"].values():
            for item in items:
                page.line(f"  {item['path']}  ({item['reason']})")
    if data["kept_recent"]:
        page.line(f"kept {data['kept_recent']} file(s) changed in the last 10 minutes")


@declare(
    render=render,
    dry_run=Option("--dry-run", type=bool, help="List what would go; remove nothing."),
    fmt=FORMAT,
)
def command(g: Globals, *, dry_run: bool, fmt: str) -> Result:
    """Remove private leftovers: pending companions no commit can use, crash temp files,
    unreferenced tree maps, stat caches of removed sources. Never a public file.

    Example: dcx gc --dry-run
    """
    from dcx.ops.gc import gc

    return gc(ws=g.ws(), dry_run=dry_run)
