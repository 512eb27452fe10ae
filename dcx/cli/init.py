from __future__ import annotations

import os
from pathlib import Path

from dcx.cli._declare import Option, declare
from dcx.cli._globals import Globals
from dcx.cli._options import FORMAT
from dcx.cli._render import styled
from dcx.core.result import Result


def render(page, result: Result) -> None:
    data = result.data
    if data["already_initialised"]:
        page.line(
            styled(
                "[bold]{}/[/] already exists for goal [cyan]{}[/]; nothing created.",
                data["workspace"],
                data["goal_id"],
            )
        )
        return
    page.line(
        styled("Initialised [bold]{}/[/] for goal [cyan]{}[/]:", data["workspace"], data["goal_id"])
    )
    for path in data["created"]:
        page.line(f"  created {path}")
    if ".decision-context/profile.toml" in data["created"]:
        enable = "dcx enable" if data.get("agent_id") else "dcx enable --agent AGENT_ID"
        page.line("Next, to make it a working goal:")
        page.line(f"  {enable}")
        page.line("  dcx source add source:authority:docs --path docs --include '**/*.md'")


@declare(
    render=render,
    goal_id=Option("--goal-id", help="Goal token (default: the folder name)."),
    agent_id=Option(
        "--agent-id", metavar="AGENT_ID", help="Agent to list in the (disabled) profile."
    ),
    nested=Option(
        "--nested", type=bool, help="Create it even inside a source of an enclosing workspace."
    ),
    fmt=FORMAT,
)
def command(
    g: Globals, *, goal_id: str | None, agent_id: str | None, nested: bool, fmt: str
) -> Result:
    """Create .decision-context/ here (or in -C PATH), overwriting nothing.

    Writes a README, a .gitignore covering every private path, a default-off
    profile.toml, an empty sources.toml, the workspace key, packets/ and
    events.jsonl. Re-running creates only what is missing. Inside a folder a
    source of an enclosing workspace covers, it refuses unless --nested.

    Example: dcx init --goal-id checkout-latency --agent-id agent-a
    """
    from dcx.ops.init import init

    root = g.workspace or os.environ.get("DCX_WORKSPACE") or "."
    return init(root=Path(root), goal_id=goal_id, agent_id=agent_id, nested=nested)
