from __future__ import annotations

from dcx.cli._declare import Option, declare
from dcx.cli._globals import Globals
from dcx.cli._options import AGENT, FORMAT, WAIT
from dcx.core.result import Result


def render(page, result: Result) -> None:
    data = result.data
    head = data["head"][:12]
    page.line(
        f"sync: {'merged' if data['pulled'] else 'up to date'} at {head}"
        f"{' · public changes committed' if data['committed_public_changes'] else ''}"
        f"{' · pushed' if data['pushed'] else ''}"
    )
    checked = data["verify"]
    page.line(
        f"verify: {checked['problems']} problem(s), {len(checked['unbacked_cursors'])} unbacked cursor(s)"
    )
    rescan = data["rescan"]
    if rescan["performed"]:
        for row in rescan["sources"]:
            page.line(
                f"source {row['source_id']}: {row['status']} · {row['changed_count']} change(s)"
            )
    else:
        page.line(f"rescan: not performed ({rescan['reason_code']})")
    for row in data["pending_here"]:
        page.line(f"pending here: {row['decision_id']} ({row['assembly_ref']})")
    for row in data["moved_by_others"]:
        page.line(
            f"moved by others: {row['decision_id']} · {row['new_lines']} new line(s): "
            f"{', '.join(row['kinds'])}"
        )


@declare(
    render=render,
    push=Option("--push", type=bool, help="Push after a verify without problems."),
    agent_id=AGENT,
    wait=WAIT,
    fmt=FORMAT,
)
def command(g: Globals, *, push: bool, agent_id: str | None, wait: float, fmt: str) -> Result:
    """Merge what the goal's other hosts pushed (git pull --no-rebase), verify, rescan, list what waits here.

    Commits the workspace's public half first; refuses when the work tree has
    uncommitted changes outside .decision-context/. With --push, pushes after
    a clean verify.

    Example: dcx sync --push
    """
    from dcx.ops.sync import sync

    return sync(clock=g.clock(), ws=g.ws(), push=push, agent_id=agent_id, wait=wait)
