"""``dcx review``: settle a decision by a person's gate, or quietly by a semantic no-change (SPEC §10).

One command writes three things, all or nothing: the review receipt
(``decision_review_receipt_v0``), a ``validation`` event naming it, and the
cursor commit (§8.6) bound to that event. Every check of §10 and §8.6 runs
first; the receipt and the event are then written under the cursor lock,
just before the compare-and-swap, so a refusal (exit 1, reason code in the
error) leaves nothing behind, and a crash at any step is finished by running
the same review again: the receipt and event are pure functions of the gate
(or the assembly), so a second review of one gate is a replay, never a
second settlement.

Reject and defer consume the source material too: the cursor advances. An
approve leaves an observed outcome due (``dcx status`` / ``dcx log``).
"""

from __future__ import annotations

import json
from typing import Any

from dcx.chains import read_chains
from dcx.core.clock import Clock, normalise_ts
from dcx.core.errors import DcxError, InternalError, InvalidInput, Refused
from dcx.core.public import REASON_MAX, SUMMARY_MAX, check_text, check_token
from dcx.core.result import Result
from dcx.core.workspace import Workspace
from dcx.names import same_actor
from dcx.ops._common import check_decision_id, packet_context
from dcx.ops.commit import (
    apply_commit,
    event_log_path,
    find_assembly,
    plan_commit,
    preview_commit,
    receipts_of,
    replayed,
)
from dcx.packets import evidence, proposal, review
from dcx.state import decisions, events, gates
from dcx.state.activation import require_active
from dcx.state.statements import signed
from dcx.state.store import Store

NO_CHANGE_SUMMARY = "Nothing material changed since the last settlement"
EVENT_SUMMARIES = {
    "approve": "Review settled: approved by the gate",
    "reject": "Review settled: rejected by the gate",
    "defer": "Review settled: deferred by the gate",
    "no_change": "Review settled: no material change (quiet)",
}


def _refuse(code: str, message: str, hint: str | None = None) -> Refused:
    return Refused(f"review refused ({code}): {message}", code=code, hint=hint)


def _read_gate(
    ws: Workspace, log: list[dict[str, Any]], gate_id: str, display: str
) -> dict[str, Any]:
    """Exactly one event with that id (identical duplicates count once), in the LoopX shape."""
    matches = [e for e in log if e.get("event_id") == gate_id]
    if not matches:
        raise _refuse(
            "gate_event_missing",
            f"{display}: no event with id {gate_id}",
            hint="record it with `dcx gate`, or name the host log with --event-log",
        )
    if len({json.dumps(e, sort_keys=True, allow_nan=True) for e in matches}) > 1:
        raise _refuse(
            "gate_event_conflict",
            f"{display}: gate event {gate_id} appears with different bodies",
            hint="dcx verify",
        )
    event = matches[0]
    if event.get("schema_version") != events.SCHEMA or not events.id_recomputes(event):
        raise _refuse(
            "gate_event_id_mismatch",
            f"{display}: the gate event's id does not recompute from its body",
        )
    if event.get("goal_id") != ws.goal_id:
        raise _refuse("gate_goal_mismatch", "the gate event belongs to another goal")
    if not gates.is_user_gate(event):
        raise _refuse(
            "gate_not_user_gate",
            "the event is not a user gate (details.task_class is not user_gate)",
        )
    return event


