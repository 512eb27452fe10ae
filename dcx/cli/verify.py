from __future__ import annotations

from typing import Annotated

import typer

from dcx.cli._boundary import run
from dcx.cli._options import FormatOpt, OutputFormat, WaitOpt
from dcx.cli._render import styled
from dcx.result import Result


def command(
    ctx: typer.Context,
    repair: Annotated[bool, typer.Option("--repair", help="Move a torn last log line to private/log/.")] = False,
    wait: WaitOpt = 5.0,
    fmt: FormatOpt = OutputFormat.text,
) -> None:
    """Re-hash every packet and event, check every link; exit 1 listing each problem.

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
    checked = (f"{_n(data['packets_checked'], 'packet')}, {_n(data['events_checked'], 'event')}, "
               f"{_n(data.get('decision_indexes_checked', 0), 'decision index', 'decision indexes')}")
    for row in data.get("redacted", []):
        console.print(styled("[yellow]redacted[/] {} ({}, {})", row["file"], row["reason_code"], row["redacted_at"]))
    if not data["problems"]:
        console.print(styled("[green]ok[/]  {}", checked))
        console.print("    every packet re-hashes, every link and event id holds", markup=False, highlight=False)
        foreign = data.get("foreign_key_ids") or []
        if foreign:
            console.print(f"note: packets minted with another key of this goal ({', '.join(foreign)}) verify too; "
                          "their opaque refs are simply not comparable here", markup=False, highlight=False)
        return
    for problem in data["problems"]:
        console.print(styled("[red]bad[/] {}", problem["file"]))
        where = f"{problem['field']}: " if problem.get("field") and not problem["problem"].startswith("line ") else ""
        console.print(f"    {where}{problem['problem']}", markup=False, highlight=False)
    console.print(f"{_n(len(data['problems']), 'problem')} in {checked}", markup=False, highlight=False)


def _n(count: int, word: str, many: str | None = None) -> str:
    return f"{count} {word if count == 1 else (many or word + 's')}"
