from __future__ import annotations

from dcx.cli._declare import Option, declare
from dcx.cli._globals import Globals
from dcx.cli._options import FORMAT, WAIT
from dcx.core.result import Result


def render(page, result: Result) -> None:
    added = result.data["agents_added"]
    tail = f"; agents added: {', '.join(added)}" if added else ""
    page.line(f"decision context enabled{tail}")


@declare(
    render=render,
    agents=Option(
        "--agent",
        multiple=True,
        metavar="AGENT_ID",
        help="An agent allowed to act for this goal (repeatable).",
    ),
    wait=WAIT,
    fmt=FORMAT,
)
def command(g: Globals, *, agents: list[str] | None, wait: float, fmt: str) -> Result:
    """Turn decision context on for this goal, for the agents named.

    Sets enabled = true in .decision-context/profile.toml and adds each
    --agent to enabled_agents; comments and layout of the file are kept.
    The new file is checked before it is written: a refused edit changes
    nothing.

    Example: dcx enable --agent agent-a
    """
    from dcx.ops.config import enable

    return enable(ws=g.ws(), agents=agents or [], wait=wait)
