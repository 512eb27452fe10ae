"""``dcx verify``: re-hash every packet and event, check every link (SPEC §9).

Problems are collected, never raised, so one run lists them all:

- each packet file verifies (bytes, schema, ref, folder);
- every packet ref a packet names exists, has the kind its prefix says, and
  belongs to the same goal (and the same decision, for decision packets);
- every decision-index line parses and points at an existing packet of that
  kind, goal and decision, with the time that packet was recorded;
- every event recomputes its id, belongs to this goal, and names existing
  packets; one id never has two bodies (a line `dcx redact` replaced is listed
  under ``redacted``);
- every review receipt keeps the rules of its disposition, still matches the
  user-gate event it cites (disposition, scope, todo, time), and the
  validation event that names it says the same disposition and cause;
- no append-only log ends in a torn line (``--repair`` moves it aside);
- every private cursor is backed by a commit receipt still in history, else a
  ``cursor_unbacked`` warning (``--repair`` rewinds it: dcx/ops/cursorcheck.py).

A redacted packet (a ``dcx_redacted_v0`` stub left by `dcx redact`) is
listed under ``redacted``, not as a problem: links to it resolve to the stub
(same goal and decision), and everything else is checked as usual.

Packets minted with another key (merged from another host of the goal)
verify too: their opaque refs are simply not comparable here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dcx.core.canonical import REF_RE
from dcx.core.errors import DcxError, ExitCode, WorkspaceSymlink
from dcx.core.fsutil import (
    foreign_entries,
    preflight,
    read_bytes,
    read_lines,
    set_aside_torn_tail,
)
from dcx.core.result import Result
from dcx.core.workspace import PRIVATE_NAMES, Workspace
from dcx.packets import BY_PREFIX, KINDS
from dcx.state import events
from dcx.state.redaction import check_stub, is_stub
from dcx.state.store import Store, verify_file


def packet_refs(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """(key path, ref) of every packet ref inside a JSON value."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from packet_refs(item, f"{path}.{key}" if path else key)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from packet_refs(item, f"{path}[{index}]")
    elif isinstance(value, str):
        match = REF_RE.fullmatch(value)
        if match and match.group("prefix") in BY_PREFIX:
            yield path, value


