"""``dcx status``: activation plus a short summary, read from state only.

It never scans, hashes or spawns, so a thin host can call it on every wake-up.
"""

from __future__ import annotations

import json
import os
from typing import Any

from dcx.activation import activation
from dcx.errors import ExitCode
from dcx.fsutil import is_temp, read_lines
from dcx.result import Result
from dcx.workspace import Workspace

# The decision cycle, in order: which packet kind each step leaves behind.
CYCLE = (
    ("assembly", "prepare"),
    ("proposal", "propose"),
    ("outcome", "outcome"),
    ("event", "writeback"),
    ("commit", "commit"),
    ("feedback", "feedback"),
)


def _count_json(folder) -> int:
    try:
        return sum(1 for name in os.listdir(folder) if name.endswith(".json") and not name.startswith("."))
    except FileNotFoundError:
        return 0


def _decision_steps(ws: Workspace, events: list[str]) -> list[dict[str, Any]]:
    with_event: set[str] = set()
    abandoned: set[str] = set()
    event_times: dict[str, list[str]] = {}
    for line in events:
        try:
            event = json.loads(line)
            decision = event["causality"]["decision_id"]
        except (ValueError, KeyError, TypeError):
            continue
        if event.get("event_kind") == "abandon":
            abandoned.add(decision)
        else:
            with_event.add(decision)
        if isinstance(event.get("recorded_at"), str):
            event_times.setdefault(decision, []).append(event["recorded_at"])
    rows = []
    if not ws.decisions.is_dir():
        return rows
    for path in sorted(ws.decisions.glob("*.jsonl")):
        lines, _ = read_lines(path)
        kinds = set()
        times = []
        for line in lines:
            try:
                entry = json.loads(line)
                kinds.add(entry["kind"])
            except (ValueError, KeyError, TypeError):
                continue
            if isinstance(entry.get("observed_at"), str):
                times.append(entry["observed_at"])
        decision = path.stem
        if decision in with_event:
            kinds.add("event")
        rows.append({"decision_id": decision, "last_observed_at": last_observed(times, event_times.get(decision, [])),
                     "next_step": next_step(kinds, abandoned=decision in abandoned),
                     "abandoned": decision in abandoned})
    rows.sort(key=lambda r: (r["last_observed_at"] or "", r["decision_id"]), reverse=True)
    return rows


def next_step(kinds: set[str], *, abandoned: bool) -> str | None:
    """The first cycle step not yet taken; none for an abandoned decision. Shared by status and log."""
    if abandoned:
        return None
    return next((verb for kind, verb in CYCLE if kind not in kinds), None)


def last_observed(index_times: list[str], event_times: list[str]) -> str | None:
    """The latest time a decision's index or events record (status and log agree on it).

    By time, not file order: a union-merged index interleaves two agents' lines.
    """
    return max([*index_times, *event_times], default=None)


def status(*, ws: Workspace, agent_id: str | None, check: bool = False) -> Result:
    state = activation(ws, agent_id)
    kinds = {}
    if ws.packets.is_dir():
        for folder in sorted(ws.packets.iterdir()):
            if folder.is_dir() and not is_temp(folder):
                kinds[folder.name] = _count_json(folder)
    events, _ = read_lines(ws.events)
    try:
        cursors = json.loads(ws.cursors.read_text())
        cursor_count = len(cursors.get("cursors", cursors)) if isinstance(cursors, dict) else 0
    except (FileNotFoundError, ValueError):
        cursor_count = 0
    summary = {
        "packets": kinds,
        "packet_count": sum(kinds.values()),
        "events": len(events),
        "committed_cursors": cursor_count,
        "pending_assemblies": _count_json(ws.pending),
        "decisions": _decision_steps(ws, events),
    }
    data: dict[str, Any] = {"activation": state.public(), "workspace": summary}
    if check:
        from dcx.ops.check import live_checks

        data["checks"] = live_checks(ws, state)
    if state.status == "profile_invalid":
        return Result("status", data, status="error", exit_code=ExitCode.INVALID_INPUT)
    return Result("status", data)
