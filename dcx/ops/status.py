"""``dcx status``: activation plus a short summary, read from state only.

It never scans, hashes or spawns, so a thin host can call it on every wake-up.
"""

from __future__ import annotations

import json
import os
from typing import Any

from dcx import cycle
from dcx.core.clock import Clock, clock_from_env
from dcx.core.errors import DcxError, ExitCode
from dcx.core.fsutil import is_temp, read_bytes, read_lines
from dcx.core.result import Result
from dcx.core.workspace import Workspace
from dcx.state.activation import activation

# kept for readers that import it from here
CYCLE = cycle.CYCLE


def is_preview(ws: Workspace, assembly_ref: str | None) -> bool:
    """Whether a stored assembly is a preview (a plain read: status never verifies packets)."""
    if assembly_ref is None:
        return False
    try:
        return (
            json.loads(read_bytes(ws.packets / "assembly" / f"{assembly_ref}.json")).get("preview")
            is True
        )
    except (OSError, ValueError, AttributeError):
        return False


def _count_json(folder) -> int:
    try:
        return sum(
            1 for name in os.listdir(folder) if name.endswith(".json") and not name.startswith(".")
        )
    except FileNotFoundError:
        return 0


def _outcomes(ws: Workspace, refs: list[str]) -> list[dict[str, Any]]:
    """Outcome receipts read as plain JSON (status never re-hashes; verify does)."""
    out = []
    for ref in refs:
        try:
            packet = json.loads(read_bytes(ws.packets / "outcome" / f"{ref}.json"))
        except (OSError, ValueError):
            continue
        if isinstance(packet, dict):
            out.append(packet)
    return out


def _decision_steps(ws: Workspace, events: list[str], require_review: bool) -> list[dict[str, Any]]:
    by_decision: dict[str, list[dict[str, Any]]] = {}
    for line in events:
        try:
            event = json.loads(line)
            by_decision.setdefault(event["causality"]["decision_id"], []).append(event)
        except (ValueError, KeyError, TypeError):
            continue
    rows: list[dict[str, Any]] = []
    if not ws.decisions.is_dir():
        return rows
    for path in sorted(ws.decisions.glob("*.jsonl")):
        lines, _ = read_lines(path)
        kinds = set()
        outcome_refs = []
        times = []
        pending_here = False
        assembly: tuple[str, int, str] | None = None  # the latest by time, not by line
        for number, line in enumerate(lines):
            try:
                entry = json.loads(line)
                kinds.add(entry["kind"])
                if entry["kind"] == "outcome":
                    outcome_refs.append(entry["ref"])
                if entry["kind"] == "assembly":
                    pending_here = pending_here or (ws.pending / f"{entry['ref']}.json").exists()
                    stamp = (str(entry.get("observed_at", "")), number, entry["ref"])
                    assembly = stamp if assembly is None or stamp > assembly else assembly
            except (ValueError, KeyError, TypeError):
                continue
            if isinstance(entry.get("observed_at"), str):
                times.append(entry["observed_at"])
        decision = path.stem
        mine = by_decision.get(decision, [])
        settled = cycle.settlement(mine)
        observed = cycle.outcome_observed(
            _outcomes(ws, outcome_refs) if settled["approved"] else [], settled["approved"]
        )
        where = cycle.standing(
            kinds,
            settled,
            observed,
            require_review=require_review,
            latest_is_preview=is_preview(ws, assembly[2] if assembly else None),
        )
        where = cycle.commit_here(where, pending_here)
        event_times = [e["recorded_at"] for e in mine if isinstance(e.get("recorded_at"), str)]
        rows.append(
            {
                "decision_id": decision,
                "last_observed_at": cycle.last_observed(times, event_times),
                **where,
            }
        )
    rows.sort(key=lambda r: (r["last_observed_at"] or "", r["decision_id"]), reverse=True)
    return rows


def key_ids(ws: Workspace) -> dict[str, Any]:
    """The goal's pinned key id (workspace.toml) and this host's (private/key), SPEC §16."""
    from dcx.state.keys import KEY_BYTES, Key, pinned_key_id, read_secret

    try:
        secret = read_secret(ws)
    except OSError:
        secret = b""
    local = Key(secret).key_id if len(secret) == KEY_BYTES else None
    pinned = pinned_key_id(ws)
    return {
        "pinned_key_id": pinned,
        "local_key_id": local,
        "matches": pinned is not None and local == pinned,
    }