class Checker:
    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.store = Store(ws)
        self.problems: list[dict[str, Any]] = []
        self.packets: dict[str, dict[str, Any]] = {}  # ref -> packet, for files that verify
        self.key_ids: set[str] = set()
        self.redacted: dict[str, dict[str, Any]] = {}  # ref -> its dcx_redacted_v0 stub
        self.redacted_rows: list[dict[str, Any]] = []
        self.redacted_events: set[str] = set()  # event ids whose line `dcx redact` replaced
        self.unchecked: list[str] = []  # gate events of reviews that no log on this host holds

    def problem(
        self, path: Path, message: str, *, ref: str | None = None, field: str | None = None
    ) -> None:
        row: dict[str, Any] = {"file": self.ws.rel(path), "problem": message}
        if ref:
            row["ref"] = ref
        if field:
            row["field"] = field
        self.problems.append(row)

    def files(self) -> int:
        checked = 0
        for kind, path in self.store.iter_files():
            checked += 1
            why = verify_file(self.ws, kind, path)
            if why:
                self.problem(path, why, ref=path.stem)
                continue
            packet = json.loads(read_bytes(path))
            if packet.get("goal_id") != self.ws.goal_id:
                self.problem(path, "belongs to another goal", ref=path.stem, field="goal_id")
                continue
            if is_stub(packet):  # redacted: reported, not a problem; its links still resolve
                self.redacted[path.stem] = packet
                self.redacted_rows.append(
                    {
                        "file": self.ws.rel(path),
                        "ref": path.stem,
                        "kind": kind,
                        "reason_code": packet["reason_code"],
                        "redacted_at": packet["redacted_at"],
                    }
                )
                continue
            self.packets[path.stem] = packet
            self.key_ids.add(packet["key_id"])
        return checked

    def target(self, ref: str) -> tuple[dict[str, Any] | None, str | None]:
        """The verified packet behind ``ref``, or why it cannot be used."""
        if ref in self.packets:
            return self.packets[ref], None
        if ref in self.redacted:
            return self.redacted[ref], None
        kind = BY_PREFIX[REF_RE.fullmatch(ref).group("prefix")].folder  # type: ignore[union-attr]
        if self.store.path_for(kind, ref).exists():
            return None, f"names {ref}, which does not verify"
        for other in KINDS:
            if self.store.path_for(other, ref).exists():
                return (
                    None,
                    f"names {ref}, which sits in packets/{other}/ instead of packets/{kind}/",
                )
        return None, f"names {ref}, which does not exist"

    def links(self) -> None:
        for ref, packet in self.packets.items():
            kind = BY_PREFIX[REF_RE.fullmatch(ref).group("prefix")].folder  # type: ignore[union-attr]
            path = self.store.path_for(kind, ref)
            for field, target_ref in packet_refs(packet):
                if target_ref == ref:
                    continue
                target, why = self.target(target_ref)
                if why:
                    self.problem(path, why, ref=ref, field=field)
                elif (
                    target is not None
                    and packet.get("decision_id")
                    and target.get("decision_id") not in (None, packet["decision_id"])
                ):
                    self.problem(
                        path, f"names {target_ref} of another decision", ref=ref, field=field
                    )

    def semantics(self) -> None:
        """What a re-hash cannot see: a packet rewritten with a recomputed ref that breaks
        the rules it was built by. Every ref an evidence record cites is listed in its
        source revisions; every assembly's checkpoint re-derives from what it embeds."""
        from dcx.evidence.checkpoints import derive_rows

        for ref, packet in self.packets.items():
            kind = BY_PREFIX[REF_RE.fullmatch(ref).group("prefix")].folder  # type: ignore[union-attr]
            path = self.store.path_for(kind, ref)
            if kind == "evidence":
                listed = {row["source_ref"] for row in packet["source_revisions"]}
                for key in ("changed_facts", "recalled_claims", "stale_or_rejected_claims"):
                    for record in packet[key]:
                        if record.get("source_ref") and record["source_ref"] not in listed:
                            self.problem(
                                path,
                                f"{key} cites a source its source_revisions do not list",
                                ref=ref,
                                field=key,
                            )
            elif kind == "assembly":
                rows = {row["source_id"]: row for row in packet["manifest"]["sources"]}
                try:
                    derived = derive_rows(
                        packet["scan_receipts"], rows, packet["evidence"], packet["rebase"]
                    )
                except KeyError:
                    derived = None
                stored = packet["checkpoint"]["rows"]
                if derived is None or sorted(derived, key=lambda r: r["source_id"]) != sorted(
                    stored, key=lambda r: r["source_id"]
                ):
                    self.problem(
                        path,
                        "the checkpoint does not follow from the receipts, evidence and rebase",
                        ref=ref,
                        field="checkpoint",
                    )

    def reviews(self) -> None:
        """Review receipts against their rules and the gate and validation events they bind (SPEC §10)."""
        from dcx.packets.review import rule_problems
        from dcx.state import gates

        logs = events.read_log(self.ws.events, self.ws.rel(self.ws.events))
        reviews = {ref: p for ref, p in self.packets.items() if ref.startswith("decision-review-")}
        # a host's own event logs (the profile's [commit] external_event_logs) hold gates only
        # a review can name: the profile is read when there is a review to check
        foreign = self._external_events() if reviews else []
        by_id: dict[str, dict[str, Any]] = {}
        for event in logs + foreign:
            if isinstance(event.get("event_id"), str):
                by_id.setdefault(event["event_id"], event)
        for ref, packet in reviews.items():
            path = self.store.path_for("review", ref)
            for why in rule_problems(packet):
                self.problem(path, why, ref=ref, field="disposition")
            gate_id = packet.get("source_event_id")
            if not gate_id:
                continue
            gate = by_id.get(gate_id)
            if gate is None:
                self.unchecked.append(gate_id)
                continue
            if not events.id_recomputes(gate):
                self.problem(
                    path,
                    f"its gate event {gate_id} does not recompute",
                    ref=ref,
                    field="source_event_id",
                )
            elif (
                gates.disposition_of(gate),
                gates.scoped_proposal(gate),
                gate.get("todo_id"),
                gate.get("recorded_at"),
            ) != (
                packet["disposition"],
                packet.get("proposal_packet_ref"),
                packet.get("gate_todo_id"),
                packet["recorded_at"],
            ):
                self.problem(
                    path,
                    f"does not match its gate event {gate_id} (disposition, scope, todo or time)",
                    ref=ref,
                    field="source_event_id",
                )
        for number, event in enumerate(logs, start=1):
            details: dict[str, Any] = (
                event["details"] if isinstance(event.get("details"), dict) else {}
            )
            if details.get("capability") != "decision_context":
                continue
            named = [
                r for r in event.get("artifact_refs") or [] if str(r).startswith("decision-review-")
            ]
            for review_ref in named:
                review = reviews.get(review_ref)
                if review is None:
                    continue  # a missing or broken packet is reported by the link checks
                cause = (event.get("causality") or {}).get("caused_by")
                if details.get("disposition") != review["disposition"] or cause != review.get(
                    "source_event_id"
                ):
                    self.problem(
                        self.ws.events,
                        f"line {number}: the validation event does not match review "
                        f"{review_ref} (disposition or caused_by)",
                        ref=review_ref,
                        field=f"line {number}",
                    )

    def _external_events(self) -> list[dict[str, Any]]:
        from dcx.core.errors import DcxError
        from dcx.state.profile import load_profile

        try:
            profile = load_profile(self.ws)
        except DcxError:
            return []
        out: list[dict[str, Any]] = []
        for listed in profile.external_event_logs if profile else ():
            path = self.ws.root / listed
            if path.is_file():
                out += events.read_log(path, "the external event log")
        return out

    def decision_index(self) -> int:
        if not self.ws.decisions.is_dir():
            return 0
        indexes = sorted(self.ws.decisions.glob("*.jsonl"))
        for path in indexes:
            try:
                lines, _ = read_lines(path)
            except WorkspaceSymlink:
                continue  # reported as public_symlink
            for number, line in enumerate(lines, start=1):
                where = f"line {number}"
                try:
                    entry = json.loads(line)
                    ref, kind = entry["ref"], entry["kind"]
                except (ValueError, KeyError, TypeError):
                    self.problem(path, f"{where}: not a {{kind, ref, observed_at}} record")
                    continue
                match = REF_RE.fullmatch(ref) if isinstance(ref, str) else None
                if not match or match.group("prefix") not in BY_PREFIX:
                    self.problem(path, f"{where}: not a packet ref", field=where)
                    continue
                if BY_PREFIX[match.group("prefix")].folder != kind:
                    self.problem(
                        path, f"{where}: {ref} is not a {kind} packet", ref=ref, field=where
                    )
                    continue
                target, why = self.target(ref)
                if why:
                    self.problem(path, f"{where}: {why}", ref=ref, field=where)
                elif target is not None and target.get("decision_id") != path.stem:
                    self.problem(
                        path, f"{where}: {ref} belongs to another decision", ref=ref, field=where
                    )
                elif target is not None and not is_stub(target):
                    stamped = target.get("observed_at", target.get("recorded_at"))
                    if isinstance(stamped, str) and not _indexed_at(entry, kind, stamped):
                        # readers order a decision by these times: a forged one reorders it
                        self.problem(
                            path,
                            f"{where}: observed_at is not the time {ref} was recorded",
                            ref=ref,
                            field=where,
                        )
        return len(indexes)

    def event_log(self) -> int:
        lines, _ = read_lines(self.ws.events)
        bodies: dict[str, bytes] = {}
        distinct: set[str] = set()
        stubbed = {stub.get("redacted_ref") for stub in _stubs(lines)}
        for number, line in enumerate(lines, start=1):
            if line in distinct:
                continue  # an identical duplicate line (a union merge brought it twice) counts once (SPEC §16)
            distinct.add(line)
            where = f"line {number}"
            try:
                event = json.loads(line)
            except ValueError:
                self.problem(self.ws.events, f"{where}: not JSON")
                continue
            if not isinstance(event, dict):
                self.problem(self.ws.events, f"{where}: not an event object")
                continue
            if is_stub(event):  # `dcx redact` left it (SPEC §3.4 v4): reported, not a problem
                self._event_stub(event, where)
                continue
            ident = event.get("event_id")
            if ident in stubbed:  # a union merge from a host that still holds the line
                self.problem(
                    self.ws.events,
                    f"{where}: event {ident} was redacted, and its line is back (a merge); "
                    f"run `dcx redact {ident}` again",
                    field=f"{where}.event_id",
                )
                continue
            if not events.id_recomputes(event):
                self.problem(
                    self.ws.events,
                    f"{where}: event id does not recompute (forged or edited)",
                    field=f"{where}.event_id",
                )
            if event.get("goal_id") != self.ws.goal_id:
                self.problem(
                    self.ws.events, f"{where}: belongs to another goal", field=f"{where}.goal_id"
                )
            if isinstance(ident, str):
                body = json.dumps(event, sort_keys=True, allow_nan=True).encode()
                if bodies.setdefault(ident, body) != body:
                    self.problem(
                        self.ws.events,
                        f"{where}: event id {ident} already has another body",
                        field=f"{where}.event_id",
                    )
            for field, ref in packet_refs(event.get("artifact_refs", [])):
                _, why = self.target(ref)
                if why:
                    self.problem(
                        self.ws.events,
                        f"{where}: {why}",
                        ref=ref,
                        field=f"{where}.artifact_refs{field}",
                    )
        return len(distinct)

    def _event_stub(self, stub: dict[str, Any], where: str) -> None:
        ref = stub.get("redacted_ref")
        why = check_stub(stub, "event", ref if isinstance(ref, str) else "")
        if why is None and stub.get("goal_id") != self.ws.goal_id:
            why = "belongs to another goal"
        if why:
            self.problem(self.ws.events, f"{where}: {why}", field=where)
            return
        self.redacted_events.add(stub["redacted_ref"])
        self.redacted_rows.append(
            {
                "file": self.ws.rel(self.ws.events),
                "ref": stub["redacted_ref"],
                "kind": "event",
                "reason_code": stub["reason_code"],
                "redacted_at": stub["redacted_at"],
            }
        )