def _gated_values(
    ws: Workspace,
    store: Store,
    decision_id: str,
    gate: dict[str, Any],
    latest_evidence: str,
    agent: str,
    allow_self: bool,
    by: str | None,
    own_latest: str | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The review fields a gate implies, after every §10 check; and the proposal it decided."""
    causality = gate.get("causality")
    if isinstance(causality, dict) and causality.get("decision_id") not in (None, decision_id):
        raise _refuse(
            "gate_decision_mismatch",
            f"the gate event is about decision {causality.get('decision_id')}",
        )
    scoped = gates.scoped_proposal(gate)
    proposals = decisions.refs_of(ws, decision_id, "proposal")
    if scoped is None or scoped not in proposals:
        raise _refuse(
            "gate_decision_mismatch",
            f"the gate's decision_scope does not name a proposal of decision {decision_id}",
            hint="a gate's scope is direction:action:<proposal ref>",
        )
    disposition = gates.disposition_of(gate)
    if disposition is None:
        raise _refuse(
            "gate_without_disposition",
            "the gate event says neither approve, reject nor defer (kind, status and decision_outcome)",
        )
    latest = own_latest or proposals[-1]  # the own chain's latest proposal (SPEC §16)
    if scoped != latest:
        raise _refuse(
            "proposal_not_latest",
            f"the gate decided {scoped}, not the decision's latest proposal {latest}",
            hint="gate the latest proposal",
        )
    prop = store.get(scoped, kind=proposal.SPEC.kind)
    if prop["evidence_packet_ref"] != latest_evidence:
        raise _refuse(
            "evidence_not_latest",
            f"the gated proposal is bound to {prop['evidence_packet_ref']}, not the "
            f"decision's latest evidence {latest_evidence}",
            hint="propose again on the latest evidence",
        )
    for ref in gate.get("artifact_refs") or []:
        if (isinstance(ref, str) and ref.startswith("decision-proposal-") and ref != scoped) or (
            isinstance(ref, str) and ref.startswith("decision-evidence-") and ref != latest_evidence
        ):
            raise _refuse(
                "gate_proposal_mismatch",
                f"the gate's artifact_refs name {ref}, not its scoped chain",
            )
    todo = gate.get("todo_id")
    if not isinstance(todo, str) or not todo:
        raise _refuse("gate_todo_missing", "the gate event has no todo_id")
    named = gates.details_of(gate).get("actor_ref")
    if by is not None and named and not same_actor(by, str(named)):
        raise _refuse("gate_actor_mismatch", f"--by {by} is not the gate's own actor_ref ({named})")
    actor = str(named) if named else (by or gates.actor_of(gate))
    if actor is None:
        raise _refuse(
            "gate_actor_missing",
            "the gate event names nobody who decided (details.actor_ref, agent_id)",
            hint="name who decided with --by",
        )
    if same_actor(actor, agent) and not allow_self:
        raise _refuse(
            "self_confirmation_not_allowed",
            f"the gate was decided by the acting agent ({agent})",
            hint="a person or another agent decides, or set [commit] allow_self_confirmation = true",
        )
    try:
        recorded_at = normalise_ts(str(gate.get("recorded_at")), field="recorded_at")
    except DcxError:
        raise _refuse(
            "gate_event_invalid", "the gate event's recorded_at is not an RFC 3339 time"
        ) from None
    values = {
        "disposition": disposition,
        "proposal_packet_ref": scoped,
        "gate_todo_id": check_token(todo, field="gate event todo_id", limit=160),
        "source_event_id": gate["event_id"],
        "actor_ref": check_token(actor, field="gate event actor"),
        "recorded_at": recorded_at,
        "summary": gate.get("summary"),
    }
    return values, prop


def _same_settlement(packet: dict[str, Any], values: dict[str, Any]) -> bool:
    if values["disposition"] == "no_change":
        return (
            packet["disposition"] == "no_change"
            and packet["evidence_packet_ref"] == values["evidence_packet_ref"]
        )
    return packet.get("source_event_id") == values["source_event_id"]


@signed("review")  # one signed statement of what it read and wrote (SPEC §18)
def review_decision(
    *,
    ws: Workspace,
    decision_id: str,
    gate_event: str | None,
    no_change: bool,
    reason_code: str | None,
    summary: str | None,
    event_log: str | None,
    agent_id: str | None,
    dry_run: bool,
    clock: Clock,
    wait: float,
    by: str | None = None,
) -> Result:
    check_decision_id(decision_id)
    if (gate_event is None) == (not no_change):
        raise InvalidInput(
            "give exactly one of --gate-event E or --no-change", field="--gate-event"
        )
    if no_change and (event_log is not None or by is not None):
        raise InvalidInput(
            "--event-log and --by name a gate; the quiet path has none", field="--no-change"
        )
    if by is not None:
        check_token(by, field="--by")
    if reason_code is not None:
        check_token(reason_code, field="--reason-code", limit=REASON_MAX)
    if summary is not None:
        check_text(summary, field="--summary", limit=SUMMARY_MAX)
    state = require_active(ws, agent_id)
    agent, profile = state.acting_agent(), state.settings()[0]
    store = Store(ws)
    chains = read_chains(ws, store, decision_id, agent)
    latest_ev = chains.own_evidence
    if latest_ev is None:
        raise _refuse(
            "evidence_missing",
            f"decision {decision_id} has no evidence",
            hint=f"run `dcx prepare --decision-id {decision_id}` first",
        )
    ev = store.get(latest_ev, kind=evidence.SPEC.kind)
    gate, prop = None, None
    if no_change:
        asm = find_assembly(store, ws, decision_id, latest_ev)
        if asm["rebase"]["status"] != "no_material_change":
            raise _refuse(
                "no_change_without_semantic_proof",
                f"the latest assembly's rebase says {asm['rebase']['status']}, not no_material_change",
                hint="settle it through a gate: dcx gate, then dcx review --gate-event",
            )
        values: dict[str, Any] = {
            "disposition": "no_change",
            "actor_ref": agent,
            "recorded_at": asm["observed_at"],
            "summary": NO_CHANGE_SUMMARY,
        }
    else:
        if gate_event is None:  # checked above: exactly one of the two
            raise InternalError("review: neither --gate-event nor --no-change")
        log_path, display = event_log_path(ws, profile, event_log)
        gate = _read_gate(ws, events.read_log(log_path, display), gate_event, display)
        values, prop = _gated_values(
            ws,
            store,
            decision_id,
            gate,
            latest_ev,
            agent,
            profile.allow_self_confirmation,
            by,
            chains.own_latest("proposal") if chains.why != "latest" else None,
        )
    values["evidence_packet_ref"] = latest_ev
    values["reason_code"] = reason_code or review.DEFAULT_REASONS[values["disposition"]]
    values["summary"] = summary or values["summary"]
    values.update(review.flags(values["disposition"]))
    try:
        check_text(values["summary"], field="summary", limit=SUMMARY_MAX)
    except InvalidInput:
        raise InvalidInput(
            "the gate event's summary is not usable in a review receipt (unsafe or over "
            f"{SUMMARY_MAX} characters)",
            field="--summary",
            code="unsafe_summary",
            hint="give the receipt its own --summary",
        ) from None

    warnings: list[str] = list(chains.warnings)
    rev = None
    for ref in decisions.refs_of(ws, decision_id, "review"):
        stored = store.get(ref, kind=review.SPEC.kind)
        if _same_settlement(stored, values):
            rev = stored
            if (reason_code and reason_code != stored["reason_code"]) or (
                summary and summary != stored["summary"]
            ):
                warnings.append(
                    f"this settlement was already recorded as {stored['packet_ref']}; "
                    "the new --reason-code/--summary were not recorded"
                )
            break
    if rev is None:
        rev = review.SPEC.build(packet_context(ws, decision_id, agent), values)
    asm = find_assembly(store, ws, decision_id, latest_ev)
    log = events.read_log(ws.events, ws.rel(ws.events))
    for receipt in receipts_of(store, decision_id, asm["checkpoint"]["checkpoint_ref"]):
        if receipt.get("review_packet_ref") == rev["packet_ref"]:
            # settled before (by this or another agent): replay that settlement as it was, and
            # finish what an interrupted one left (its commit index line, the pending companion)
            if not dry_run:
                replayed(ws, receipt, asm["observed_at"], wait)
            event = next((e for e in log if e.get("event_id") == receipt["event_id"]), None)
            return _result(rev, event, receipt, replayed=True, dry_run=dry_run, warnings=warnings)
    event = _validation_event(ws, log, rev, agent)
    chain = {"evidence": ev, "proposal": prop, "outcome": None, "review": rev}
    plan = plan_commit(
        ws,
        store,
        state,
        decision_id,
        event["event_id"],
        chain,
        gate_event=gate,
        wait=wait,
        tidy=not dry_run,
    )
    if isinstance(plan, Result):
        return _result(
            rev, event, plan.data["receipt"], replayed=True, dry_run=dry_run, warnings=warnings
        )
    if dry_run:
        return _result(
            rev, event, preview_commit(ws, plan), replayed=False, dry_run=True, warnings=warnings
        )

    def write_receipt() -> None:
        store.put_built(review.SPEC, rev)
        decisions.append(
            ws, decision_id, "review", rev["packet_ref"], rev["recorded_at"], wait=wait
        )

    def write_event() -> None:
        events.append_event(ws, event, wait=wait)

    # under the cursor lock, right before the swap; each write is followed by its fault step
    done = apply_commit(
        ws,
        store,
        plan,
        wait=wait,
        now=clock.now(),
        before_write=(("review.after_receipt", write_receipt), ("review.after_event", write_event)),
    )
    return _result(
        rev,
        event,
        done.data["receipt"],
        replayed=done.data["replayed"],
        dry_run=False,
        warnings=warnings,
    )


def _validation_event(
    ws: Workspace, log: list[dict[str, Any]], rev: dict[str, Any], agent: str
) -> dict[str, Any]:
    """The settlement's validation event: the one already in the log for this review, else a new one."""
    for existing in log:
        if gates.details_of(existing).get("capability") == "decision_context" and rev[
            "packet_ref"
        ] in (existing.get("artifact_refs") or []):
            return existing
    refs = [rev["evidence_packet_ref"], rev["packet_ref"]]
    if rev.get("proposal_packet_ref"):
        refs.append(rev["proposal_packet_ref"])
    return events.build_event(
        goal_id=ws.goal_id,
        agent_id=agent,
        decision_id=rev["decision_id"],
        kind="validation",
        summary=EVENT_SUMMARIES[rev["disposition"]],
        artifact_refs=refs,
        recorded_at=rev["recorded_at"],
        caused_by=rev.get("source_event_id"),
        details={
            "capability": "decision_context",
            "disposition": rev["disposition"],
            "quiet_noop": rev["quiet_noop"],
        },
    )


def _result(
    rev: dict[str, Any],
    event: dict[str, Any] | None,
    receipt: dict[str, Any],
    *,
    replayed: bool,
    dry_run: bool,
    warnings: list[str],
) -> Result:
    data = {
        "review": rev,
        "event": event,
        "commit": receipt,
        "replayed": replayed,
        "dry_run": dry_run,
        "outcome_due": rev["outcome_observation_required"],
    }
    return Result("review", data, warnings=warnings)
