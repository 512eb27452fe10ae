from __future__ import annotations

from typing import Annotated

import typer

from dcx.cli._boundary import run
from dcx.cli._options import FormatOpt, OutputFormat, WaitOpt
from dcx.result import Result


def command(
    ctx: typer.Context,
    repair: Annotated[bool, typer.Option("--repair", help="Move a torn last log line to private/log/.")] = False,
    wait: WaitOpt = 5.0,
    fmt: FormatOpt = OutputFormat.text,
) -> None:
    """Re-hash every packet and check every log; exit 1 listing each problem.

    Example: dcx verify
    """

    def call(g) -> Result:
        from dcx.ops.verify import verify

        return verify(ws=g.ws(), repair=repair, wait=wait)

    run(ctx, fmt, call, render)


def render(console, result: Result) -> None:
    data = result.data
    for path in data["repaired"]:
        console.print(f"repaired {path} (fragment moved to private/log/)", markup=False)
    if not data["problems"]:
        console.print(f"[green]ok[/] {data['packets_checked']} packet(s) verified")
        return
    for problem in data["problems"]:
        console.print(f"[red]bad[/] {problem['file']}: {problem['problem']}")
    console.print(f"{len(data['problems'])} problem(s) in {data['packets_checked']} packet(s)", markup=False)
