"""The text view of `dcx verify`, typer-free: the typer command and the fast path (``dcx.cli._fast``) both print with it."""

from __future__ import annotations

from dcx.cli._render import styled
from dcx.core.result import Result


def render(console, result: Result) -> None:
    data = result.data
    for path in data["repaired"]:
        console.print(f"repaired {path} (fragment moved to private/log/)", markup=False)
    for row in data.get("rewound_cursors", []):
        who = row["agent_id"] or "shared file"
        if row.get("to_cursor_ref"):
            console.print(
                styled(
                    "rewound the cursor of {} ({}) from {} to {} (the cursor after receipt {})",
                    row["source_id"],
                    who,
                    row.get("from_cursor_ref"),
                    row["to_cursor_ref"],
                    row.get("backed_by"),
                )
            )
        else:
            console.print(
                styled(
                    "rewound the cursor of {} ({}) from {} to none (the next prepare reads the source "
                    "from the start)",
                    row["source_id"],
                    who,
                    row.get("from_cursor_ref"),
                )
            )
    checked = (
        f"{_n(data['packets_checked'], 'packet')}, {_n(data['events_checked'], 'event')}, "
        f"{_n(data.get('decision_indexes_checked', 0), 'decision index', 'decision indexes')}"
    )
    for row in data.get("redacted", []):
        console.print(
            styled(
                "[yellow]redacted[/] {} ({}, {})",
                row["file"],
                row["reason_code"],
                row["redacted_at"],
            )
        )
    if not data["problems"]:
        console.print(styled("[green]ok[/]  {}", checked))
        console.print(
            "    every packet re-hashes, every link and event id holds",
            markup=False,
            highlight=False,
        )
        _signatures(console, data.get("signatures"))
        foreign = data.get("foreign_key_ids") or []
        if foreign:
            console.print(
                f"note: packets minted with another key of this goal ({', '.join(foreign)}) verify too; "
                "their opaque refs are simply not comparable here",
                markup=False,
                highlight=False,
            )
        return
    for problem in data["problems"]:
        console.print(styled("[red]bad[/] {}", problem["file"]))
        where = (
            f"{problem['field']}: "
            if problem.get("field") and not problem["problem"].startswith("line ")
            else ""
        )
        console.print(f"    {where}{problem['problem']}", markup=False, highlight=False)
    _signatures(console, data.get("signatures"))
    console.print(
        f"{_n(len(data['problems']), 'problem')} in {checked}", markup=False, highlight=False
    )


def _signatures(console, sig) -> None:
    """One line of counts (SPEC §18), then the first unsigned rows when signatures are not required
    (the problems list names the rest)."""
    if not sig or not sig["items"]:
        return
    required = " (required)" if sig["required"] else ""
    console.print(
        f"signatures{required}: {sig['signed']} signed, {sig['unsigned']} unsigned, "
        f"{sig['failed']} failed ({_n(sig['statements_checked'], 'statement')}, "
        f"{_n(sig['signers'], 'signer')})",
        markup=False,
        highlight=False,
    )
    if sig["required"]:
        return
    unsigned = [i for i in sig["items"] if i["verdict"] == "unsigned"]
    for item in unsigned[:5]:
        who = f" (says {item['agent_id']})" if item.get("agent_id") else ""
        console.print(styled("[yellow]unsigned[/] {} {}{}", item["kind"], item["ref"], who))
    if len(unsigned) > 5:
        console.print(
            f"    … and {len(unsigned) - 5} more (--format json lists every one)",
            markup=False,
            highlight=False,
        )


def _n(count: int, word: str, many: str | None = None) -> str:
    return f"{count} {word if count == 1 else (many or word + 's')}"


render.plain = True  # type: ignore[attr-defined]  # PlainConsole prints it when piped (dcx/cli/_plain.py)
