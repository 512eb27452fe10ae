from __future__ import annotations

from typing import Annotated

import typer

from dcx.cli._boundary import run
from dcx.cli._options import AgentOpt, FormatOpt, OutputFormat
from dcx.core.result import Result


def command(
    ctx: typer.Context,
    agent_id: AgentOpt = None,
    fmt: FormatOpt = OutputFormat.text,
    check: Annotated[
        bool, typer.Option("--check", help="Also run live checks (provider health).")
    ] = False,
) -> None:
    """Show whether decision context is active for this goal and agent, and what is next.

    Reads state only: it never scans, hashes or spawns a provider, so a thin
    host can call it on every wake-up. An invalid profile is shown, then exit 2.

    Example: dcx status --agent-id agent-a --format json
    """

    def call(g) -> Result:
        from dcx.ops.status import status

        return status(ws=g.ws(), agent_id=agent_id, check=check)

    run(ctx, fmt, call, render)


def render(console, result: Result) -> None:
    from dcx.cli._status_text import format_status, terminal_width

    console.file.write(
        format_status(
            result.data, colour=console.is_terminal and not console.no_color, width=terminal_width()
        )
    )
