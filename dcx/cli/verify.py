from __future__ import annotations

from typing import Any

from dcx.cli._declare import Option, declare
from dcx.cli._globals import Globals
from dcx.cli._layout import Page, styled
from dcx.cli._options import FORMAT, WAIT
from dcx.core.result import Result


def render(page: Page, result: Result) -> None:
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
        _signatures(page, data.get("signatures"))
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
    _signatures(page, data.get("signatures"))
    page.line(f"{_n(len(data['problems']), 'problem')} in {checked}")


def _signatures(page: Page, sig: dict[str, Any] | None) -> None:
    """One line of counts (SPEC §18), then the first unsigned rows when signatures are not required
    (the problems list names the rest)."""
    if not sig or not sig["items"]:
        return
    required = " (required)" if sig["required"] else ""
    page.line(
        f"signatures{required}: {sig['signed']} signed, {sig['unsigned']} unsigned, "
        f"{sig['failed']} failed ({_n(sig['statements_checked'], 'statement')}, "
        f"{_n(sig['signers'], 'signer')})"
    )
    if sig["required"]:
        return
    unsigned = [i for i in sig["items"] if i["verdict"] == "unsigned"]
    for item in unsigned[:5]:
        who = f" (says {item['agent_id']})" if item.get("agent_id") else ""
        page.line(styled("[yellow]unsigned[/] {} {}{}", item["kind"], item["ref"], who))
    if len(unsigned) > 5:
        page.line(f"    … and {len(unsigned) - 5} more (--format json lists every one)")


def _n(count: int, word: str, many: str | None = None) -> str:
    return f"{count} {word if count == 1 else (many or word + 's')}"


@declare(
    render=render,
    repair=Option(
        "--repair",
        type=bool,
        help="Move a torn last log line to private/log/; rewind a cursor no receipt backs.",
    ),
    require_signatures=Option(
        "--require-signatures",
        type=bool,
        help="Make every unsigned packet or event a problem (as require_signatures = true does).",
    ),
    wait=WAIT,
    fmt=FORMAT,
)
def command(g: Globals, *, repair: bool, require_signatures: bool, wait: float, fmt: str) -> Result:
    """Re-hash every packet and event, check every link and signature; exit 1 listing each problem.

    Each packet and event is reported signed (by which agent and key), unsigned
    (a warning, unless signatures are required), or failed (bad_signature,
    unknown_signer, revoked_signer, signer_mismatch: always a problem).

    Example: dcx verify
    """
    from dcx.ops.verify import verify

    return verify(ws=g.ws(), repair=repair, wait=wait, require_signatures=require_signatures)
