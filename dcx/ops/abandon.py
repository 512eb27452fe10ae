"""``dcx abandon``: append an event that gives a decision up, so nothing suggests its next step.

The event is a ``loopx_rollout_event_v0`` with ``event_kind = "abandon"``
(dcx's addition to the LoopX kinds), citing the decision's latest packets.
It is append-only like every event and idempotent for the same summary;
``commit`` refuses an abandoned decision (``decision_abandoned``).
"""

from __future__ import annotations

from dcx.core.clock import Clock
from dcx.core.errors import InvalidInput
from dcx.core.public import check_text
from dcx.core.result import Result
from dcx.core.workspace import Workspace
from dcx.ops._common import check_decision_id, require_agent
from dcx.state import decisions, events
from dcx.state.statements import signed

CITED = ("assembly", "evidence", "proposal", "outcome", "commit")


@signed("abandon")  # one signed statement of what it read and wrote (SPEC §18)
def abandon(
    *,
    ws: Workspace,
    decision_id: str,
    summary: str,
    agent_id: str | None,
    clock: Clock,
    wait: float,
) -> Result:
    check_decision_id(decision_id)
    check_text(summary, field="--summary")
    agent = require_agent(ws, agent_id)
    refs = [ref for kind in CITED if (ref := decisions.latest(ws, decision_id, kind)) is not None]
    if not refs:
        raise InvalidInput(
            f"--decision-id: no decision {decision_id} in this workspace",
            field="--decision-id",
            code="unknown_decision",
            hint="`dcx log` lists the decisions",
        )
    event = events.build_event(
        goal_id=ws.goal_id,
        agent_id=agent,
        decision_id=decision_id,
        kind=events.ABANDON,
        summary=summary,
        artifact_refs=refs,
        recorded_at=clock.now(),
    )
    stored, appended = events.append_event(ws, event, wait=wait)
    return Result("abandon", {"event": stored, "appended": appended})
