from __future__ import annotations

from dcx.cli._declare import Option, declare
from dcx.cli._globals import Globals
from dcx.cli._options import FORMAT
from dcx.core.result import Result


def render(page, result: Result) -> None:

    manifest = result.data["manifest"]
    rows = [
        [
            row["source_id"] if row["enabled"] else f"{row['source_id']} (off)",
            row["provider_id"],
            row["source_kind"],
            row["priority"],
            row["evidence_level"],
            row["scan_mode"],
            row["exact_read_policy"],
            f"{row['freshness_seconds']}s",
        ]
        for row in manifest["sources"]
    ]
    if rows:
        page.table(("source", "via", "kind", "pri", "lvl", "scan", "read", "fresh"), rows)
    note = "stored" if result.data["written"] else "not stored (use --write)"
    page.line(f"{manifest['manifest_ref']} · {manifest['source_count']} source(s) · {note}")


@declare(
    render=render,
    write=Option("--write", type=bool, help="Store the manifest as a packet."),
    fmt=FORMAT,
)
def command(g: Globals, *, write: bool, fmt: str) -> Result:
    """Print the public source manifest: which sources exist and their policy.

    Never shows a locator, provider config or cursor. With --write, stores it
    as a decision_source_manifest_v0 packet (same registry, same ref).

    Example: dcx sources --write
    """
    from dcx.ops.sources import sources

    return sources(ws=g.ws(), write=write)
