"""`dcx status` for people, without rich: SPEC §3.6 keeps rich off the status path.

Plain aligned lines, coloured with ANSI codes only on a terminal (and never
with ``--no-color`` or ``NO_COLOR``): the status view writes them as one raw
block of its page (``dcx.cli._layout``).
"""

from __future__ import annotations

import os
import sys
from typing import Any

from dcx.cli._layout import NARROW
from dcx.core.terminal import visible_data

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


# One sentence per activation reason code: what it means and what to do.
MESSAGES = {
    "profile_missing": "no profile.toml: run `dcx init`",
    "profile_disabled": "turned off for this goal: `dcx enable`",
    "profile_unavailable_or_invalid": "profile.toml or sources.toml cannot be used (see below)",
    "goal_scope_mismatch": "profile.toml serves another goal than workspace.toml",
    "agent_id_required": "which agent? pass --agent-id or set DCX_AGENT_ID",
    "agent_not_enabled": "this agent is not enabled: `dcx enable --agent AGENT_ID`",
    "source_provider_adapter_unavailable": "a source adapter is not installed (recall and other sources still work)",
}


def _step(row: dict[str, Any]) -> str:
    if row.get("abandoned"):
        return "abandoned"
    if row.get("commit_elsewhere"):
        return "commit on the host that prepared it"
    step = f"dcx {row['next_step']}" if row["next_step"] else "done"
    if row.get("outcome_due"):
        step += " (outcome due)"
    elif row.get("settlement") and not row["next_step"]:
        step = f"done ({row['settlement']})"
    return step


# below NARROW columns the decisions print one block each, as dcx's tables do


def terminal_width() -> int | None:
    """The terminal's columns when stdout is one (piped: None, lines are never wrapped)."""
    if not sys.stdout.isatty():
        return None
    try:
        return os.get_terminal_size(sys.stdout.fileno()).columns
    except OSError:
        return None


def _fit(label: str, parts: list[str], width: int | None) -> list[str]:
    """``label`` + parts joined by " · ", continued on indented lines when a terminal is narrower."""
    line, out = label + parts[0], []
    for part in parts[1:]:
        if width is not None and len(line) + 3 + len(part) > width:
            out.append(line)
            line = " " * len(label) + part
        else:
            line += " · " + part
    return [*out, line]


def _alert_lines(alerts: dict[str, Any], colour: bool) -> list[str]:
    """One line per source with an alert or a failure streak (SPEC §5.5 v4)."""
    lines = []
    for row in alerts.get("sources", []):
        parts = list(row["alerts"])
        if row["failure_streak"]:
            parts.append(f"{row['failure_streak']} consecutive failure(s)")
        lines.append(_paint(f"alert     {row['source_id']}: {', '.join(parts)}", "33", colour))
    return lines


def format_status(data: dict[str, Any], *, colour: bool, width: int | None = None) -> str:
    # ids and messages come from files a merge may have brought (SPEC §3.4.1)
    data = visible_data(data)
    lines = _activation(data["activation"], data.get("alerts") or {}, colour)
    ws = data["workspace"]
    lines.extend(
        _fit(
            "packets   ",
            [
                str(ws["packet_count"]),
                f"events {ws['events']}",
                f"committed cursors {ws['committed_cursors']}",
                f"pending {ws['pending_assemblies']}",
            ],
            width,
        )
    )
    if data.get("key"):
        lines.extend(_key(data["key"], colour, width))
    if data.get("checks"):
        lines.extend(_checks(data["checks"], colour))
    if ws["decisions"]:
        lines.append("")
        lines.extend(_decisions(ws["decisions"], colour, width))
    return "\n".join(lines) + "\n"


def _activation(act: dict[str, Any], alerts: dict[str, Any], colour: bool) -> list[str]:
    code = act["reason_code"]
    reason = f" — {MESSAGES.get(code, code)}" if code else ""
    lines = [
        f"goal      {_paint(act['goal_id'], '36', colour)}",
        f"agent     {act['agent_id'] or '-'}",
        f"status    {_paint(act['status'], STATUS_COLOUR.get(act['status']), colour)}{reason}",
    ]
    if act.get("error"):
        lines.append(f"          {_paint(act['error']['message'], '31', colour)}")
    lines.append(
        f"sources   {act['enabled_source_count']} enabled of {act['source_count']}"
        f" · recall: {act['context_provider']}"
    )
    lines.extend(_alert_lines(alerts, colour))
    if act["unavailable_adapter_count"]:
        lines.append(
            _paint(
                f"          {act['unavailable_adapter_count']} source adapter(s) unavailable",
                "33",
                colour,
            )
        )
    return lines


def _key(key: dict[str, Any], colour: bool, width: int | None) -> list[str]:
    pinned, local = key.get("pinned_key_id"), key.get("local_key_id")
    parts = [f"pinned {pinned or '-'}", f"local {local or '-'}"]
    if pinned and local != pinned:
        parts.append(
            "no key here: dcx key import FILE"
            if local is None
            else "another key: refs do not compare"
        )
    fitted = _fit("key       ", parts, width)
    return [_paint(line, "33", colour) if len(parts) > 2 else line for line in fitted]


def _checks(checks: dict[str, Any], colour: bool) -> list[str]:
    lines = []
    for row in checks["sources"]:
        ok = row["status"] == "ok"
        mark = (
            _paint("ok", "32", colour)
            if ok
            else f"{_paint(row['status'], '31', colour)} ({row['reason_code']})"
        )
        lines.append(f"check     source {row['source_id']}: {mark}")
    recall = checks["recall"]
    if recall:
        ready = recall["status"] == "ready"
        mark = _paint(recall["status"], "32" if ready else "33", colour)
        why = f" ({recall['reason_code']})" if recall.get("reason_code") else ""
        lines.append(f"check     recall {recall['provider']}: {mark}{why}")
    return lines


def _decisions(decisions: list[dict[str, Any]], colour: bool, width: int | None) -> list[str]:
    """The decisions as a table, or one block each below ``NARROW`` columns; then their hints."""
    rows = [("decision", "last observed", "next step")] + [
        (r["decision_id"], r["last_observed_at"] or "-", _step(r)) for r in decisions
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines: list[str] = []
    if width is not None and sum(widths) + 4 > width and width < NARROW:
        for row in rows[1:]:
            lines.extend([f"decision  {row[0]}", f"observed  {row[1]}", f"next      {row[2]}", ""])
        lines.pop()
    else:
        for index, row in enumerate(rows):
            text = "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
            lines.append(_paint(text, "1", colour) if index == 0 else text)
    lines.extend(f"  {r['decision_id']}: {r['next_hint']}" for r in decisions if r.get("next_hint"))
    return lines
