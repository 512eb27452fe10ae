"""Lifecycle writeback events in the ``loopx_rollout_event_v0`` shape (SPEC §8.5).

The Core lifecycle writeback is an event, not a boolean. dcx appends events
to ``events.jsonl``; ``commit`` exact-reads the one event it is given.

Ids: dcx events are ``dcx-event-<32 hex of blake3(JCS of the event minus
event_id)>``; events whose id is 16 bare hex characters are checked by the
LoopX rule (SHA-256 of the JSON with sorted keys and default separators,
minus ``event_id``, first 16 hex) so a LoopX host's log works too.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from dcx.core.canonical import canonical_bytes, digest_hex
from dcx.core.errors import InvalidInput, Refused
from dcx.core.fields import (
    Bool,
    Const,
    DecisionId,
    Enum,
    Obj,
    Shape,
    Text,
    Timestamp,
    Token,
    Tokens,
)
from dcx.core.fsutil import DEFAULT_WAIT, locked_append, read_lines
from dcx.core.workspace import Workspace
from dcx.state import statements

SCHEMA = "loopx_rollout_event_v0"
KINDS = ("validation", "todo_add", "todo_update", "todo_complete", "refresh_state")
# dcx's own addition to the LoopX kinds: a person gave the decision up (`dcx abandon`).
# Never a commit event: commit accepts KINDS only.
ABANDON = "abandon"
STORED_KINDS = (*KINDS, ABANDON)
DCX_ID_RE = re.compile(r"^dcx-event-[0-9a-f]{32}$")
LOOPX_ID_RE = re.compile(r"^[0-9a-f]{16}$")

BOUNDARY = Shape(
    "event_boundary",
    {
        "authority_granted": Const(value=False),
        "cursor_advanced": Const(value=False),
        "external_writes_performed": Const(value=False),
        "memory_ingested": Const(value=False),
    },
)
BOUNDARY_VALUES = {
    "authority_granted": False,
    "cursor_advanced": False,
    "external_writes_performed": False,
    "memory_ingested": False,
}

VALIDATION_DETAILS = Shape(
    "validation_details",
    {
        "capability": Const(value="decision_context"),
        "disposition": Enum(values=("approve", "reject", "defer", "no_change")),
        "quiet_noop": Bool(),
    },
    doc="What a review's validation event settled (present only on events `dcx review` writes).",
)

EVENT = Shape(
    SCHEMA,
    {
        "schema_version": Const(value=SCHEMA),
        "event_id": Token(),
        "goal_id": Token(),
        "agent_id": Token(optional=True),
        "event_kind": Enum(values=STORED_KINDS),
        "status": Const(value="committed"),
        "recorded_at": Timestamp(),
        "summary": Text(),
        "causality": Obj(
            shape=Shape(
                "causality",
                {
                    "decision_id": DecisionId(),
                    "caused_by": Token(
                        limit=160, optional=True, doc="The user-gate event a review settled."
                    ),
                },
            )
        ),
        "artifact_refs": Tokens(min_items=1, max_items=32, item=Token(limit=160)),
        "details": Obj(shape=VALIDATION_DETAILS, optional=True),
        "boundary": Obj(shape=BOUNDARY),
    },
    doc="A lifecycle writeback event as dcx writes it (the LoopX rollout event shape).",
)


def dcx_event_id(event: dict[str, Any]) -> str:
    body = {k: v for k, v in event.items() if k != "event_id"}
    return f"dcx-event-{digest_hex(canonical_bytes(body))}"


def loopx_event_id(event: dict[str, Any]) -> str:
    import hashlib  # here, not at the top: OpenSSL's start-up is most of `dcx log`'s events cost

    body = {k: v for k, v in event.items() if k != "event_id"}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:16]


def id_recomputes(event: dict[str, Any]) -> bool:
    ident = event.get("event_id")
    if not isinstance(ident, str):
        return False
    try:
        if DCX_ID_RE.fullmatch(ident):
            return ident == dcx_event_id(event)
        if LOOPX_ID_RE.fullmatch(ident):
            return ident == loopx_event_id(event)
    except (InvalidInput, TypeError, ValueError):
        return False  # a body that cannot be hashed cannot match its id
    return False


def build_event(
    *,
    goal_id: str,
    agent_id: str | None,
    decision_id: str,
    kind: str,
    summary: str,
    artifact_refs: list[str],
    recorded_at: str,
    caused_by: str | None = None,
    details: dict[str, Any] | None = None,
) -> dict[str, Any]:
    causality: dict[str, Any] = {"decision_id": decision_id}
    if caused_by is not None:
        causality["caused_by"] = caused_by
    draft = {
        "schema_version": SCHEMA,
        "event_id": "dcx-event-" + "0" * 32,
        "goal_id": goal_id,
        "agent_id": agent_id,
        "event_kind": kind,
        "status": "committed",
        "recorded_at": recorded_at,
        "summary": summary,
        "causality": causality,
        "artifact_refs": artifact_refs,
        "details": details,
        "boundary": dict(BOUNDARY_VALUES),
    }
    event = EVENT.check(draft)
    event["event_id"] = dcx_event_id(event)
    return event


def _same_intent(a: dict[str, Any], b: dict[str, Any]) -> bool:
    keys = ("event_kind", "status", "summary", "artifact_refs", "goal_id", "todo_id", "details")
    return all(a.get(k) == b.get(k) for k in keys) and a.get("causality") == b.get("causality")


def append_event(
    ws: Workspace, event: dict[str, Any], *, wait: float = DEFAULT_WAIT
) -> tuple[dict[str, Any], bool]:
    """Append unless an event of the same decision, kind, summary and artifacts exists."""
    found: list[dict[str, Any]] = []

    def decide(lines: list[str]) -> bytes | None:
        for line in lines:
            try:
                existing = json.loads(line)
            except ValueError:
                continue
            if isinstance(existing, dict) and _same_intent(existing, event):
                found.append(existing)
                return None
            if (
                isinstance(existing, dict)
                and existing.get("event_id") == event["event_id"]
                and existing != event
            ):
                raise Refused(
                    f"events.jsonl already holds event {event['event_id']} with a different body",
                    code="event_id_conflict",
                )
        return json.dumps(event, sort_keys=True, ensure_ascii=False).encode()

    appended = locked_append(ws.events, decide, wait=wait, display=ws.rel(ws.events))
    if appended is None:
        statements.read(
            found[0]["event_id"]
        )  # someone wrote it before: read, not written (SPEC §18)
        return found[0], False
    statements.wrote(event["event_id"])
    return event, True


def read_log(path: Path, display: str) -> list[dict[str, Any]]:
    """Every parsable event object of a log (torn last line ignored; verify reports it). A line
    `dcx redact` replaced by a stub is no event any more: readers never see it, nor the original
    line a union merge from a host that still holds it brings back (verify reports that)."""
    from dcx.state.redaction import is_stub

    lines, _ = read_lines(path)
    out = []
    redacted = set()
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if is_stub(event):
            redacted.add(event.get("redacted_ref"))
        elif isinstance(event, dict):
            out.append(event)
    return [e for e in out if e.get("event_id") not in redacted] if redacted else out


EVENT_HINT = (
    "give more characters of the event id (events.jsonl lists them; `dcx writeback` prints its own)"
)


def event_ids(events: list[dict[str, Any]]) -> set[str]:
    return {e["event_id"] for e in events if isinstance(e.get("event_id"), str)}


def resolve_id(events: list[dict[str, Any]], text: str) -> str:
    """A full event id from a unique prefix of one (of the id or its hex part), like packet refs.

    An exact id, or text no id starts with, comes back as given (``find_event``
    then says ``event_missing``); several matches are ``ref_ambiguous``.
    """
    from dcx.state.store import unique_prefix

    ids = event_ids(events)
    text = text.strip()
    if text in ids or not any(
        i.startswith(text) or i.rsplit("-", 1)[-1].startswith(text) for i in ids
    ):
        return text
    return unique_prefix(text, ids, "event", hint=EVENT_HINT)


def find_event(events: list[dict[str, Any]], event_id: str, display: str) -> dict[str, Any]:
    """Exactly one event with that id (identical duplicates from a union merge count as one)."""
    matches = [e for e in events if e.get("event_id") == event_id]
    if not matches:
        raise Refused(f"{display}: no event with id {event_id}", code="event_missing")
    bodies = {json.dumps(e, sort_keys=True, allow_nan=True) for e in matches}
    if len(bodies) > 1:
        raise Refused(
            f"{display}: event {event_id} appears with different bodies", code="event_id_conflict"
        )
    statements.read(event_id)
    return matches[0]


def check_kind(kind: str) -> str:
    if kind not in KINDS:
        raise InvalidInput(f"--kind: expected one of {', '.join(KINDS)}", field="--kind")
    return kind


def abandoned(all_events: list[dict[str, Any]]) -> set[str]:
    """The decisions an ``abandon`` event gave up."""
    return {
        event["causality"]["decision_id"]
        for event in all_events
        if event.get("event_kind") == ABANDON
        and isinstance(event.get("causality"), dict)
        and isinstance(event["causality"].get("decision_id"), str)
    }
