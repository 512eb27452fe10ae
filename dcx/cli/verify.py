from __future__ import annotations

from dcx.cli._declare import Option, declare
from dcx.cli._globals import Globals
from dcx.cli._options import FORMAT, WAIT
from dcx.cli._render import styled
from dcx.core.result import Result


def render(page, result: Result) -> None:
    data = result.data
    for path in data["repaired"]:
        page.line(f"repaired {path} (fragment moved to private/log/)")
    checked = (
        f"{_n(data['packets_checked'], 'packet')}, {_n(data['events_checked'], 'event')}, "
        f"{_n(data.get('decision_indexes_checked', 0), 'decision index', 'decision indexes')}"
    )
    for row in data.get("redacted", []):
        page.line(
            styled(
                "[yellow]redacted[/] {} ({}, {})",
                row["file"],
                row["reason_code"],
                row["redacted_at"],
            )
        )
    if not data["problems"]:
        page.line(styled("[green]ok[/]  {}", checked))
        page.line("    every packet re-hashes, every link and event id holds")
        foreign = data.get("foreign_key_ids") or []
        if foreign:
            page.line(
                f"note: packets minted with another key of this goal ({', '.join(foreign)}) verify too; "
                "their opaque refs are simply not comparable here"
            )
        return
    for problem in data["problems"]:
        page.line(styled("[red]bad[/] {}", problem["file"]))
        where = (
            f"{problem['field']}: "
            if problem.get("field") and not problem["problem"].startswith("line ")
            else ""
        )
        page.line(f"    {where}{problem['problem']}")
    page.line(f"{_n(len(data['problems']), 'problem')} in {checked}")


def _n(count: int, word: str, many: str | None = None) -> str:
    return f"{count} {word if count == 1 else (many or word + 's')}"


@declare(
    render=render,
    repair=Option(
        "--repair",
        type=bool,
        help="Move a torn last log line to private/log/; rewind a cursor no receipt backs.",
    ),
    wait=WAIT,
    fmt=FORMAT,
)
def command(g: Globals, *, repair: bool, wait: float, fmt: str) -> Result:
    """Re-hash every packet and event, check every link; exit 1 listing each problem.

    Example: dcx verify
    """
    from dcx.ops.verify import verify

    return verify(ws=g.ws(), repair=repair, wait=wait)
