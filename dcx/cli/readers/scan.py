"""`dcx scan` without typer: its option parsing, its call and its text view.

The typer command (``dcx.cli.scan``) and the fast path (:func:`fast`, tried
by ``dcx.cli._fast`` before typer is imported) share :func:`scan_call` and
:func:`render`, and both answer through ``dcx.cli._answer``; only the option
parsing differs. :func:`fast` answers only argv shapes it fully understands
(``--source`` repeated, ``--agent-id``, ``--observed-at``, ``--format
text|json``, each as ``--opt value`` or ``--opt=value``) and returns None for
anything else — ``--help``, an unknown option, ``--``, a positional argument,
an empty value or one starting with ``-``, a format typer would refuse — so
the typer app answers those. tests/cli/test_fast_scan.py compares both
paths byte for byte.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from dcx.core.result import Result

# option -> keyword; ``source`` is repeatable, the others: the last one given wins (as click)
OPTIONS = {
    "--source": "source",
    "--agent-id": "agent_id",
    "--observed-at": "observed_at",
    "--format": "fmt",
}


def fast(rest: list[str], workspace: str | None, verbose: int, no_color: bool) -> int | None:
    """Answer ``dcx scan REST`` and return its exit code, or None (the typer app answers)."""
    agent_id = os.environ.get("DCX_AGENT_ID") or None
    fmt = os.environ.get("DCX_FORMAT") or "text"
    observed_at = None
    sources: list[str] = []
    args = list(rest)
    while args:
        arg = args.pop(0)
        name, eq, inline = arg.partition("=")
        key = OPTIONS.get(name) if arg.startswith("--") else None
        if key is None:
            return None  # --help, --, a positional argument, anything unknown
        if eq:
            value = inline
        elif args:
            value = args.pop(0)
        else:
            return None
        if not value or value.startswith("-"):
            return None  # typer's own message for a missing or odd value
        if key == "source":
            sources.append(value)
        elif key == "agent_id":
            agent_id = value
        elif key == "observed_at":
            observed_at = value
        else:
            fmt = value
    fmt = fmt.lower()
    if fmt not in ("json", "text"):
        return None
    from dcx.cli._answer import answer
    from dcx.cli._globals import Globals

    call = scan_call(agent_id=agent_id, source_ids=sources, observed_at=observed_at, fmt=fmt)
    return answer(
        Globals(workspace=workspace, verbose=verbose, no_color=no_color), fmt, call, render
    )


def scan_call(
    *, agent_id: str | None, source_ids: Sequence[str], observed_at: str | None, fmt: str
) -> Callable[[Any], Result]:
    """The call both paths make: ops.scan, with a progress bar in text mode on a terminal."""

    def call(g) -> Result:
        from dcx.ops.scan import scan

        if fmt == "text" and sys.stderr.isatty():
            from dcx.cli._progress import HashProgress

            with HashProgress(no_color=g.no_color) as progress:
                return scan(
                    ws=g.ws(),
                    agent_id=agent_id,
                    source_ids=list(source_ids),
                    clock=g.clock(observed_at),
                    progress=progress,
                )
        return scan(
            ws=g.ws(), agent_id=agent_id, source_ids=list(source_ids), clock=g.clock(observed_at)
        )

    return call


def render(console, result: Result) -> None:
    from dcx.cli.views.common import grid

    receipts = result.data["receipts"]
    rows = []
    for receipt in receipts:
        changes = str(receipt["changed_count"])
        if receipt["telemetry"]["result_cap_applied"]:
            changes += " (capped)"
        rows.append(
            [
                receipt["source_id"],
                receipt["status"],
                changes,
                receipt.get("reason_code") or "-",
                receipt["receipt_ref"].rsplit("-", 1)[1][:12],
            ]
        )  # `dcx show` takes a hex prefix
    if rows:
        grid(console, ("source", "status", "changes", "reason", "receipt"), rows)
    for line in alert_lines(receipts):
        console.print(line, markup=False)
    summary = f"{len(receipts)} receipt(s) stored · cursors unchanged"
    if result.status == "partial":
        summary += " · partial: a source was unavailable (fail-open)"
    console.print(summary, markup=False)


def alert_lines(receipts: list[dict[str, Any]]) -> list[str]:
    """One line per source whose receipt raised, holds or cleared an alert (SPEC §5.5 v4)."""
    lines = []
    for receipt in receipts:
        alerts = receipt.get("alerts")
        if not alerts or not (alerts["active"] or alerts["cleared"]):
            continue
        parts = [
            code + (" (raised)" if code in alerts["raised"] else "") for code in alerts["active"]
        ]
        parts += [f"{code} cleared" for code in alerts["cleared"]]
        streak = alerts["failure_streak"]
        if streak:
            parts.append(f"{streak} consecutive failure(s)")
        lines.append(f"alert: {receipt['source_id']}: " + ", ".join(parts))
    return lines
