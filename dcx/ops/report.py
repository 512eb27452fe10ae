"""``dcx report``: decision quality, measured from public files only (SPEC §13).

It reads the decision indexes and the packets they list — never a key, a
profile, a cursor or any other private file — so it works on a fresh clone of
a goal repository and on the git-merged history of several agents. Each
workspace given is one goal; several are reported side by side and summed.

Every file it reads is checked with ``dcx verify``'s own file check
(``store.verify_bytes``: canonical bytes, schema, spec, ref recomputes) plus
verify's goal and decision rules (a private verdict cache skips files whose
exact bytes passed before); a file that fails is left out of every
measure and named in ``left_out`` (status ``partial``). A large history is
read by forked copies of the command, one per CPU, whose results are joined in order. An accepted claim
that cites a revision its own evidence does not list as current is an
*accepted stale claim*: the report names it and exits 1.

The measures themselves are ``dcx/quality.py``; their definitions are in
docs/report.md. Reading is tolerant on purpose: a decision-index line of
a kind the report does not measure (e.g. one from a newer dcx) is
counted in ``other_packets`` and otherwise ignored; an ``agent_id`` on any
packet is picked up when present.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

from dcx.core.canonical import REF_RE, load_pretty
from dcx.core.clock import normalise_ts, parse_ts
from dcx.core.errors import DcxError, ExitCode, InvalidInput
from dcx.core.fsutil import read_bytes
from dcx.core.result import Result
from dcx.core.workspace import Workspace
from dcx.packets import KINDS
from dcx.quality import (
    gate,
    measure_decision,
    merge_providers,
    merge_source_alert_rows,
    provider_rows,
    public_decision,
    source_alert_rows,
    summarise,
)
from dcx.state import decisions
from dcx.state.redaction import is_stub
from dcx.state.signatures import SIGNATURE_COUNTS, signature_counts
from dcx.state.store import verify_parsed

SCHEMA = "dcx_decision_quality_report_v0"
MEASURED_KINDS = ("assembly", "proposal", "outcome", "review")
# stored apart by prepare and read here through the assembly that embeds them
EMBEDDED_KINDS = frozenset(
    {"scan", "coverage", "freshness", "retrieval", "evidence", "rebase", "checkpoint"}
)


# -- loading -------------------------------------------------------------------


class Verdicts:
    """Which file contents already passed ``verify_bytes`` here: a private, optional cache.

    The verdict is a pure function of (dcx version, goal root, kind, bytes) — the
    goal root because the detector refuses text holding it — so the key is their
    hash; an edited file has other bytes, hence another key, and is checked again.
    Only passes are kept (a failing file is re-checked, so it is always named
    with its reason). Kept only where ``private/`` exists: on a bare fresh clone
    the report writes nothing and checks every file.
    """

    NAME = "report-verified.txt"

    def __init__(self, ws: Workspace) -> None:
        from blake3 import blake3

        from dcx import __version__

        self.blake3 = blake3
        self.path = ws.cache / self.NAME
        self.enabled = ws.private.is_dir()
        self.salt = f"{__version__}\0{ws.root}\0".encode()
        self.known: set[str] = set()
        self.new: set[str] = set()
        if self.enabled:
            try:
                self.known = set(read_bytes(self.path).decode("ascii").split())
            except (OSError, UnicodeDecodeError):
                self.known = set()

    def key(self, kind: str, data: bytes) -> str:
        hasher = self.blake3(self.salt)
        hasher.update(kind.encode() + b"\0")
        hasher.update(data)
        return hasher.hexdigest(16)

    def passed(self, key: str) -> bool:
        return key in self.known

    def add(self, key: str) -> None:
        if self.enabled:
            self.new.add(key)

    def save(self) -> None:
        if not self.new:
            return
        from dcx.core.fsutil import atomic_write

        # concurrent reports: the last writer wins; a lost entry only costs a re-check. A cache
        # that cannot be written (read-only clone, full disk) is simply not kept.
        with contextlib.suppress(OSError, DcxError):  # a workspace holding a link: no cache either
            atomic_write(
                self.path, "\n".join(sorted(self.known | self.new)).encode() + b"\n", mode=0o600
            )


class Loaded:
    """One workspace's decisions, measured one at a time (only the rows are kept, so
    memory stays flat however long the history), and what was left out."""

    def __init__(self, ws: Workspace, only: str | None, since: datetime | None) -> None:
        from dcx.core.public import bind_goal_root

        bind_goal_root(str(ws.root))  # verify semantics: text holding this goal root is refused
        self.ws = ws
        self.goal_id = ws.goal_id
        self.packets_dir, self.decisions_dir = str(ws.packets), str(ws.decisions)
        self.verdicts = Verdicts(ws)
        self.left_out: list[dict[str, Any]] = []
        self.key_ids: Counter[str] = Counter()
        self.other_packets: Counter[str] = Counter()
        self.since = since
        self.rows: list[dict[str, Any]] = []
        self.measured: list[tuple[str, Any]] = []  # (ref, agent_id): whose signature to count
        ids = decisions.decision_ids(ws)
        chosen = ids if only is None else [i for i in ids if i == only]
        workers = _workers(len(chosen))
        if workers > 1:
            self._in_parallel(chosen, workers)
        else:
            for ident in chosen:
                self._decision(ident)
        self.verdicts.save()

    def _in_parallel(self, idents: list[str], workers: int) -> None:
        """The same decisions read in ``workers`` contiguous parts, all but the first by forked
        copies of this process (``core.forks``), joined in order: rows, left-out files, key
        ids and counts are those of the sequential loop, and a part that fails in a child is
        read again here, so an error is raised as the sequential loop raises it."""
        from dcx.core.forks import fork_map

        size = -(-len(idents) // workers)
        parts = fork_map(self._part, [idents[at : at + size] for at in range(0, len(idents), size)])
        self.rows, self.left_out = [], []
        self.key_ids, self.other_packets = Counter(), Counter()
        self.measured = []
        for rows, left_out, key_ids, other, verdicts, measured in parts:
            self.measured += measured
            self.rows += rows
            self.left_out += left_out
            self.key_ids.update(key_ids)
            self.other_packets.update(other)
            for key in verdicts:
                self.verdicts.add(key)

    def _part(self, idents: list[str]) -> tuple[Any, ...]:
        """These decisions read into fresh tallies, returned as ``marshal`` writes them (a forked
        child's answer)."""
        self.rows, self.left_out = [], []
        self.key_ids, self.other_packets = Counter(), Counter()
        self.verdicts.new = set()
        self.measured = []
        for ident in idents:
            self._decision(ident)
        return (
            self.rows,
            self.left_out,
            dict(self.key_ids),
            dict(self.other_packets),
            self.verdicts.new,
            self.measured,
        )

    def _leave_out(self, path: Any, ref: str, problem: str) -> None:
        self.left_out.append(
            {"goal_id": self.goal_id, "file": self.ws.rel(path), "ref": ref, "problem": problem}
        )

    def _entries(self, ident: str) -> list[dict[str, Any]]:
        """The index lines in (observed_at, line) order, as ``decisions.entries`` gives them;
        one JSON parse per file instead of one per line (the fast path of a 10,000-decision report)."""
        path = os.path.join(self.decisions_dir, f"{ident}.jsonl")
        try:
            text = read_bytes(Path(path)).decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return decisions.entries(self.ws, ident)
        if not text.endswith("\n"):
            return decisions.entries(
                self.ws, ident
            )  # a torn last line: the careful reader skips it
        try:
            rows = json.loads("[" + text.rstrip("\n").replace("\n", ",") + "]")
        except ValueError:
            return decisions.entries(self.ws, ident)
        if not all(
            type(r) is dict and type(r.get("ref")) is str and type(r.get("kind")) is str
            for r in rows
        ):
            return decisions.entries(self.ws, ident)
        order = sorted(range(len(rows)), key=lambda i: (str(rows[i].get("observed_at", "")), i))
        return [rows[i] for i in order]

    def _decision(self, ident: str) -> None:
        packets: dict[str, list[dict[str, Any]]] = {kind: [] for kind in MEASURED_KINDS}
        seen: set[str] = set()
        entries = self._entries(ident)
        for entry in entries:
            kind, ref = entry["kind"], entry["ref"]
            if ref in seen:
                continue  # a union merge may repeat a line
            seen.add(ref)
            if kind not in MEASURED_KINDS:
                if kind not in EMBEDDED_KINDS:
                    self.other_packets[kind] += 1  # commit, feedback, kinds of a newer dcx
                continue
            packet = self._read(kind, ref, ident)
            if packet is not None:
                packets[kind].append(packet)
        first_seen = str(entries[0].get("observed_at", "")) if entries else ""
        row = measure_decision(self.goal_id, ident, packets, first_seen)
        if self.since and (row["started_at"] is None or parse_ts(row["started_at"]) < self.since):
            return
        self.rows.append(row)

    def _read(self, kind: str, ref: str, ident: str) -> dict[str, Any] | None:
        match = REF_RE.fullmatch(ref)
        if not match or match.group("prefix") != KINDS[kind].prefix:
            self._leave_out(
                self.ws.decisions / f"{ident}.jsonl",
                ref[:160],
                f"indexed as {kind}, which its ref is not",
            )
            return None
        path = os.path.join(self.packets_dir, kind, f"{ref}.json")
        try:
            data = read_bytes(Path(path))
        except FileNotFoundError:
            self._leave_out(Path(path), ref, "listed in the decision index but missing")
            return None
        except OSError as exc:
            self._leave_out(Path(path), ref, f"unreadable ({exc.strerror})")
            return None
        key = self.verdicts.key(kind, data) if self.verdicts.enabled else ""
        if key and self.verdicts.passed(key):
            packet = load_pretty(data)
            if packet is None:
                packet = json.loads(data)
        else:
            problem, parsed = verify_parsed(
                kind, ref, data
            )  # dcx verify's own check of a stored file
            if problem or parsed is None:
                self._leave_out(Path(path), ref, problem or "not a JSON object")
                return None
            self.verdicts.add(key)
            packet = parsed
        if is_stub(packet):
            self._leave_out(Path(path), ref, f"redacted ({packet.get('reason_code')})")
            return None
        if packet.get("goal_id") != self.goal_id:
            self._leave_out(Path(path), ref, f"belongs to another goal ({packet.get('goal_id')})")
            return None
        if packet.get("decision_id") != ident:
            self._leave_out(Path(path), ref, "belongs to another decision")
            return None
        self.key_ids[packet["key_id"]] += 1
        self.measured.append((ref, packet.get("agent_id")))
        return packet


# -- reading on several CPUs ----------------------------------------------------------

PARALLEL_FROM = 400  # decisions: below this, forking costs more than it saves


def _workers(count: int) -> int:
    """How many processes read ``count`` decisions: the CPUs this process may use (at most
    ``DCX_REPORT_WORKERS`` when set; 1 reads in this process), for a large history read where
    forking is safe (``core.forks.can_fork``)."""
    from dcx.core.forks import can_fork

    if count < PARALLEL_FROM or not can_fork():
        return 1
    cpus = len(os.sched_getaffinity(0))
    knob = os.environ.get("DCX_REPORT_WORKERS", "")
    if knob.isdigit() and int(knob) >= 1:
        cpus = min(cpus, int(knob))
    return max(1, min(cpus, 8))


# -- the use case ------------------------------------------------------------------


def report(
    *,
    workspaces: list[Workspace],
    decision_id: str | None = None,
    since: str | None = None,
    html: str | None = None,
) -> Result:
    since_ts = normalise_ts(since, field="--since") if since else None
    seen_goals: dict[str, int] = {}
    for index, ws in enumerate(workspaces):
        if ws.goal_id in seen_goals:
            raise InvalidInput(
                f"-C #{index + 1} serves goal {ws.goal_id}, like -C #{seen_goals[ws.goal_id] + 1}",
                code="goal_repeated",
                field="-C",
                hint="give each goal once; merge two agents' histories of one goal with git first",
            )
        seen_goals[ws.goal_id] = index

    goals: list[dict[str, Any]] = []
    all_rows: list[dict[str, Any]] = []
    left_out: list[dict[str, Any]] = []
    for ws in workspaces:
        item = Loaded(ws, decision_id, parse_ts(since_ts) if since_ts else None)
        rows = item.rows
        rows.sort(key=lambda r: (r["started_at"] or "", r["decision_id"]))
        all_rows += rows
        left_out += item.left_out
        pinned = _pinned_key(item.ws)
        receipts, unusable = alert_receipts(ws, decision_id, since_ts)
        left_out += unusable
        goals.append(
            {
                "goal_id": item.goal_id,
                "summary": summarise(rows),
                "providers": provider_rows(item.goal_id, merge_providers(rows)),
                "agents": sorted({a for r in rows for a in r["agents"]}),
                "key_ids": dict(sorted(item.key_ids.items())),
                "foreign_key_ids": _foreign(item.key_ids, pinned),
                "other_packets": dict(sorted(item.other_packets.items())),
                "signatures": signature_counts(item.ws, item.measured),
                "source_alerts": source_alert_rows(receipts),
            }
        )

    accepted_stale = [c for r in all_rows for c in r["accepted_stale"]]
    data = {
        "schema_version": SCHEMA,
        "filters": {"decision_id": decision_id, "since": since_ts},
        "goals": goals,
        "totals": summarise(all_rows),
        "providers": provider_rows(None, merge_providers(all_rows)),
        "promotion_gate": gate(goals),
        "source_alerts": merge_source_alert_rows(g["source_alerts"] for g in goals),
        "decisions": [public_decision(r) for r in all_rows],
        "accepted_stale_claims": accepted_stale,
        "left_out": left_out,
        "signatures": {k: sum(g["signatures"][k] for g in goals) for k in SIGNATURE_COUNTS},
    }
    warnings = [
        f"{row['goal_id']}: {row['file']}: {row['problem']} (left out of the report)"
        for row in left_out
    ]
    for goal in goals:
        if goal["foreign_key_ids"]:
            warnings.append(
                f"{goal['goal_id']}: packets minted with another key ({', '.join(goal['foreign_key_ids'])})"
                " are measured; their opaque refs are not compared with this key's"
            )
    if html:
        from dcx.core.fsutil import atomic_write
        from dcx.report_html import render_html

        target = Path(html)
        if not target.parent.is_dir():
            raise InvalidInput(
                f"--html: the folder of {target.name} does not exist", field="--html"
            )
        atomic_write(target, render_html(data).encode())
    if accepted_stale:
        warnings.insert(
            0,
            f"{len(accepted_stale)} accepted stale claim(s): a recalled claim was accepted against "
            "an authority revision that is not current",
        )
        return Result("report", data, status="error", warnings=warnings, exit_code=ExitCode.REFUSED)
    return Result("report", data, status="partial" if left_out else "ok", warnings=warnings)


def alert_receipts(
    ws: Workspace, decision_id: str | None, since: str | None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The stored scan receipts that carry ``alerts`` (SPEC §5.5 v4), each checked as ``dcx
    verify`` checks it, and the files left out. Every receipt is here once — goal-level ones
    from ``dcx scan`` and the ones ``prepare`` stores apart — and a file whose bytes do not
    mention ``alerts`` cannot carry any, so it is skipped unparsed."""
    folder = ws.packets / "scan"
    found: list[dict[str, Any]] = []
    left_out: list[dict[str, Any]] = []
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".json") and n[0] != ".")
    except OSError:
        return found, left_out
    for name in names:
        path = folder / name
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if b'"alerts"' not in data:
            continue
        problem, packet = verify_parsed("scan", name[: -len(".json")], data)
        if problem is None and packet is not None and packet.get("goal_id") != ws.goal_id:
            problem = f"belongs to another goal ({packet.get('goal_id')})"
        if problem or packet is None:
            ref = name[: -len(".json")][:160]
            left_out.append(
                {"goal_id": ws.goal_id, "file": ws.rel(path), "ref": ref, "problem": problem or "?"}
            )
            continue
        if decision_id is not None and packet.get("decision_id") != decision_id:
            continue
        if since is not None and parse_ts(packet["observed_at"]) < parse_ts(since):
            continue
        found.append(packet)
    return found, left_out


def _foreign(key_ids: Counter[str], pinned: str | None) -> list[str]:
    """Key ids other than the goal's: the pinned one, else the one most packets carry."""
    if not key_ids:
        return []
    own = pinned or min(key_ids, key=lambda k: (-key_ids[k], k))
    return sorted(k for k in key_ids if k != own)


def _pinned_key(ws: Workspace) -> str | None:
    """The goal's key id: pinned in workspace.toml when present (public), else none."""
    import tomllib

    try:
        value = tomllib.loads(read_bytes(ws.workspace_toml).decode("utf-8")).get("key_id")
    except (OSError, tomllib.TOMLDecodeError):
        return None
    return value if isinstance(value, str) else None
