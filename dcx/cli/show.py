from __future__ import annotations

import sys
from typing import Annotated

import typer

from dcx.cli._boundary import run
from dcx.cli._options import FormatOpt, OutputFormat
from dcx.cli._render import styled
from dcx.result import Result


def command(
    ctx: typer.Context,
    ref: Annotated[str, typer.Argument(help="A packet ref, or a unique prefix of one (like git).")],
    reveal: Annotated[
        bool, typer.Option("--reveal", help="Resolve opaque refs to local paths and values (terminal only).")
    ] = False,
    fmt: FormatOpt = OutputFormat.text,
) -> None:
    """Show one packet, verified; --format json prints its stored bytes exactly.

    With --reveal, opaque refs (source-change, source-revision, source-cursor,
    provider) are resolved from this machine's private ref map for the person
    at the terminal. It refuses to print into a pipe or file, so private
    values cannot end up in one by accident.

    Example: dcx show decision-source-manifest-3fa2
    """

    def call(g) -> Result:
        from dcx.errors import InvalidInput
        from dcx.ops.show import show

        if reveal and (getattr(fmt, "value", fmt) == "json" or not sys.stdout.isatty()):
            raise InvalidInput("--reveal prints only to a terminal, in text format", field="--reveal",
                               hint="run it in a terminal without --format json or a pipe")
        return show(ws=g.ws(), ref=ref, reveal_refs=reveal)

    run(ctx, fmt, call, render)


def render(console, result: Result) -> None:
    from dcx.cli._views import render_packet

    if result.data.get("redacted"):
        stub = result.data["packet"]
        console.print(styled("[bold yellow]redacted[/]  {}  [dim]({})[/]", stub["redacted_ref"], stub["schema_version"]))
        parts = [f"{stub['kind']} packet", f"goal {stub['goal_id']}"]
        if stub.get("decision_id"):
            parts.append(f"decision {stub['decision_id']}")
        console.print(" · ".join(parts), markup=False)
        console.print(f"reason {stub['reason_code']} · at {stub['redacted_at']} · removed {stub['removed_size']} bytes, "
                      f"{stub['removed_blake3']}", markup=False)
        console.print("its content is gone; git history may still hold it (docs/redaction.md)", style="dim",
                      markup=False)
        return
    render_packet(console, result.data["kind"], result.data["packet"])
    revealed = result.data.get("revealed")
    if revealed is not None:
        console.print(styled("[bold]revealed (private; this terminal only)[/]"))
        for ref, fields in revealed.items():
            shown = " · ".join(str(f) for f in fields) if fields else "(not known on this machine)"
            console.print(f"  {ref}  {shown}", markup=False, highlight=False)
