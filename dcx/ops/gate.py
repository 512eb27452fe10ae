"""``dcx gate``: record a person's approve, reject or defer as a user-gate event (SPEC §10).

The event is appended to ``events.jsonl`` in the LoopX rollout-event shape
(``dcx.state.gates``). ``--by`` names who decided; it may not be the acting agent
unless the profile allows self-confirmation, compared after NFKC, case folding
and removing ``-``, ``_``, ``.`` and spaces (``dcx.names``). Recording the
same gate again returns the existing event.
"""

from __future__ import annotations

from dcx.core.clock import Clock
from dcx.core.errors import InvalidInput, Refused
from dcx.core.public import check_text, check_token
from dcx.core.result import Result
from dcx.core.workspace import Workspace
from dcx.names import same_actor
from dcx.ops._common import check_decision_id, require_agent
from dcx.ops.outcome import self_confirmation_allowed
from dcx.packets import proposal
from dcx.state import decisions, events, gates
from dcx.state.statements import signed
from dcx.state.store import Store


@signed("gate")  # one signed statement of what it read and wrote (SPEC §18)
def gate(
    *,
    ws: Workspace,
    decision_id: str,
    disposition: str,
    by: str,
    summary: str,
    todo_id: str | None,
    proposal_ref: str | None,
    agent_id: str | None,
    clock: Clock,
    wait: float,
) -> Result:
    check_decision_id(decision_id)
    if disposition not in gates.DISPOSITIONS:
        raise InvalidInput("give one of --approve, --reject or --defer", field="--approve")
    actor = check_token(by, field="--by")
    check_text(summary, field="--summary")
    todo = check_token(todo_id or f"gate-{decision_id}", field="--todo-id", limit=160)
    agent = require_agent(ws, agent_id)
    if same_actor(actor, agent) and not self_confirmation_allowed(ws):
        raise InvalidInput(
            f"--by: {actor} is the acting agent ({agent}); a person or another agent decides a gate",
            field="--by",
            code="self_confirmation_not_allowed",
            hint="name who decided, or set [commit] allow_self_confirmation = true in the profile",
        )
    store = Store(ws)
    known = decisions.refs_of(ws, decision_id, "proposal")
    if not known:
        raise Refused(
            f"decision {decision_id} has no proposal to gate",
            code="proposal_missing",
            hint=f"run `dcx propose --decision-id {decision_id}` first",
        )
    chosen = known[-1] if proposal_ref is None else store.resolve(proposal_ref)
    if chosen not in known:
        raise Refused(
            f"--proposal: {chosen} is not a proposal of decision {decision_id}",
            code="proposal_not_in_decision",
            field="--proposal",
        )
    prop = store.get(chosen, kind=proposal.SPEC.kind)
    warnings = []
    if chosen != known[-1]:
        warnings.append(
            f"{chosen} is not the decision's latest proposal ({known[-1]}): "
            "`dcx review` settles only the latest one"
        )
    event = gates.build_gate_event(
        goal_id=ws.goal_id,
        agent_id=agent,
        decision_id=decision_id,
        disposition=disposition,
        actor=actor,
        summary=summary,
        todo_id=todo,
        evidence_ref=prop["evidence_packet_ref"],
        proposal_ref=chosen,
        recorded_at=clock.now(),
    )
    stored, appended = events.append_event(ws, event, wait=wait)
    return Result(
        "gate",
        {"event": stored, "appended": appended, "disposition": disposition},
        warnings=warnings,
    )