def key_warning(key: dict[str, Any]) -> list[str]:
    """A warning while this host's key is not the goal's pinned key (SPEC §16 v4)."""
    pinned, local = key["pinned_key_id"], key["local_key_id"]
    if pinned is None or local == pinned:
        return []
    if local is None:
        return [
            f"key_missing: this host has no key; the goal pins key {pinned}: dcx key import FILE"
        ]
    return [
        f"key_mismatch: this host's key {local} is not the goal's pinned key {pinned}: refs minted "
        "here do not compare with the other hosts'; import the goal's key (dcx key import FILE)"
    ]


def source_alerts(ws: Workspace, state: Any, now: str) -> dict[str, Any]:
    """The sources' freshness alerts and failure streaks as of ``now``, from the private record
    alone (SPEC §5.5 v4): ids, codes and counts, never a locator."""
    from dcx.state.source_health import read_source_health, standing

    profile, registry = state.profile, state.registry
    if profile is None or registry is None:
        return {"sources": [], "counts": {}}
    rows = standing(
        registry.sources,
        read_source_health(ws),
        now,
        failure_alert_after=profile.failure_alert_after,
    )
    counts: dict[str, int] = {}
    for row in rows:
        for code in row["alerts"]:
            counts[code] = counts.get(code, 0) + 1
    return {"sources": rows, "counts": counts}


def status(
    *, ws: Workspace, agent_id: str | None, check: bool = False, clock: Clock | None = None
) -> Result:
    state = activation(ws, agent_id)
    kinds = {}
    if ws.packets.is_dir():
        for folder in sorted(ws.packets.iterdir()):
            if folder.is_dir() and not is_temp(folder):
                kinds[folder.name] = _count_json(folder)
    events, _ = read_lines(ws.events)
    events = list(
        dict.fromkeys(events)
    )  # a line a union merge brought twice counts once (SPEC §16)
    agent = state.agent_id
    plain = (
        agent is not None
        and agent != ""
        and "/" not in agent
        and "\\" not in agent
        and agent not in (".", "..")
    )
    cursor_file = ws.private / "cursors" / f"{agent}.json" if plain else ws.cursors
    if not cursor_file.exists():
        cursor_file = ws.cursors  # not migrated yet (SPEC §16)
    try:
        cursors = json.loads(read_bytes(cursor_file))
        cursor_count = len(cursors.get("cursors", cursors)) if isinstance(cursors, dict) else 0
    except (FileNotFoundError, ValueError):
        cursor_count = 0
    summary = {
        "packets": kinds,
        "packet_count": sum(kinds.values()),
        "events": len(events),
        "committed_cursors": cursor_count,
        "pending_assemblies": _count_json(ws.pending),
        "decisions": _decision_steps(
            ws, events, bool(state.profile and state.profile.require_review)
        ),
    }
    now = (clock or clock_from_env()).now()
    data: dict[str, Any] = {
        "activation": state.public(),
        "workspace": summary,
        "key": key_ids(ws),
        "alerts": source_alerts(ws, state, now),
    }
    if check:
        from dcx.ops.check import live_checks

        data["checks"] = live_checks(ws, state)
    warnings = key_warning(data["key"]) + _cursor_warnings(ws, agent)
    if state.status == "profile_invalid":
        return Result(
            "status", data, status="error", exit_code=ExitCode.INVALID_INPUT, warnings=warnings
        )
    return Result("status", data, warnings=warnings)


def _cursor_warnings(ws: Workspace, agent: str | None) -> list[str]:
    """``cursor_unbacked`` of the acting agent's cursors (SPEC §16 v4): a plain read, like the rest."""
    if not (ws.private / "cursors").is_dir() and not ws.cursors.exists():
        return []
    from dcx.ops.cursorcheck import unbacked_warnings

    try:
        return unbacked_warnings(ws, agent)
    except DcxError:
        return []  # a bad agent id or an unreadable key: status reports what it can
