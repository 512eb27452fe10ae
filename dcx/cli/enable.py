from __future__ import annotations

from typing import Annotated

import typer

from dcx.cli._boundary import run
from dcx.cli._options import FormatOpt, OutputFormat, WaitOpt
from dcx.core.result import Result


def command(
    ctx: typer.Context,
    agents: Annotated[
        list[str] | None,
        typer.Option(
            "--agent",
            metavar="AGENT_ID",
            help="An agent allowed to act for this goal (repeatable).",
        ),
    ] = None,
    wait: WaitOpt = 5.0,
    fmt: FormatOpt = OutputFormat.text,
) -> None:
    """Turn decision context on for this goal, for the agents named.

    Sets enabled = true in .decision-context/profile.toml and adds each
    --agent to enabled_agents; comments and layout of the file are kept.
    The new file is checked before it is written: a refused edit changes
    nothing.

    Example: dcx enable --agent agent-a
    """

    def call(g) -> Result:
        from dcx.ops.config import enable

        return enable(ws=g.ws(), agents=agents or [], wait=wait)

    run(ctx, fmt, call, render)


def render(console, result: Result) -> None:
    added = result.data["agents_added"]
    tail = f"; agents added: {', '.join(added)}" if added else ""
    console.print(f"decision context enabled{tail}", markup=False)
