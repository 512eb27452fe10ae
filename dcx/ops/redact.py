"""``dcx redact TARGET --reason CODE``: replace what `dcx audit` flags by a ``dcx_redacted_v0`` stub.

The one sanctioned rewrite of public files, for what `dcx audit` flags. TARGET is

- a packet ref (or a unique prefix of one): its file becomes a stub keeping the
  original ref, kind, goal, decision and key id, and the blake3 digest and size
  of the removed bytes — never the bytes. Works on a packet that no longer
  verifies too (a hostile merge), keeping only the identity fields that are
  still well-formed and public-safe;
- an event id (``dcx-event-<32 hex>``, or a unique prefix): its line in
  ``events.jsonl`` becomes a stub line that keeps the id and the blake3 of the
  removed line (SPEC §3.4 v4); every other line stays byte for byte;
- a decision id with an index here: every packet it indexes and every event
  about it become stubs, and ``decisions/<id>.jsonl`` — whose very name may be
  what audit flagged — is removed. A stub keeps no decision id the detector
  refuses.

Redacting a stub again is a no-op. Git history still holds the old bytes:
docs/redaction.md says how to rewrite it and when to rotate a leaked credential.
"""

from __future__ import annotations

import json
from typing import Any

from dcx.core.canonical import REF_RE
from dcx.core.clock import Clock
from dcx.core.errors import InvalidInput, Refused
from dcx.core.fields import DECISION_ID_RE
from dcx.core.fsutil import atomic_write, file_lock, read_bytes, unlink
from dcx.core.public import TOKEN_RE, check_token, unsafe_class
from dcx.core.result import Result
from dcx.core.workspace import Workspace
from dcx.packets import KINDS
from dcx.state import decisions, events, statements
from dcx.state.redaction import SCHEMA, STUB, check_stub, digest, is_stub
from dcx.state.statements import signed
from dcx.state.store import PACKET_MODE, Store, unique_prefix

EVENT_PREFIX = "dcx-event-"


def _safe_decision(value: Any) -> str | None:
    """A decision id a stub may keep: well-formed, and one the detector does not refuse."""
    if isinstance(value, str) and DECISION_ID_RE.fullmatch(value) and unsafe_class(value) is None:
        return value
    return None


def _kept(packet: Any, ws: Workspace) -> dict[str, Any]:
    """The identity fields of the original that are still well-formed."""
    kept: dict[str, Any] = {"goal_id": ws.goal_id}
    if not isinstance(packet, dict):
        return kept
    goal, key = packet.get("goal_id"), packet.get("key_id")
    if (
        isinstance(goal, str)
        and len(goal) <= 128
        and TOKEN_RE.fullmatch(goal)
        and not unsafe_class(goal)
    ):
        kept["goal_id"] = goal
    if (
        isinstance(key, str)
        and len(key) <= 128
        and TOKEN_RE.fullmatch(key)
        and not unsafe_class(key)
    ):
        kept["key_id"] = key
    decision = _safe_decision(packet.get("decision_id"))
    if decision is None and isinstance(packet.get("causality"), dict):
        decision = _safe_decision(packet["causality"].get("decision_id"))
    if decision is not None:
        kept["decision_id"] = decision
    return kept


def _stub(
    target: str, kind: str, original: Any, data: bytes, ws: Workspace, reason: str, now: str
) -> dict[str, Any]:
    return STUB.check(
        {
            "schema_version": SCHEMA,
            "redacted_ref": target,
            "kind": kind,
            **_kept(original, ws),
            "removed_blake3": digest(data),
            "removed_size": len(data),
            "reason_code": reason,
            "redacted_at": now,
        }
    )


@signed("redact")  # one signed statement of what it read and wrote (SPEC §18)
def redact(
    *,
    ws: Workspace,
    ref: str,
    reason_code: str,
    clock: Clock,
    wait: float,
    agent_id: str | None = None,  # who signs the statement (SPEC §18); the stub names no agent
) -> Result:
    check_token(reason_code, field="--reason", limit=120)
    target = ref.strip()
    if target.startswith(EVENT_PREFIX):
        return _redact_event(ws, _event_id(ws, target), reason_code, clock.now(), wait)
    if not REF_RE.fullmatch(target) and DECISION_ID_RE.fullmatch(target):
        index = decisions.index_path(ws, target)
        if index.exists() or index.is_symlink():
            return _redact_decision(ws, target, reason_code, clock.now(), wait)
    store = Store(ws)
    full = store.resolve(target)
    data = _redact_packet(ws, store, full, reason_code, clock.now(), wait)
    return Result("redact", data)


