from __future__ import annotations

import json

from dcx.cli._declare import Argument, declare
from dcx.cli._globals import Globals
from dcx.cli._options import FORMAT
from dcx.core.result import Result


def render(page, result: Result) -> None:
    data = result.data
    page.line(f"--- {data['left']}\n+++ {data['right']}")
    if not data["changes"]:
        page.line("no semantic difference")
    for change in data["changes"]:
        if change["change"] in ("removed", "changed"):
            page.line(f"- {change['path']}: {json.dumps(change['old'])}", style="red")
        if change["change"] in ("added", "changed"):
            page.line(f"+ {change['path']}: {json.dumps(change['new'])}", style="green")


@declare(
    render=render,
    left=Argument(help="The older packet (ref or unique prefix)."),
    right=Argument(help="The newer packet of the same kind."),
    fmt=FORMAT,
)
def command(g: Globals, *, left: str, right: str, fmt: str) -> Result:
    """Show the semantic difference of two packets of the same kind.

    Records are matched by their ids, so a reordered list is not a change.

    Example: dcx diff decision-evidence-3fa2 decision-evidence-9c41
    """
    from dcx.ops.diff import diff

    return diff(ws=g.ws(), left=left, right=right)
