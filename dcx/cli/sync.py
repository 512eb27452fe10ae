from __future__ import annotations

from typing import Annotated

import typer

from dcx.cli._boundary import run
from dcx.cli._options import AgentOpt, FormatOpt, OutputFormat, WaitOpt
from dcx.core.result import Result


def command(
    ctx: typer.Context,
    push: Annotated[
        bool, typer.Option("--push", help="Push after a verify without problems.")
    ] = False,
    accept_key_change: Annotated[
        bool,
        typer.Option(
            "--accept-key-change",
            help="Commit a changed key pin in workspace.toml (key import --force).",
        ),
    ] = False,
    agent_id: AgentOpt = None,
    wait: WaitOpt = 5.0,
    fmt: FormatOpt = OutputFormat.text,
) -> None:
    """Merge what the goal's other hosts pushed (git pull --no-rebase), verify, rescan, list what waits here.

    Commits the workspace's public half first; refuses when the work tree has
    uncommitted changes outside .decision-context/. With --push, pushes after
    a clean verify.

    Example: dcx sync --push
    """

    def call(g) -> Result:
        from dcx.ops.sync import sync

        return sync(
            clock=g.clock(),
            ws=g.ws(),
            push=push,
            agent_id=agent_id,
            wait=wait,
            accept_key_change=accept_key_change,
        )

    run(ctx, fmt, call, render)


def render(console, result: Result) -> None:
    data = result.data
    head = data["head"][:12]
    console.print(
        f"sync: {'merged' if data['pulled'] else 'up to date'} at {head}"
        f"{' · public changes committed' if data['committed_public_changes'] else ''}"
        f"{' · pushed' if data['pushed'] else ''}",
        markup=False,
    )
    checked = data["verify"]
    console.print(
        f"verify: {checked['problems']} problem(s), {len(checked['unbacked_cursors'])} unbacked cursor(s)",
        markup=False,
    )
    rescan = data["rescan"]
    if rescan["performed"]:
        for row in rescan["sources"]:
            console.print(
                f"source {row['source_id']}: {row['status']} · {row['changed_count']} change(s)",
                markup=False,
            )
    else:
        console.print(f"rescan: not performed ({rescan['reason_code']})", markup=False)
    for row in data["pending_here"]:
        console.print(f"pending here: {row['decision_id']} ({row['assembly_ref']})", markup=False)
    for row in data["moved_by_others"]:
        console.print(
            f"moved by others: {row['decision_id']} · {row['new_lines']} new line(s): "
            f"{', '.join(row['kinds'])}",
            markup=False,
        )
