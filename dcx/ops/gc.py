"""``dcx gc``: remove private leftovers nothing will read again — never a public file.

What goes, each for a reason a reader can check:

- ``pending``: the companion of an assembly that was committed (a commit
  receipt names it), that belongs to an abandoned decision, that was
  superseded (a newer assembly of the decision exists and no proposal is
  bound to this one's evidence, so no commit can ever use it), that is a
  preview or has no ready row (commit refuses both for good: ``preview``,
  ``nothing_to_commit``), or whose assembly packet is gone;
- ``temp``: ``.*.tmp`` files a crash left beside a target, anywhere under
  ``.decision-context/``;
- ``trees``: tree maps under ``private/trees/`` that no committed cursor and
  no remaining pending companion names;
- ``stat_caches``: the stat cache of a source no longer in ``sources.toml``.

Files changed in the last ``GRACE_SECONDS`` are kept: a prepare may be
between writing a tree map and its pending companion, a writer between its
temp file and the rename. Public files (packets, decision indexes, events,
workspace.toml) are never touched.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from dcx.core.fsutil import is_temp, read_bytes, unlink
from dcx.core.result import Result
from dcx.core.workspace import Workspace
from dcx.state import decisions, events
from dcx.state.cursors import all_cursor_files, read_cursors
from dcx.state.profile import load_registry
from dcx.state.store import Store

GRACE_SECONDS = 600


def _recent(path: Path, now: float) -> bool:
    try:
        return now - path.lstat().st_mtime < GRACE_SECONDS
    except FileNotFoundError:
        return True  # gone already: nothing to do


def pending_verdicts(ws: Workspace, store: Store) -> dict[Path, str | None]:
    """Each pending companion → the reason it can go, or None to keep it."""
    if not ws.pending.is_dir():
        return {}
    committed: set[str] = set()
    for stored in store.iter_packets("commit"):
        committed.add(stored.packet.get("assembly_ref", ""))
    gone_decisions = events.abandoned(events.read_log(ws.events, ws.rel(ws.events)))
    out: dict[Path, str | None] = {}
    for path in sorted(ws.pending.glob("*.json")):
        if is_temp(path):
            continue
        try:
            body = json.loads(read_bytes(path))
            ref, decision = body["assembly_ref"], body["decision_id"]
        except (OSError, ValueError, KeyError, TypeError):
            out[path] = None  # unreadable: commit will say so; gc does not guess
            continue
        if ref in committed:
            out[path] = "committed"
        elif decision in gone_decisions:
            out[path] = "abandoned"
        elif not store.exists(ref):
            out[path] = "assembly_missing"
        elif (dead := _never_commits(store, ref)) is not None:
            out[path] = dead
        elif _superseded(ws, store, decision, ref, body.get("evidence_packet_ref")):
            out[path] = "superseded"
        else:
            out[path] = None
    return out


def _never_commits(store: Store, ref: str) -> str | None:
    """``preview`` (a preview never advances a cursor) or ``nothing_to_commit`` (no ready row: commit
    refuses it), else None."""
    from dcx.core.errors import DcxError
    from dcx.evidence.checkpoints import READY

    try:
        asm = store.get(ref, kind="assembly")
    except DcxError:
        return None  # damaged or redacted: verify reports it; gc does not guess
    if asm.get("preview") is True:
        return "preview"
    rows = asm.get("checkpoint", {}).get("rows", [])
    if not any(row.get("disposition") == READY for row in rows):
        return "nothing_to_commit"
    return None


def live_pending(ws: Workspace) -> list[dict[str, str]]:
    """``{decision_id, assembly_ref}`` of the pending companions here a commit can still use (what
    ``dcx sync`` lists as this host's pending work; gc removes the others)."""
    out = []
    for path, reason in pending_verdicts(ws, Store(ws)).items():
        if reason is not None:
            continue
        try:
            body = json.loads(path.read_text())
            out.append({"decision_id": body["decision_id"], "assembly_ref": body["assembly_ref"]})
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return sorted(out, key=lambda r: (r["decision_id"], r["assembly_ref"]))


def _superseded(
    ws: Workspace, store: Store, decision: str, ref: str, evidence_ref: str | None
) -> bool:
    assemblies = decisions.refs_of(ws, decision, "assembly")
    if not assemblies or assemblies[-1] == ref or ref not in assemblies:
        return False
    for proposal_ref in decisions.refs_of(ws, decision, "proposal"):
        if store.get(proposal_ref, kind="proposal").get("evidence_packet_ref") == evidence_ref:
            return False
    return True


def _named_trees(ws: Workspace, kept_pending: list[Path]) -> set[str]:
    cursors = [v for agent in all_cursor_files(ws) for v in read_cursors(ws, agent).values()]
    for path in kept_pending:
        try:
            body = json.loads(read_bytes(path))
        except (OSError, ValueError):
            continue
        for key in ("expected_cursors", "proposed_cursors"):
            cursors.extend(v for v in (body.get(key) or {}).values() if isinstance(v, str))
    return {cursor.rsplit(":", 1)[-1] for cursor in cursors}


def _temp_files(ws: Workspace) -> list[Path]:
    found: list[Path] = []
    for folder, dirs, files in os.walk(ws.dc):
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(folder, d))]
        found.extend(Path(folder) / name for name in files if is_temp(Path(name)))
    return sorted(found)


def gc(*, ws: Workspace, dry_run: bool, now: float | None = None) -> Result:
    from dcx.core.statcache import cache_path

    now = time.time() if now is None else now
    store = Store(ws)
    verdicts = pending_verdicts(ws, store)
    drop: dict[str, list[tuple[Path, str]]] = {
        "pending": [],
        "temp": [],
        "trees": [],
        "stat_caches": [],
    }
    kept_recent = 0
    kept_pending = []
    for path, reason in verdicts.items():
        if reason is None:
            kept_pending.append(path)
        else:
            drop["pending"].append((path, reason))
    named = _named_trees(ws, kept_pending)
    if ws.trees.is_dir():
        for path in sorted(ws.trees.glob("*.json")):
            if path.stem not in named and not is_temp(path):
                drop["trees"].append((path, "unreferenced"))
    for path in _temp_files(ws):
        drop["temp"].append((path, "crash_leftover"))
    if ws.cache.is_dir():
        try:
            live = {cache_path(ws, s.source_id).name for s in load_registry(ws).sources}
        except Exception:  # an invalid registry: keep every cache rather than guess
            live = None
        if live is not None:
            for path in sorted(ws.cache.glob("stat-*.bin")):
                if path.name not in live:
                    drop["stat_caches"].append((path, "source_removed"))
    report: dict[str, list[dict[str, str]]] = {}
    freed = 0
    for category, items in drop.items():
        report[category] = []
        for path, reason in items:
            if category != "pending" and _recent(path, now):
                kept_recent += 1
                continue
            try:
                size = path.lstat().st_size
            except FileNotFoundError:
                continue
            if not dry_run:
                try:
                    unlink(path)  # never what a link points at (SPEC §3.5 v4)
                except FileNotFoundError:
                    continue
            freed += size
            report[category].append({"path": ws.rel(path), "reason": reason})
    data: dict[str, Any] = {
        "dry_run": dry_run,
        "removed": report,
        "removed_count": sum(len(v) for v in report.values()),
        "bytes": freed,
        "kept_recent": kept_recent,
    }
    return Result("gc", data)
