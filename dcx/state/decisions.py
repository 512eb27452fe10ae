"""``decisions/<decision-id>.jsonl``: the append-only index of a decision's packets (SPEC §2).

One line per packet bound to the decision, ``{kind, ref, observed_at}``,
appended under a lock, idempotent by ref. Two agents' appends merge through
git's union driver; readers order by ``observed_at`` then line order.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dcx.core.fsutil import DEFAULT_WAIT, locked_append, read_lines
from dcx.core.workspace import Workspace


def index_path(ws: Workspace, decision_id: str) -> Path:
    return ws.decisions / f"{decision_id}.jsonl"


def append(
    ws: Workspace,
    decision_id: str,
    kind: str,
    ref: str,
    observed_at: str,
    *,
    wait: float = DEFAULT_WAIT,
) -> bool:
    """Append ``{kind, ref, observed_at}`` unless the ref is already indexed; True if appended."""
    return append_many(ws, decision_id, [(kind, ref)], observed_at, wait=wait) == 1


def append_many(
    ws: Workspace,
    decision_id: str,
    entries: Sequence[tuple[str, str]],
    observed_at: str,
    *,
    wait: float = DEFAULT_WAIT,
) -> int:
    """Append ``(kind, ref)`` lines in order, under one lock and in one write, skipping refs already
    indexed (or repeated); return how many lines were appended."""
    path = index_path(ws, decision_id)
    added = 0

    def decide(lines: list[str]) -> bytes | None:
        nonlocal added
        seen = set()
        for existing in lines:
            try:
                seen.add(json.loads(existing).get("ref"))
            except (ValueError, AttributeError):
                continue
        out = []
        for kind, ref in entries:
            if ref in seen:
                continue
            seen.add(ref)
            out.append(
                json.dumps(
                    {"kind": kind, "observed_at": observed_at, "ref": ref}, sort_keys=True
                ).encode()
            )
        added = len(out)
        return b"\n".join(out) if out else None

    locked_append(path, decide, wait=wait, display=ws.rel(path))
    return added


def entries(ws: Workspace, decision_id: str) -> list[dict[str, Any]]:
    """Parsed index lines in (observed_at, line) order; unparsable lines are skipped (verify reports them)."""
    lines, _ = read_lines(index_path(ws, decision_id))
    out = []
    for number, line in enumerate(lines):
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if (
            isinstance(entry, dict)
            and isinstance(entry.get("ref"), str)
            and isinstance(entry.get("kind"), str)
        ):
            out.append({**entry, "_line": number})
    out.sort(key=lambda e: (str(e.get("observed_at", "")), e["_line"]))
    return out


def refs_of(ws: Workspace, decision_id: str, kind: str) -> list[str]:
    seen: list[str] = []
    for entry in entries(ws, decision_id):
        if entry["kind"] == kind and entry["ref"] not in seen:
            seen.append(entry["ref"])
    return seen


def latest(ws: Workspace, decision_id: str, kind: str) -> str | None:
    refs = refs_of(ws, decision_id, kind)
    return refs[-1] if refs else None


def decision_ids(ws: Workspace) -> list[str]:
    if not ws.decisions.is_dir():
        return []
    return sorted(p.stem for p in ws.decisions.glob("*.jsonl"))
