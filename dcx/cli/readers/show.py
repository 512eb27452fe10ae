"""The text view of `dcx show`, typer-free: the typer command and the fast path (``dcx.cli._fast``) both print with it."""

from __future__ import annotations

from dcx.cli._render import styled
from dcx.core.result import Result


def render(console, result: Result) -> None:
    from dcx.cli._views import render_packet

    if result.data.get("redacted"):
        stub = result.data["packet"]
        console.print(
            styled(
                "[bold yellow]redacted[/]  {}  [dim]({})[/]",
                stub["redacted_ref"],
                stub["schema_version"],
            )
        )
        parts = [f"{stub['kind']} packet", f"goal {stub['goal_id']}"]
        if stub.get("decision_id"):
            parts.append(f"decision {stub['decision_id']}")
        console.print(" · ".join(parts), markup=False)
        console.print(
            f"reason {stub['reason_code']} · at {stub['redacted_at']} · removed {stub['removed_size']} bytes, "
            f"{stub['removed_blake3']}",
            markup=False,
        )
        console.print(
            "its content is gone; git history may still hold it (docs/redaction.md)",
            style="dim",
            markup=False,
        )
        return
    render_packet(console, result.data["kind"], result.data["packet"])
    revealed = result.data.get("revealed")
    if revealed is not None:
        console.print(styled("[bold]revealed (private; this terminal only)[/]"))
        for ref, fields in revealed.items():
            shown = " · ".join(str(f) for f in fields) if fields else "(not known on this machine)"
            console.print(f"  {ref}  {shown}", markup=False, highlight=False)


render.plain = True  # type: ignore[attr-defined]  # PlainConsole prints it when piped (dcx/cli/_plain.py)