def _redact_packet(
    ws: Workspace, store: Store, full: str, reason: str, now: str, wait: float
) -> dict[str, Any]:
    kind = store.kind_of(full)
    path = store.path_for(kind, full)
    if not path.exists():
        raise Refused(
            f"packet {full} is missing from packets/{kind}/",
            code="packet_missing",
            hint="run `dcx verify` to list missing and corrupt packets",
        )
    with file_lock(path, wait=wait, display=ws.rel(path)):
        data = read_bytes(path)
        try:
            packet = json.loads(data)
        except (ValueError, UnicodeDecodeError):
            packet = None
        if is_stub(packet) and check_stub(packet, kind, full) is None:
            return {"stub": packet, "file": ws.rel(path), "redacted": False}
        stub = _stub(full, kind, packet, data, ws, reason, now)
        from dcx.core.canonical import pretty_bytes

        atomic_write(path, pretty_bytes(stub), mode=PACKET_MODE)
    statements.wrote(full)
    return {
        "stub": stub,
        "file": ws.rel(path),
        "redacted": True,
        "schema_version_removed": KINDS[kind].schema_version,
    }


# -- events ------------------------------------------------------------------


def _event_id(ws: Workspace, text: str) -> str:
    ids = set()
    for line in events_lines(ws):
        ident = line[1].get("event_id") if line[1] is not None else None
        if isinstance(ident, str):
            ids.add(ident)
        if line[1] is not None and is_stub(line[1]):
            ids.add(str(line[1].get("redacted_ref")))
    if text in ids:
        return text
    return unique_prefix(text, ids, "event", hint=events.EVENT_HINT)


def events_lines(ws: Workspace) -> list[tuple[bytes, dict[str, Any] | None]]:
    """Each complete line of events.jsonl with its parse (None when it is not a JSON object)."""
    try:
        data = read_bytes(ws.events)
    except FileNotFoundError:
        return []
    out: list[tuple[bytes, dict[str, Any] | None]] = []
    for raw in data.split(b"\n")[:-1] if data.endswith(b"\n") else data.split(b"\n"):
        try:
            parsed = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            parsed = None
        out.append((raw, parsed if isinstance(parsed, dict) else None))
    return out


def _redact_event(ws: Workspace, event_id: str, reason: str, now: str, wait: float) -> Result:
    shown = ws.rel(ws.events)
    with file_lock(ws.events, wait=wait, display=shown):
        data = read_bytes(ws.events)
        if data and not data.endswith(b"\n"):
            raise Refused(
                f"{shown}: the last line is incomplete (a crash during an append)",
                code="torn_log",
                hint="run `dcx verify --repair` to move the fragment aside, then redact",
            )
        lines = data.split(b"\n")[:-1]
        stub: dict[str, Any] | None = None
        changed = False
        for number, raw in enumerate(lines):
            try:
                parsed = json.loads(raw)
            except (ValueError, UnicodeDecodeError):
                continue
            if not isinstance(parsed, dict):
                continue
            if is_stub(parsed) and parsed.get("redacted_ref") == event_id:
                stub = stub or parsed
                continue
            if parsed.get("event_id") != event_id:
                continue
            stub = _stub(event_id, "event", parsed, raw, ws, reason, now)
            lines[number] = json.dumps(stub, sort_keys=True, ensure_ascii=False).encode()
            changed = True
        if stub is None:
            raise InvalidInput(f"no event {event_id} in {shown}", code="ref_not_found", field="ref")
        if changed:
            atomic_write(ws.events, b"".join(line + b"\n" for line in lines), mode=0o644)
            statements.wrote(event_id)
    return Result("redact", {"stub": stub, "file": shown, "redacted": changed})


# -- a whole decision ------------------------------------------------------------


def _about(event: dict[str, Any], decision_id: str) -> bool:
    causality: dict[str, Any] = event.get("causality") or {}
    details: dict[str, Any] = event.get("details") or {}
    if not isinstance(causality, dict) or not isinstance(details, dict):
        return event.get("decision_id") == decision_id
    return decision_id in (
        causality.get("decision_id"),
        details.get("decision_id"),
        event.get("decision_id"),
    )


def _redact_decision(ws: Workspace, decision_id: str, reason: str, now: str, wait: float) -> Result:
    store = Store(ws)
    stubs = []
    for entry in decisions.entries(ws, decision_id):
        ref = entry["ref"]
        if REF_RE.fullmatch(ref) and store.exists(ref):
            stubs.append(_redact_packet(ws, store, ref, reason, now, wait))
    redacted_events = []
    for _raw, parsed in events_lines(ws):
        if parsed is not None and not is_stub(parsed) and _about(parsed, decision_id):
            done = _redact_event(ws, str(parsed.get("event_id")), reason, now, wait)
            redacted_events.append(done.data)
    index = decisions.index_path(ws, decision_id)
    with file_lock(index, wait=wait, display="the decision index"):
        unlink(index, missing_ok=True)
    unlink(index.with_name(index.name + ".lock"), missing_ok=True)
    return Result(
        "redact",
        {
            "decision": True,
            "redacted": True,
            "packets": [{"ref": s["stub"]["redacted_ref"], "file": s["file"]} for s in stubs],
            "events": [e["stub"]["redacted_ref"] for e in redacted_events],
            "index_removed": True,
            "decision_id_kept": _safe_decision(decision_id) is not None,
        },
    )
