from __future__ import annotations

import json
from typing import Annotated

import typer

from dcx.cli._boundary import run
from dcx.cli._options import FormatOpt, OutputFormat
from dcx.core.result import Result


def command(
    ctx: typer.Context,
    left: Annotated[str, typer.Argument(help="The older packet (ref or unique prefix).")],
    right: Annotated[str, typer.Argument(help="The newer packet of the same kind.")],
    fmt: FormatOpt = OutputFormat.text,
) -> None:
    """Show the semantic difference of two packets of the same kind.

    Records are matched by their ids, so a reordered list is not a change.

    Example: dcx diff decision-evidence-3fa2 decision-evidence-9c41
    """

    def call(g) -> Result:
        from dcx.ops.diff import diff

        return diff(ws=g.ws(), left=left, right=right)

    run(ctx, fmt, call, render)


def render(console, result: Result) -> None:
    data = result.data
    console.print(f"--- {data['left']}\n+++ {data['right']}", markup=False)
    if not data["changes"]:
        console.print("no semantic difference", markup=False)
    for change in data["changes"]:
        if change["change"] in ("removed", "changed"):
            console.print(
                f"- {change['path']}: {json.dumps(change['old'])}", style="red", markup=False
            )
        if change["change"] in ("added", "changed"):
            console.print(
                f"+ {change['path']}: {json.dumps(change['new'])}", style="green", markup=False
            )
