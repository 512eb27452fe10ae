"""User-gate events: a person's approve, reject or defer, in the LoopX shape (SPEC §10).

``dcx gate`` appends one to ``events.jsonl``; ``dcx review`` exact-reads one —
dcx's own or a LoopX host's, read the same way:

- ``event_kind: todo_complete``, ``status: done``,
  ``details.decision_outcome: approve|reject`` → approve / reject;
- ``event_kind: todo_update``, ``status: deferred``, no ``decision_outcome`` → defer;
- always ``details.task_class: user_gate`` and ``details.decision_scope:
  "direction:action:<proposal ref>"``, the gate's ``todo_id`` at the top level.

Anything else has no disposition. Ids follow ``dcx.state.events`` (dcx ids, or the
LoopX 16-hex rule), so a LoopX host's gate events verify unchanged.
"""

from __future__ import annotations

from typing import Any

from dcx.core.fields import (
    Const,
    DecisionId,
    Enum,
    Obj,
    Pattern,
    Shape,
    Text,
    Timestamp,
    Token,
    Tokens,
)
from dcx.state import events

SCOPE_PREFIX = "direction:action:"
TASK_CLASS = "user_gate"
# flag -> (event_kind, status, decision_outcome)
DISPOSITIONS = {
    "approve": ("todo_complete", "done", "approve"),
    "reject": ("todo_complete", "done", "reject"),
    "defer": ("todo_update", "deferred", None),
}

DETAILS = Shape(
    "user_gate_details",
    {
        "task_class": Const(value=TASK_CLASS),
        "decision_scope": Pattern(
            regex=r"direction:action:decision-proposal-[0-9a-f]{32}",
            limit=160,
            what="direction:action:<proposal ref>",
        ),
        "decision_outcome": Enum(values=("approve", "reject"), optional=True),
        "actor_ref": Token(doc="Who decided (`--by`)."),
    },
)

GATE_EVENT = Shape(
    "loopx_rollout_event_v0_user_gate",
    {
        "schema_version": Const(value=events.SCHEMA),
        "event_id": Token(),
        "goal_id": Token(),
        "agent_id": Token(optional=True),
        "event_kind": Enum(values=("todo_complete", "todo_update")),
        "status": Enum(values=("done", "deferred")),
        "todo_id": Token(limit=160),
        "recorded_at": Timestamp(),
        "summary": Text(),
        "causality": Obj(shape=Shape("causality", {"decision_id": DecisionId()})),
        "artifact_refs": Tokens(min_items=1, max_items=32, item=Token(limit=160)),
        "details": Obj(shape=DETAILS),
        "boundary": Obj(shape=events.BOUNDARY),
    },
    doc="A user-gate event as `dcx gate` writes it (LoopX hosts' gate events are read the same way).",
)


def scope_for(proposal_ref: str) -> str:
    return SCOPE_PREFIX + proposal_ref


def build_gate_event(
    *,
    goal_id: str,
    agent_id: str | None,
    decision_id: str,
    disposition: str,
    actor: str,
    summary: str,
    todo_id: str,
    evidence_ref: str,
    proposal_ref: str,
    recorded_at: str,
) -> dict[str, Any]:
    kind, status, outcome = DISPOSITIONS[disposition]
    details: dict[str, Any] = {
        "task_class": TASK_CLASS,
        "decision_scope": scope_for(proposal_ref),
        "actor_ref": actor,
    }
    if outcome is not None:
        details["decision_outcome"] = outcome
    draft = {
        "schema_version": events.SCHEMA,
        "event_id": "dcx-event-" + "0" * 32,
        "goal_id": goal_id,
        "agent_id": agent_id,
        "event_kind": kind,
        "status": status,
        "todo_id": todo_id,
        "recorded_at": recorded_at,
        "summary": summary,
        "causality": {"decision_id": decision_id},
        "artifact_refs": [evidence_ref, proposal_ref],
        "details": details,
        "boundary": dict(events.BOUNDARY_VALUES),
    }
    event = GATE_EVENT.check(draft)
    event["event_id"] = events.dcx_event_id(event)
    return event


def details_of(event: dict[str, Any]) -> dict[str, Any]:
    details = event.get("details")
    return details if isinstance(details, dict) else {}


def is_user_gate(event: dict[str, Any]) -> bool:
    return details_of(event).get("task_class") == TASK_CLASS


def disposition_of(event: dict[str, Any]) -> str | None:
    """approve|reject|defer as the event's kind, status and outcome say, else None (SPEC §10)."""
    kind, status = event.get("event_kind"), event.get("status")
    outcome = details_of(event).get("decision_outcome")
    if kind == "todo_complete" and status == "done" and outcome in ("approve", "reject"):
        return str(outcome)
    if kind == "todo_update" and status == "deferred" and outcome is None:
        return "defer"
    return None


def scoped_proposal(event: dict[str, Any]) -> str | None:
    """The proposal ref a gate's decision_scope names, or None."""
    scope = details_of(event).get("decision_scope")
    if isinstance(scope, str) and scope.startswith(SCOPE_PREFIX):
        return scope[len(SCOPE_PREFIX) :]
    return None


def actor_of(event: dict[str, Any]) -> str | None:
    """Who decided: ``details.actor_ref`` (dcx), else the event's ``agent_id`` (a LoopX host's owner)."""
    actor = details_of(event).get("actor_ref") or event.get("agent_id")
    return actor if isinstance(actor, str) and actor else None