def _stubs(lines: list[str]) -> Iterator[dict[str, Any]]:
    for line in lines:
        try:
            parsed = json.loads(line)
        except ValueError:
            continue
        if is_stub(parsed):
            yield parsed


PUBLIC_SYMLINK = "public_symlink: a link or special file; dcx never follows or reads it"


def verify(
    *, ws: Workspace, repair: bool = False, wait: float = 5.0, require_signatures: bool = False
) -> Result:
    from dcx.ops import signcheck
    from dcx.state.signatures import required

    if repair:
        preflight(ws.root)  # --repair writes: a link anywhere stops it before it starts (SPEC §3.5)
    checker = Checker(ws)
    links = foreign_entries(ws.dc, skip=PRIVATE_NAMES)
    for rel in links:
        checker.problems.append({"file": rel, "problem": PUBLIC_SYMLINK})

    def phase(step: Any, default: Any = None) -> Any:
        """One check; its input being a reported link skips it (a private link still stops verify)."""
        try:
            return step()
        except WorkspaceSymlink as exc:
            if exc.path not in links:
                raise
            return default

    checked = phase(checker.files, 0)
    phase(checker.links)
    phase(checker.semantics)
    phase(checker.reviews)
    index_count = phase(checker.decision_index, 0)
    event_count = phase(checker.event_log, 0)
    signatures = phase(  # None when a reported link is what it would read
        lambda: signcheck.check(checker, required=require_signatures or required(ws))
    )
    repaired: list[str] = []
    for log in (
        [ws.events, ws.statements, *sorted(ws.decisions.glob("*.jsonl"))]
        if ws.decisions.is_dir()
        else [ws.events, ws.statements]
    ):
        torn = phase(lambda log=log: read_lines(log)[1], False)
        if not torn:
            continue
        if repair:
            repaired.append(_repair(ws, log, wait))
        else:
            checker.problem(log, "last line is incomplete; run `dcx verify --repair`")
    from dcx.ops.cursorcheck import rewind, unbacked

    rewound: list[dict[str, Any]] = []
    stale_cursors = phase(lambda: unbacked(ws), [])
    if stale_cursors and repair:
        rewound = rewind(ws, stale_cursors, wait=wait)
        stale_cursors = unbacked(ws)
    foreign = sorted(k for k in checker.key_ids if k != _own_key_id(ws))
    data: dict[str, Any] = {
        "packets_checked": checked,
        "events_checked": event_count,
        "decision_indexes_checked": index_count,
        "problems": checker.problems,
        "redacted": checker.redacted_rows,
        "repaired": repaired,
        "foreign_key_ids": foreign,
        "unchecked_gate_events": sorted(set(checker.unchecked)),
        "unbacked_cursors": stale_cursors,
        "rewound_cursors": rewound,
        "signatures": signatures,
    }
    warnings = [
        f"gate event {gate} of a review is in no log on this host: its binding was not checked"
        for gate in data["unchecked_gate_events"]
    ]
    if signatures and signatures["unsigned"] and not signatures["required"]:
        warnings.append(
            f"unsigned: {signatures['unsigned']} packet(s) and event(s) carry no signed statement "
            "(written before signed statements, or by hand); --require-signatures makes each a problem"
        )
    warnings += [
        f"cursor_unbacked: the cursor of {row['source_id']} ({row['agent_id'] or 'shared file'}) was "
        "advanced by a commit receipt that is no longer in history; `dcx verify --repair` rewinds it"
        for row in stale_cursors
    ]
    if checker.problems:
        return Result("verify", data, status="error", exit_code=ExitCode.REFUSED, warnings=warnings)
    return Result("verify", data, warnings=warnings)


def _indexed_at(entry: dict[str, Any], kind: str, stamped: str) -> bool:
    """Whether an index line's time is its packet's: the packet's own time, or — for a scan
    receipt, which `prepare` indexes at its own start, just before the scan it runs — a
    time no later than the scan's (an earlier time can never make a decision look newer)."""
    at = entry.get("observed_at")
    if at == stamped:
        return True
    if kind != "scan" or not isinstance(at, str):
        return False
    from dcx.core.clock import seconds_between

    try:
        return seconds_between(at, stamped) >= 0
    except (DcxError, ValueError, TypeError):
        return False


def _own_key_id(ws: Workspace) -> str | None:
    from dcx.state.keys import Key, read_secret

    try:
        return Key(read_secret(ws)).key_id
    except OSError:
        return None


def _repair(ws: Workspace, log: Path, wait: float) -> str:
    """Move a torn last line to private/log/ — the one rewrite dcx ever does."""
    set_aside_torn_tail(log, ws.log_dir, wait=wait, display=ws.rel(log))
    return ws.rel(log)
