"""`dcx status` for people, without rich: SPEC §3.6 keeps rich off the status path.

Plain aligned lines, coloured with ANSI codes only on a terminal (and never
with ``--no-color`` or ``NO_COLOR``). Used by the typer command and by the
fast path, so both print the same bytes.
"""

from __future__ import annotations

import os
import sys
from typing import Any

STATUS_COLOUR = {
    "available": "32",
    "provider_unavailable": "33",
    "disabled": "2",
    "agent_not_enabled": "33",
    "profile_invalid": "31",
}


def use_colour(no_color: bool) -> bool:
    return not no_color and not os.environ.get("NO_COLOR") and sys.stdout.isatty()


def _paint(text: str, code: str | None, colour: bool) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if colour and code else text


def _step(row: dict[str, Any]) -> str:
    step = f"dcx {row['next_step']}" if row["next_step"] else "done"
    if row.get("outcome_due"):
        step += " (outcome due)"
    elif row.get("settlement") and not row["next_step"]:
        step = f"done ({row['settlement']})"
    return step


def format_status(data: dict[str, Any], *, colour: bool) -> str:
    act = data["activation"]
    ws = data["workspace"]
    reason = f" ({act['reason_code']})" if act["reason_code"] else ""
    lines = [
        f"goal      {_paint(act['goal_id'], '36', colour)}",
        f"agent     {act['agent_id'] or '-'}",
        f"status    {_paint(act['status'], STATUS_COLOUR.get(act['status']), colour)}{reason}",
    ]
    if act.get("error"):
        lines.append(f"          {_paint(act['error']['message'], '31', colour)}")
    lines.append(f"sources   {act['enabled_source_count']} enabled of {act['source_count']}"
                 f" · recall: {act['context_provider']}")
    if act["unavailable_adapter_count"]:
        lines.append(_paint(f"          {act['unavailable_adapter_count']} source adapter(s) unavailable",
                            "33", colour))
    lines.append(f"packets   {ws['packet_count']} · events {ws['events']} · committed cursors "
                 f"{ws['committed_cursors']} · pending {ws['pending_assemblies']}")
    checks = data.get("checks")
    if checks:
        for row in checks["sources"]:
            ok = row["status"] == "ok"
            mark = _paint("ok", "32", colour) if ok else f"{_paint(row['status'], '31', colour)} ({row['reason_code']})"
            lines.append(f"check     source {row['source_id']}: {mark}")
        recall = checks["recall"]
        if recall:
            ready = recall["status"] == "ready"
            mark = _paint(recall["status"], "32" if ready else "33", colour)
            why = f" ({recall['reason_code']})" if recall.get("reason_code") else ""
            lines.append(f"check     recall {recall['provider']}: {mark}{why}")
    if ws["decisions"]:
        rows = [("decision", "last observed", "next step")] + [
            (r["decision_id"], r["last_observed_at"] or "-", _step(r))
            for r in ws["decisions"]
        ]
        widths = [max(len(row[i]) for row in rows) for i in range(3)]
        lines.append("")
        for index, row in enumerate(rows):
            text = "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
            lines.append(_paint(text, "1", colour) if index == 0 else text)
    return "\n".join(lines) + "\n"
