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


PREVIEW_HINT = ("the latest assembly is a preview: nothing in it can be committed; prepare again with "
                "--auto-rebase, --rebase FILE or --baseline")


def next_step(kinds: set[str], latest_is_preview: bool, *, abandoned: bool = False) -> tuple[str | None, str | None]:
    """The next cycle verb for a decision whose steps left ``kinds``, and a hint when it is not obvious.

    A preview assembly can never be committed, so after one the next step is
    another ``prepare`` (with a mode), whatever was recorded after it. An
    abandoned decision has no next step. Shared by status and log.
    """
    if abandoned:
        return None, None
    if latest_is_preview:
        return "prepare", PREVIEW_HINT
    return next((verb for kind, verb in CYCLE if kind not in kinds), None), None


def is_preview(ws: Workspace, assembly_ref: str | None) -> bool:
    """Whether a stored assembly is a preview (a plain read: status never verifies packets)."""
    if assembly_ref is None:
        return False
    try:
        return json.loads((ws.packets / "assembly" / f"{assembly_ref}.json").read_bytes()).get("preview") is True
    except (OSError, ValueError, AttributeError):
        return False


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
        assembly: tuple[str, int, str] | None = None
        for number, line in enumerate(lines):
            try:
                entry = json.loads(line)
                kinds.add(entry["kind"])
                if entry["kind"] == "assembly":
                    stamp = (str(entry.get("observed_at", "")), number, entry.get("ref"))
                    assembly = stamp if assembly is None or stamp > assembly else assembly
            except (ValueError, KeyError, TypeError):
                continue
            if isinstance(entry.get("observed_at"), str):
                times.append(entry["observed_at"])
        decision = path.stem
        if decision in with_event:
            kinds.add("event")
        gone = decision in abandoned
        verb, hint = next_step(kinds, is_preview(ws, assembly[2] if assembly else None), abandoned=gone)
        rows.append({"decision_id": decision, "last_observed_at": last_observed(times, event_times.get(decision, [])),
                     "next_step": verb, "next_hint": hint, "abandoned": gone})
    rows.sort(key=lambda r: (r["last_observed_at"] or "", r["decision_id"]), reverse=True)
    return rows


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
