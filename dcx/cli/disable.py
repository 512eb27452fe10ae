from __future__ import annotations

from dcx.cli._declare import declare
from dcx.cli._globals import Globals
from dcx.cli._options import FORMAT, WAIT
from dcx.core.result import Result


def render(page, result: Result) -> None:
    page.line("decision context disabled")


@declare(render=render, wait=WAIT, fmt=FORMAT)
def command(g: Globals, *, wait: float, fmt: str) -> Result:
    """Turn decision context off for this goal (enabled = false); nothing else changes.

    Example: dcx disable
    """
    from dcx.ops.config import disable

    return disable(ws=g.ws(), wait=wait)
