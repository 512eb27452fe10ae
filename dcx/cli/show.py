from __future__ import annotations

import sys

from dcx.cli._declare import Argument, Option, declare
from dcx.cli._globals import Globals
from dcx.cli._options import FORMAT
from dcx.cli._render import styled
from dcx.core.result import Result


def render(page, result: Result) -> None:
    from dcx.cli._views import render_packet

    if result.data.get("redacted"):
        stub = result.data["packet"]
        page.line(
            styled(
                "[bold yellow]redacted[/]  {}  [dim]({})[/]",
                stub["redacted_ref"],
                stub["schema_version"],
            )
        )
        parts = [f"{stub['kind']} packet", f"goal {stub['goal_id']}"]
        if stub.get("decision_id"):
            parts.append(f"decision {stub['decision_id']}")
        page.line(" · ".join(parts))
        page.line(
            f"reason {stub['reason_code']} · at {stub['redacted_at']} · removed {stub['removed_size']} bytes, "
            f"{stub['removed_blake3']}"
        )
        page.line(
            "its content is gone; git history may still hold it (docs/redaction.md)", style="dim"
        )
        return
    render_packet(page, result.data["kind"], result.data["packet"])
    revealed = result.data.get("revealed")
    if revealed is not None:
        page.line(styled("[bold]revealed (private; this terminal only)[/]"))
        for ref, fields in revealed.items():
            shown = " · ".join(str(f) for f in fields) if fields else "(not known on this machine)"
            page.line(f"  {ref}  {shown}")


@declare(
    render=render,
    ref=Argument(help="A packet ref, or a unique prefix of one (like git)."),
    reveal=Option(
        "--reveal",
        type=bool,
        help="Resolve opaque refs to local paths and values (terminal only).",
    ),
    fmt=FORMAT,
)
def command(g: Globals, *, ref: str, reveal: bool, fmt: str) -> Result:
    """Show one packet, verified; --format json prints its stored bytes exactly.

    With --reveal, opaque refs (source-change, source-revision, source-cursor,
    provider) are resolved from this machine's private ref map for the person
    at the terminal. It refuses to print into a pipe or file, so private
    values cannot end up in one by accident.

    Example: dcx show decision-source-manifest-3fa2
    """
    from dcx.core.errors import InvalidInput
    from dcx.ops.show import show

    if reveal and (fmt == "json" or not sys.stdout.isatty()):
        raise InvalidInput(
            "--reveal prints only to a terminal, in text format",
            field="--reveal",
            hint="run it in a terminal without --format json or a pipe",
        )
    return show(ws=g.ws(), ref=ref, reveal_refs=reveal)
