"""``dcx writeback``: append one lifecycle event (``loopx_rollout_event_v0``) to events.jsonl.

Without ``--artifact`` it names the evidence, proposal and outcome of the acting
agent's own chain on this host (SPEC §16, dcx/chains.py)."""

from __future__ import annotations

from dcx.chains import read_chains
from dcx.core.clock import Clock
from dcx.core.errors import InvalidInput, Refused
from dcx.core.public import check_text
from dcx.core.result import Result
from dcx.core.workspace import Workspace
from dcx.ops._common import check_decision_id, require_agent
from dcx.state import decisions, events
from dcx.state.statements import signed
from dcx.state.store import Store

DEFAULT_KINDS = ("evidence", "proposal", "outcome")


@signed("writeback")  # one signed statement of what it read and wrote (SPEC §18)
def writeback(
    *,
    ws: Workspace,
    decision_id: str,
    kind: str,
    summary: str,
    artifacts: list[str],
    agent_id: str | None,
    clock: Clock,
    wait: float,
) -> Result:
    check_decision_id(decision_id)
    events.check_kind(kind)
    check_text(summary, field="--summary")
    agent = require_agent(ws, agent_id)
    store = Store(ws)
    warnings: list[str] = []
    if artifacts:
        refs = sorted(set(artifacts))
        for ref in refs:
            store.kind_of(ref)  # exit 2 for something that is not a packet ref
            if not store.exists(ref):
                raise Refused(
                    f"--artifact: packet {ref} does not exist",
                    code="artifact_missing",
                    field="--artifact",
                )
            owner = store.get(ref).get("decision_id")
            if owner is not None and owner != decision_id:  # commit would refuse the event for good
                raise InvalidInput(
                    f"--artifact: packet {ref} belongs to decision {owner}, not {decision_id}",
                    code="artifact_wrong_decision",
                    field="--artifact",
                    hint=f"name packets of decision {decision_id} (dcx log --decision-id {decision_id})",
                )
    else:
        refs = []
        chains = read_chains(ws, store, decision_id, agent)
        warnings = chains.warnings
        for kind_name in DEFAULT_KINDS:
            latest = (
                decisions.latest(ws, decision_id, kind_name)
                if chains.why == "latest"
                else (
                    chains.own_evidence if kind_name == "evidence" else chains.own_latest(kind_name)
                )
            )
            if latest is None:
                raise Refused(
                    f"decision {decision_id} has no {kind_name} packet to reference",
                    code=f"{kind_name}_missing",
                    hint="record the missing step first, or name artifacts with --artifact",
                )
            refs.append(latest)
    event = events.build_event(
        goal_id=ws.goal_id,
        agent_id=agent,
        decision_id=decision_id,
        kind=kind,
        summary=summary,
        artifact_refs=refs,
        recorded_at=clock.now(),
    )
    stored, appended = events.append_event(ws, event, wait=wait)
    return Result("writeback", {"event": stored, "appended": appended}, warnings=warnings)
