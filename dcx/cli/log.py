from __future__ import annotations

from typing import Any

from dcx.cli._declare import Option, declare
from dcx.cli._globals import Globals
from dcx.cli._layout import Page, styled
from dcx.cli._options import FORMAT
from dcx.core.result import Result


def _lines(page: Page, rows: list[tuple[str, str, Any]]) -> None:
    """Gutter, kind, then text that wraps under itself (the gutter stays on every line)."""
    page.grid(
        [(styled("[yellow]{}[/]", g) if g else "", k, t) for g, k, t in rows], min_widths=(0, 9)
    )


def render(page: Page, result: Result) -> None:
    decisions = result.data["decisions"]
    if not decisions and not result.data["goal_scans"]:
        page.line("no decisions yet: start one with `dcx prepare --decision-id ID`")
    for row in decisions:
        if row.get("abandoned"):
            nxt = "abandoned"
        else:
            nxt = f"next: dcx {row['next_step']}" if row["next_step"] else "complete"
            if row.get("outcome_due"):
                nxt = f"outcome due · {nxt}"
            elif row.get("settlement"):
                nxt = f"settled {row['settlement']} · {nxt}"
        page.line(
            styled(
                "[yellow]*[/] [bold]{}[/]  {}  [dim]{}[/]",
                row["decision_id"],
                row["last_observed_at"] or "",
                nxt,
            )
        )
        lines: list[tuple[str, str, Any]] = []
        if row.get("next_hint"):
            lines.append(("|", "", styled("[dim]({})[/]", row["next_hint"])))
        chains = {
            link.get("chain_evidence_ref")
            for link in row["chain"]
            if link.get("chain_evidence_ref")
        }
        current = None
        for link in row["chain"]:
            key = link.get("chain_evidence_ref")
            if (
                len(chains) > 1 and key and key != current
            ):  # two agents' chains of one decision, apart
                current = key
                lines.append(("|", "", styled("[bold]chain[/] of evidence [cyan]{}[/]", key[-12:])))
            by = _by(link)
            lines.append(
                (
                    "|",
                    link["kind"],
                    styled("[cyan]{}[/]  {}[dim]{}[/]", link["short_ref"], link["status"], by),
                )
            )
        _lines(page, lines)
        page.line(styled("[yellow]|[/]"))
    scans = result.data["goal_scans"]
    if scans:
        page.line(styled("[bold]goal-level scans[/] ({})", len(scans)))
        _lines(
            page,
            [
                (
                    "",
                    "   scan",
                    styled(
                        "[cyan]{}[/]  {} · {} · {} change(s) · {}",
                        scan["short_ref"],
                        scan["source_id"],
                        scan["status"],
                        scan["changed_count"],
                        scan["observed_at"],
                    ),
                )
                for scan in scans[:10]
            ],
        )


def _by(link: dict[str, Any]) -> str:
    """ "by agent-x ✓" when a signed statement of agent-x names it (SPEC §18), else what is missing."""
    agent = link.get("agent_id")
    sig = (link.get("signature") or {}).get("verdict")
    if sig == "signed":
        signer = link["signature"]["signer_agent_id"]
        return f"  by {agent} ✓" if agent else f"  signed by {signer} ✓"
    if not agent:
        return ""
    if sig in (None, "unsigned"):
        return f"  by {agent} (unsigned)" if sig else f"  by {agent}"
    if sig == "unchecked":
        return f"  by {agent} (signature not checked yet: dcx verify)"
    return f"  by {agent} ✗ {sig}"


@declare(
    render=render,
    decision_id=Option("--decision-id", metavar="ID", help="Only this decision."),
    limit=Option("--limit", type=int, min=1, help="At most N decisions."),
    fmt=FORMAT,
)
def command(g: Globals, *, decision_id: str | None, limit: int | None, fmt: str) -> Result:
    """List decisions newest first, each with its chain of packets, like git log.

    The chain runs assembly → evidence → proposal → outcomes → events →
    commit receipt → feedback (or, settled by review: proposal → gate →
    review → validation event → commit; "outcome due" after an approve), with short refs (give any of them to `dcx show`).
    Goal-level scans are listed apart.

    Example: dcx log --limit 5
    """
    from dcx.ops.log import log

    return log(ws=g.ws(), decision_id=decision_id, limit=limit)
