from __future__ import annotations

from dcx.cli._declare import Option, declare
from dcx.cli._globals import Globals
from dcx.cli._layout import Page
from dcx.cli._options import AGENT, FORMAT
from dcx.core.result import Result


def render(page: Page, result: Result) -> None:
    """Aligned lines of its own, without rich (SPEC §3.6: status never imports it)."""
    from dcx.cli._status_text import format_status, terminal_width

    page.write(format_status(result.data, colour=page.colour, width=terminal_width()))


@declare(
    render=render,
    agent_id=AGENT,
    fmt=FORMAT,
    check=Option("--check", type=bool, help="Also run live checks (provider health)."),
)
def command(g: Globals, *, agent_id: str | None, fmt: str, check: bool) -> Result:
    """Show whether decision context is active for this goal and agent, and what is next.

    Reads state only: it never scans, hashes or spawns a provider, so a thin
    host can call it on every wake-up. An invalid profile is shown, then exit 2.

    Example: dcx status --agent-id agent-a --format json
    """
    from dcx.ops.status import status

    return status(ws=g.ws(writes=False), agent_id=agent_id, check=check)
