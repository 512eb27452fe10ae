"""``dcx propose``: a validated ``decision_proposal_v0`` bound to the evidence of the agent's own chain (SPEC §16)."""

from __future__ import annotations

from dcx.chains import Chains, read_chains
from dcx.core.clock import Clock
from dcx.core.errors import Refused
from dcx.core.result import Result
from dcx.core.workspace import Workspace
from dcx.ops._common import (
    check_decision_id,
    json_input,
    packet_context,
    require_agent,
    validated,
)
from dcx.ops.template import missing_hint
from dcx.packets import evidence, proposal
from dcx.state import decisions
from dcx.state.statements import signed
from dcx.state.store import Store


def latest_evidence(ws: Workspace, decision_id: str, chains: Chains | None = None) -> str:
    """The own chain's evidence (SPEC §16: this host's pending assembly, else the agent's own), else the latest."""
    ref = (
        chains.own_evidence if chains is not None else decisions.latest(ws, decision_id, "evidence")
    )
    if ref is None:
        raise Refused(
            f"decision {decision_id} has no evidence packet",
            code="evidence_missing",
            hint=f"run `dcx prepare --decision-id {decision_id}` first",
        )
    return ref


@signed("propose")  # one signed statement of what it read and wrote (SPEC §18)
def propose(
    *,
    ws: Workspace,
    decision_id: str,
    source: str | None,
    agent_id: str | None,
    clock: Clock,
    wait: float,
    document: object = None,
) -> Result:
    check_decision_id(decision_id)
    agent = require_agent(ws, agent_id)
    data, display = json_input(
        source, document, flag="--from", name="proposal", missing_hint=missing_hint("proposal")
    )
    clean = validated(proposal.INPUT, data, display)
    store = Store(ws)
    chains = read_chains(ws, store, decision_id, agent)
    latest = latest_evidence(ws, decision_id, chains)
    given = clean.pop("evidence_packet_ref", None)
    if given is not None and given != latest:
        raise Refused(
            f"{display}: evidence_packet_ref is not the latest evidence of your own chain ({latest})",
            code="evidence_not_latest",
            field="evidence_packet_ref",
            hint="drop the field to bind the latest evidence, or prepare again",
        )
    store.get(latest, kind=evidence.SPEC.kind)  # verifies the evidence before binding to it
    packet = store.put(
        proposal.SPEC,
        packet_context(ws, decision_id, agent),
        {**clean, "evidence_packet_ref": latest, "observed_at": clock.now(), "proposed_by": agent},
    )
    decisions.append(
        ws, decision_id, "proposal", packet["packet_ref"], packet["observed_at"], wait=wait
    )
    return Result("propose", {"proposal": packet}, warnings=[*chains.warnings, *_preview(chains)])


def _preview(chains: Chains) -> list[str]:
    """Said at once, not first at `commit` (``nothing_to_commit``): a proposal bound to a preview
    assembly's evidence can never be committed (SPEC §8.2)."""
    from dcx.cycle import PREVIEW_HINT

    own = [
        e.packet
        for e in chains.entries
        if e.kind == "assembly" and e.packet is not None and e.evidence == chains.own_evidence
    ]
    if own and all(packet.get("preview") for packet in own):
        return [f"preview_assembly: {PREVIEW_HINT}"]
    return []
