"""``dcx outcome``: an append-only ``decision_outcome_receipt_v0``, by default on the latest proposal of the
acting agent's own chain (SPEC §16)."""

from __future__ import annotations

from dcx.chains import read_chains
from dcx.core.clock import Clock
from dcx.core.errors import InvalidInput, Refused
from dcx.core.result import Result
from dcx.core.workspace import Workspace
from dcx.names import same_actor
from dcx.ops._common import (
    check_decision_id,
    json_input,
    packet_context,
    require_agent,
    validated,
)
from dcx.ops.template import missing_hint
from dcx.packets import outcome, proposal
from dcx.state import decisions
from dcx.state.profile import load_profile
from dcx.state.statements import signed
from dcx.state.store import Store


def self_confirmation_allowed(ws: Workspace) -> bool:
    try:
        profile = load_profile(ws)
    except InvalidInput:
        return False
    return bool(profile and profile.allow_self_confirmation)


def check_acceptance(
    accepted: dict, proposal_packet: dict, agent: str, allow_self: bool, display: str
) -> None:
    options = {proposal_packet["recommended_decision"]["option_id"]} | {
        a["alternative_id"] for a in proposal_packet["alternatives"]
    }
    if accepted["option_id"] not in options:
        raise InvalidInput(
            f"{display}: accepted_decision.option_id is neither the recommended option nor an alternative",
            field="accepted_decision.option_id",
            code="unknown_option",
        )
    if same_actor(accepted["accepted_by"], agent) and not allow_self:
        raise InvalidInput(
            f"{display}: accepted_decision.accepted_by is the acting agent; self-confirmation is off",
            field="accepted_decision.accepted_by",
            code="self_confirmation_not_allowed",
            hint="a person or another agent confirms, or set [commit] allow_self_confirmation = true",
        )


@signed("outcome")  # one signed statement of what it read and wrote (SPEC §18)
def record_outcome(
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
        source, document, flag="--from", name="outcome", missing_hint=missing_hint("outcome")
    )
    clean = validated(outcome.INPUT, data, display)
    verified_outcomes = [o for o in clean["observed_outcomes"] if o["status"] == "verified"]
    if clean["verification_status"] == "verified" and not verified_outcomes:
        raise InvalidInput(
            f"{display}: verification_status is verified but no observed outcome is verified",
            field="verification_status",
            code="verified_without_outcome",
        )
    store = Store(ws)
    chains = read_chains(ws, store, decision_id, agent)
    latest = (
        chains.own_latest("proposal")
        if chains.why != "latest"
        else decisions.latest(ws, decision_id, "proposal")
    )
    if latest is None:
        raise Refused(
            f"decision {decision_id} has no proposal",
            code="proposal_missing",
            hint=f"run `dcx propose --decision-id {decision_id}` first",
        )
    given = clean.pop("proposal_packet_ref", None)
    proposal_ref = given or latest
    if given is not None and given not in decisions.refs_of(ws, decision_id, "proposal"):
        raise Refused(
            f"{display}: proposal_packet_ref is not a proposal of decision {decision_id}",
            code="proposal_not_in_decision",
            field="proposal_packet_ref",
        )
    prop = store.get(proposal_ref, kind=proposal.SPEC.kind)
    check_acceptance(
        clean["accepted_decision"], prop, agent, self_confirmation_allowed(ws), display
    )
    packet = store.put(
        outcome.SPEC,
        packet_context(ws, decision_id, agent),
        {
            **clean,
            "proposal_packet_ref": proposal_ref,
            "evidence_packet_ref": prop["evidence_packet_ref"],
            "observed_at": clock.now(),
            "recorded_by": agent,
            "reward_memory_candidate_eligible": clean["verification_status"] == "verified"
            and bool(verified_outcomes),
        },
    )
    decisions.append(
        ws, decision_id, "outcome", packet["packet_ref"], packet["observed_at"], wait=wait
    )
    return Result("outcome", {"outcome": packet}, warnings=chains.warnings)
