"""The text view of `dcx sources`, typer-free: the typer command and the fast path (``dcx.cli._fast``) both print with it."""

from __future__ import annotations

from dcx.core.result import Result


def render(console, result: Result) -> None:
    from dcx.cli.views.common import grid

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
        grid(console, ("source", "via", "kind", "pri", "lvl", "scan", "read", "fresh"), rows)
    note = "stored" if result.data["written"] else "not stored (use --write)"
    console.print(
        f"{manifest['manifest_ref']} · {manifest['source_count']} source(s) · {note}", markup=False
    )


render.plain = True  # type: ignore[attr-defined]  # PlainConsole prints it when piped (dcx/cli/_plain.py)
