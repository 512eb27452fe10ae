from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from dcx.cli._boundary import run
from dcx.cli._options import FormatOpt, OutputFormat
from dcx.cli._render import styled
from dcx.core.result import Result


def command(
    ctx: typer.Context,
    goal_id: Annotated[
        str | None, typer.Option("--goal-id", help="Goal token (default: the folder name).")
    ] = None,
    agent_id: Annotated[
        str | None, typer.Option("--agent-id", help="Agent to list in the (disabled) profile.")
    ] = None,
    nested: Annotated[
        bool,
        typer.Option("--nested", help="Create it even inside a source of an enclosing workspace."),
    ] = False,
    fmt: FormatOpt = OutputFormat.text,
) -> None:
    """Create .decision-context/ here (or in -C PATH), overwriting nothing.

    Writes a README, a .gitignore covering every private path, a default-off
    profile.toml, an empty sources.toml, the workspace key, packets/ and
    events.jsonl. Re-running creates only what is missing. Inside a folder a
    source of an enclosing workspace covers, it refuses unless --nested.

    Example: dcx init --goal-id checkout-latency --agent-id agent-a
    """

    def call(g) -> Result:
        from dcx.ops.init import init

        root = g.workspace or os.environ.get("DCX_WORKSPACE") or "."
        return init(root=Path(root), goal_id=goal_id, agent_id=agent_id, nested=nested)

    run(ctx, fmt, call, render)


def render(console, result: Result) -> None:
    data = result.data
    if data["already_initialised"]:
        console.print(
            styled(
                "[bold]{}/[/] already exists for goal [cyan]{}[/]; nothing created.",
                data["workspace"],
                data["goal_id"],
            )
        )
        return
    console.print(
        styled("Initialised [bold]{}/[/] for goal [cyan]{}[/]:", data["workspace"], data["goal_id"])
    )
    for path in data["created"]:
        console.print(f"  created {path}", markup=False)
    if ".decision-context/profile.toml" in data["created"]:
        enable = "dcx enable" if data.get("agent_id") else "dcx enable --agent AGENT_ID"
        console.print("Next, to make it a working goal:", markup=False)
        console.print(f"  {enable}", markup=False)
        console.print(
            "  dcx source add source:authority:docs --path docs --include '**/*.md'", markup=False
        )
