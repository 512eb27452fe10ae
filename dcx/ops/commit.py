"""``dcx commit``: advance private cursors through a verified, crash-safe chain (SPEC §8.6, §10).

Commit never guesses "latest": the chain comes from the event. The event binds
either chain: the **review** chain (evidence, review receipt, and the proposal
when a gate decided it — what ``dcx review`` writes) or the **legacy** chain
(evidence, proposal, outcome); ``[commit] require_review = true`` refuses the
legacy one. Every check below refuses with exit 1 (reason code in the error)
and writes nothing. The cursor file is written last under its lock —
compare-and-swap, atomic replace, fsync, read back — like ``git update-ref``.
A commit killed after the replace is completed by the next one (cursors
already equal the proposals → the receipt is written with status
``replayed``).

``plan_commit`` runs every check and ``apply_commit`` does the locked write,
so ``dcx review`` can check a chain it has not written yet, then write its
receipt and event under the same lock as the cursors.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from dcx.core.clock import Clock
from dcx.core.errors import Refused
from dcx.core.fsutil import fault_point, file_lock
from dcx.core.result import Result
from dcx.core.workspace import Workspace
from dcx.evidence.checkpoints import READY, derive_rows
from dcx.names import same_actor
from dcx.ops._common import check_decision_id, packet_context
from dcx.ops.cursorcheck import refuse_unbacked
from dcx.ops.ownchain import check_own_chain, check_replay
from dcx.packets import commit, evidence, outcome, proposal, review
from dcx.state import decisions, events, gates, pending
from dcx.state.activation import require_active
from dcx.state.cursors import agent_cursors, cursor_path, read_cursors, write_cursors
from dcx.state.keys import load_key
from dcx.state.redaction import Redacted, is_stub
from dcx.state.refmap import RefMinter
from dcx.state.signatures import require_chain
from dcx.state.statements import signed, stated, wrote
from dcx.state.store import Store

ARTIFACT_KINDS = {
    "decision-evidence": "evidence",
    "decision-proposal": "proposal",
    "decision-outcome": "outcome",
    "decision-review": "review",
}


def _refuse(code: str, message: str, hint: str | None = None) -> Refused:
    return Refused(f"commit refused ({code}): {message}", code=code, hint=hint)


def _redacted(stub: dict[str, Any]) -> Redacted:
    return Redacted(
        stub,
        code="chain_redacted",
        hint="a redacted packet cannot bind a commit: prepare the decision again",
    )


def event_log_path(ws: Workspace, profile, event_log: str | None) -> tuple[Path, str]:
    if event_log is None:
        return ws.events, ws.rel(ws.events)
    wanted = os.path.realpath(event_log)
    allowed = {os.path.realpath(ws.root / p) for p in profile.external_event_logs}
    if wanted not in allowed:
        raise _refuse(
            "event_log_not_allowed", "that event log is not listed in [commit] external_event_logs"
        )
    return Path(wanted), "the external event log"


def gate_logs(ws: Workspace, profile) -> list[dict[str, Any]]:
    """Every event of events.jsonl and of the host logs listed in ``[commit] external_event_logs``."""
    out = events.read_log(ws.events, ws.rel(ws.events))
    for listed in profile.external_event_logs if profile is not None else ():
        path = ws.root / listed
        if path.is_file():
            out += events.read_log(path, "the external event log")
    return out


def chain_of(refs: list[str], indexed: set[str], decision_id: str) -> dict[str, str | None]:
    """Which chain ``refs`` bind: kind -> ref (None where the chain has no such link)."""
    found: dict[str, list[str]] = {kind: [] for kind in ARTIFACT_KINDS.values()}
    for ref in refs:
        prefix = ref.rsplit("-", 1)[0] if isinstance(ref, str) else ""
        if prefix in ARTIFACT_KINDS and ref in indexed:
            found[ARTIFACT_KINDS[prefix]].append(ref)
    if found["review"]:
        wanted = {"evidence": (1,), "review": (1,), "proposal": (0, 1), "outcome": (0,)}
    else:
        wanted = {"evidence": (1,), "proposal": (1,), "outcome": (1,)}
    for kind, counts in wanted.items():
        if len(found[kind]) not in counts:
            chain = "review" if found["review"] else "legacy"
            raise _refuse(
                "event_artifacts_invalid",
                f"the event must reference {' or '.join(map(str, counts))} {kind} of decision {decision_id} "
                f"for the {chain} chain (found {len(found[kind])})",
            )
    return {kind: (found[kind][0] if found[kind] else None) for kind in ARTIFACT_KINDS.values()}


def _check_event(
    ws: Workspace, event: dict[str, Any], decision_id: str, display: str
) -> dict[str, str | None]:
    """Step 1: the event recomputes and binds one chain of D."""
    if not events.id_recomputes(event):
        raise _refuse(
            "event_id_mismatch", f"{display}: the event id does not recompute from its body"
        )
    if event.get("goal_id") != ws.goal_id:
        raise _refuse("event_goal_mismatch", "the event belongs to another goal")
    if event.get("event_kind") not in events.KINDS:
        raise _refuse(
            "event_kind_not_allowed", f"event kind must be one of {', '.join(events.KINDS)}"
        )
    if event.get("status") != "committed":
        raise _refuse("event_not_committed", "the event's status is not committed")
    causality = event.get("causality")
    if not isinstance(causality, dict) or causality.get("decision_id") != decision_id:
        raise _refuse("event_decision_mismatch", f"the event is not about decision {decision_id}")
    refs = event.get("artifact_refs")
    if not isinstance(refs, list):
        raise _refuse("event_artifacts_invalid", "the event has no artifact_refs list")
    indexed = {entry["ref"] for entry in decisions.entries(ws, decision_id)}
    return chain_of(refs, indexed, decision_id)


def find_assembly(
    store: Store, ws: Workspace, decision_id: str, evidence_ref: str
) -> dict[str, Any]:
    candidates, stubs = [], []
    for ref in decisions.refs_of(ws, decision_id, "assembly"):
        packet = store.get_or_stub(ref, kind="assembly")
        if is_stub(packet):
            stubs.append(packet)
        elif packet["evidence"]["packet_ref"] == evidence_ref:
            candidates.append(packet)
    if not candidates and stubs:  # the assembly this chain needs may be the redacted one
        raise _redacted(stubs[0])
    if len(candidates) > 1:
        # identical evidence prepared on several hosts: the one whose pending companion is here (SPEC §16)
        here = [c for c in candidates if pending.path_for(ws, c["assembly_ref"]).exists()]
        if len(here) == 1:
            return here[0]
        committed = {r.get("assembly_ref") for r in _receipts_for(store, candidates)}
        if not here and len(committed & {c["assembly_ref"] for c in candidates}) == 1:
            return next(
                c for c in candidates if c["assembly_ref"] in committed
            )  # a replay of the one committed
    if len(candidates) != 1:
        raise _refuse(
            "chain_ambiguous" if candidates else "chain_missing",
            f"{len(candidates)} assemblies of decision {decision_id} hold that evidence",
        )
    return candidates[0]


def _receipts_for(store: Store, assemblies: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for asm in assemblies:
        out.extend(receipts_of(store, asm))
    return out


def receipts_of(store: Store, asm: dict[str, Any]) -> list[dict[str, Any]]:
    """Stored receipts of one assembly's checkpoint — looked up in the store itself, not the index, so
    a commit killed between writing its receipt and indexing it is found. Matched by the assembly too:
    two hosts' identical checkpoints are two chains (SPEC §16 v4)."""
    key = (asm["decision_id"], asm["checkpoint"]["checkpoint_ref"], asm["assembly_ref"])
    return [
        stored.packet
        for stored in store.iter_packets("commit")
        if (
            stored.packet["decision_id"],
            stored.packet["checkpoint_ref"],
            stored.packet.get("assembly_ref"),
        )
        == key
    ]


def existing_receipt(store: Store, asm: dict[str, Any], event_id: str):
    for receipt in receipts_of(store, asm):
        if receipt["event_id"] == event_id:
            return receipt
    return None


def settled_by(store: Store, asm: dict[str, Any], event_id: str):
    """(this event's receipt of the assembly, another event's receipt of it) — from one listing."""
    receipts = receipts_of(store, asm)
    mine = next((r for r in receipts if r["event_id"] == event_id), None)
    other = next((r for r in receipts if r["event_id"] != event_id), None)
    return mine, other


def _already_settled(other: dict[str, Any], *, by_review: bool) -> Refused:
    """Another event's receipt spent this assembly: it is committed, not lost."""
    if by_review:
        return _refuse(
            "already_settled",
            f"this assembly was already committed by {other['receipt_ref']}",
            hint="prepare again for a new decision point",
        )
    decision_id = other["decision_id"]
    return _refuse(
        "already_committed",
        f"decision {decision_id} is already committed: receipt {other['receipt_ref']} "
        f"(event {other['event_id']}) advanced this assembly's cursors",
        hint=f"an assembly commits once; to advance again, `dcx prepare --decision-id {decision_id}` "
        "anew and run the cycle on the new assembly (or commit the first event again to replay it)",
    )


def replayed(ws: Workspace, receipt: dict[str, Any], observed_at: str, wait: float) -> Result:
    """Print the existing receipt; finish what an interrupted commit left (index line, companion,
    and its signed statement when the commit was killed before or while it appended it)."""
    if not stated(ws, receipt["receipt_ref"]):
        wrote(receipt["receipt_ref"])
    decisions.append(
        ws, receipt["decision_id"], "commit", receipt["receipt_ref"], observed_at, wait=wait
    )
    pending.remove(ws, receipt["assembly_ref"])
    return Result("commit", {"receipt": receipt, "replayed": True})


def _check_pending(
    ws: Workspace, minter: RefMinter, asm: dict[str, Any], pend: dict[str, Any]
) -> list[dict]:
    """Step 4: the companion matches the assembly and every disposition re-derives."""
    checkpoint = asm["checkpoint"]
    if (
        pend["assembly_ref"],
        pend["evidence_packet_ref"],
        pend["checkpoint_ref"],
        pend["decision_id"],
    ) != (
        asm["assembly_ref"],
        asm["evidence"]["packet_ref"],
        checkpoint["checkpoint_ref"],
        asm["decision_id"],
    ):
        raise _refuse("pending_mismatch", "the pending companion belongs to another assembly")
    sources = {row["source_id"]: row for row in asm["manifest"]["sources"]}
    try:
        derived = derive_rows(asm["scan_receipts"], sources, asm["evidence"], asm["rebase"])
    except KeyError:
        raise _refuse(
            "checkpoint_not_derivable", "a scanned source is missing from the embedded manifest"
        ) from None
    # stored record lists are in canonical-JSON order (SPEC §3.1), not source order: compare as sets of rows
    by_source = lambda rows: sorted(rows, key=lambda r: r["source_id"])  # noqa: E731
    if by_source(derived) != by_source(checkpoint["rows"]):
        raise _refuse(
            "checkpoint_not_derivable",
            "the checkpoint does not follow from the receipts and evidence",
        )
    ready = [row for row in checkpoint["rows"] if row["disposition"] == READY]
    ready_ids = {row["source_id"] for row in ready}
    if set(pend["proposed_cursors"]) != ready_ids or set(pend["expected_cursors"]) != ready_ids:
        raise _refuse("pending_mismatch", "the pending cursors are not exactly the ready sources")
    for row in ready:
        sid = row["source_id"]
        if minter.cursor_ref(sid, pend["expected_cursors"][sid]) != row["cursor_before_ref"]:
            raise _refuse(
                "pending_mismatch", f"the expected cursor of {sid} does not match the checkpoint"
            )
        if minter.cursor_ref(sid, pend["proposed_cursors"][sid]) != row.get("cursor_after_ref"):
            raise _refuse(
                "pending_mismatch", f"the proposed cursor of {sid} does not match the checkpoint"
            )
    if not ready:
        decision = asm["decision_id"]
        if asm.get("preview"):
            hint = (
                f"this assembly is a preview, which never advances a cursor: run `dcx prepare --decision-id "
                f"{decision} --auto-rebase` (or --rebase FILE, or --baseline), then propose, outcome, "
                "writeback and commit again"
            )
        else:
            hint = (
                f"every source keeps its cursor (the reason is on each checkpoint row: "
                f"`dcx show {asm['assembly_ref']}`); prepare again when it is resolved"
            )
        raise _refuse("nothing_to_commit", "no source of this assembly is ready to advance", hint)
    return ready


def check_gate_binding(rev: dict[str, Any], gate_event: dict[str, Any] | None) -> None:
    """A gated review still matches the gate event it cites (what verify and commit re-check)."""
    if gate_event is None:
        raise _refuse(
            "gate_event_missing",
            f"the review's gate event {rev['source_event_id']} is not in the log",
        )
    if (
        gates.disposition_of(gate_event) != rev["disposition"]
        or gates.scoped_proposal(gate_event) != rev["proposal_packet_ref"]
        or gate_event.get("todo_id") != rev["gate_todo_id"]
        or gate_event.get("recorded_at") != rev["recorded_at"]
    ):
        raise _refuse(
            "gate_mismatch",
            "the review does not match its gate event (disposition, scope, todo or time)",
        )


class Plan(NamedTuple):
    """A chain that passed every check of §8.6 steps 1-5: what apply_commit needs."""

    asm: dict[str, Any]
    pend: dict[str, Any]
    ready: list[dict[str, Any]]
    links: dict[str, str]  # commit receipt fields: evidence/proposal/outcome/review refs
    event_id: str
    agent_id: str | None = None  # the acting agent: its cursors advance, its id is on the receipt
    agents: tuple[str, ...] = ()  # the profile's enabled agents (the one-time cursor migration)


def plan_commit(
    ws: Workspace,
    store: Store,
    state,
    decision_id: str,
    event_id: str,
    chain: dict[str, dict[str, Any] | None],
    *,
    gate_event: dict[str, Any] | None = None,
    wait: float,
    tidy: bool = True,
) -> Plan | Result:
    """Steps 2 to 5 on verified packets; a Result when the commit already happened (replay).
    ``tidy=False`` (a dry run) finds a replay without finishing what an interrupted commit left."""
    profile, registry = state.settings()
    ev, prop, out, rev = (
        chain["evidence"],
        chain.get("proposal"),
        chain.get("outcome"),
        chain.get("review"),
    )
    if ev is None:
        raise _refuse("chain_missing", "the event names no evidence packet")
    asm = find_assembly(store, ws, decision_id, ev["packet_ref"])
    check_own_chain(asm, state.agent_id)
    agents = tuple(profile.enabled_agents)
    try:
        store.get(asm["checkpoint"]["checkpoint_ref"], kind="checkpoint")
    except Redacted as exc:
        raise _redacted(exc.stub) from None
    if ev != asm["evidence"]:
        raise _refuse("chain_mismatch", "the stored evidence differs from the assembly's")
    if prop is not None and prop["evidence_packet_ref"] != ev["packet_ref"]:
        raise _refuse("chain_mismatch", "the proposal is not bound to that evidence")
    if rev is None:
        links = _outcome_links(profile, prop, out)
    else:
        links = _review_links(profile, state.agent_id, asm, ev, prop, rev, gate_event)

    # SPEC §18: with require_signatures, only a chain its enabled agents signed
    require_chain(ws, chain, profile.enabled_agents)

    # 3. replay
    # one listing decides both (a racing twin may write its receipt between two listings)
    found, other = settled_by(store, asm, event_id)
    if found is not None:
        return _replay(ws, store, found, state.agent_id, agents, asm, wait=wait, tidy=tidy)
    if other is not None:
        raise _already_settled(other, by_review=rev is not None)

    # nothing absorbs on top of a cursor that no receipt backs (SPEC §16 v4)
    refuse_unbacked(ws, state.agent_id, "commit", (s.source_id for s in registry.sources))
    # 4. the private companion
    minter = RefMinter(ws, load_key(ws), record=False)
    try:
        pend = pending.read(ws, asm["assembly_ref"])
    except Refused:
        # a racing commit of this chain may have finished since step 3: it writes its receipt before
        # it removes the companion, so look again before refusing
        found = existing_receipt(store, asm, event_id)
        if found is not None:
            return _replay(ws, store, found, state.agent_id, agents, asm, wait=wait, tidy=tidy)
        raise
    ready = _check_pending(ws, minter, asm, pend)

    # 5. nothing private changed since prepare
    if (profile.digest, registry.digest) != (pend["profile_digest"], pend["registry_digest"]):
        raise _refuse(
            "profile_changed",
            "profile.toml or sources.toml changed since prepare",
            hint="prepare again with the current profile",
        )
    return Plan(
        asm,
        pend,
        ready,
        {"evidence_packet_ref": ev["packet_ref"], **links},
        event_id,
        state.agent_id,
        agents,
    )


def _outcome_links(
    profile, prop: dict[str, Any] | None, out: dict[str, Any] | None
) -> dict[str, str]:
    """Step 2 for a chain settled by an outcome: bound to its proposal, confirmed by another."""
    if prop is None or out is None:
        raise _refuse("chain_missing", "the event names no proposal and outcome, nor a review")
    if profile.require_review:
        raise _refuse(
            "review_required",
            "the profile sets [commit] require_review = true: this decision is "
            "settled by review, not by an outcome",
            hint="dcx gate, then dcx review",
        )
    if out["proposal_packet_ref"] != prop["packet_ref"]:
        raise _refuse("chain_mismatch", "the outcome is not bound to that proposal")
    if (
        same_actor(out["accepted_decision"]["accepted_by"], out["recorded_by"])
        and not profile.allow_self_confirmation
    ):
        raise _refuse(
            "self_confirmation_not_allowed",
            "the outcome was confirmed by the agent that recorded it",
        )
    return {"proposal_packet_ref": prop["packet_ref"], "outcome_packet_ref": out["packet_ref"]}


def _review_links(
    profile,
    agent_id: str | None,
    asm: dict[str, Any],
    ev: dict[str, Any],
    prop: dict[str, Any] | None,
    rev: dict[str, Any],
    gate_event: dict[str, Any] | None,
) -> dict[str, str]:
    """Step 2 for a chain settled by a review: bound to the evidence, and to its proposal and gate
    unless it is a no_change review, which the rebase receipt must back."""
    if rev["evidence_packet_ref"] != ev["packet_ref"]:
        raise _refuse("chain_mismatch", "the review is not bound to that evidence")
    links: dict[str, str] = {}
    if rev["disposition"] == "no_change":
        if prop is not None:
            raise _refuse("chain_mismatch", "a no_change review settles no proposal")
        if asm["rebase"]["status"] != "no_material_change":
            raise _refuse(
                "no_change_without_semantic_proof",
                "the assembly's rebase receipt does not say no_material_change",
            )
    else:
        if prop is None or rev.get("proposal_packet_ref") != prop["packet_ref"]:
            raise _refuse("chain_mismatch", "the review is not bound to the event's proposal")
        check_gate_binding(rev, gate_event)
        if same_actor(rev["actor_ref"], agent_id) and not profile.allow_self_confirmation:
            raise _refuse(
                "self_confirmation_not_allowed", "the gate was decided by the acting agent"
            )
        links["proposal_packet_ref"] = prop["packet_ref"]
    links["review_packet_ref"] = rev["packet_ref"]
    return links


def _replay(
    ws: Workspace,
    store: Store,
    found: dict[str, Any],
    agent_id: str | None,
    agents: tuple[str, ...],
    asm: dict[str, Any],
    *,
    wait: float,
    tidy: bool,
) -> Result:
    """Step 3: the chain is settled by ``found`` already, this agent's own receipt of this event."""
    check_replay(ws, store, found, agent_id, agents)
    if not tidy:
        return Result("commit", {"receipt": found, "replayed": True})
    return replayed(ws, found, asm["observed_at"], wait)


def _compare(plan: Plan, current: dict[str, str]) -> dict[str, str]:
    results = {}
    for row in plan.ready:
        sid = row["source_id"]
        have = current.get(sid)
        if have == plan.pend["proposed_cursors"][sid]:
            results[sid] = "replayed"
        elif have == plan.pend["expected_cursors"][sid]:
            results[sid] = "advanced"
        else:
            raise _refuse(
                "cursor_moved",
                f"the committed cursor of {sid} moved since prepare",
                hint="prepare again: another decision advanced this source",
            )
    return results


def _cursors(
    ws: Workspace, plan: Plan, *, migrate: bool = True, wait: float = 5.0
) -> dict[str, str]:
    """The acting agent's committed cursors (SPEC §16); a dry run reads the shared file it would migrate."""
    if plan.agent_id is None:
        return read_cursors(ws)
    if not migrate and not cursor_path(ws, plan.agent_id).exists() and ws.cursors.exists():
        return read_cursors(ws)
    return agent_cursors(ws, plan.agent_id, plan.agents, wait=wait)


def receipt_values(plan: Plan, results: dict[str, str]) -> dict[str, Any]:
    return {
        "assembly_ref": plan.asm["assembly_ref"],
        "checkpoint_ref": plan.asm["checkpoint"]["checkpoint_ref"],
        **plan.links,
        "event_id": plan.event_id,
        "status": "committed" if "advanced" in results.values() else "replayed",
        "sources": [
            {
                "source_id": row["source_id"],
                "cursor_before_ref": row["cursor_before_ref"],
                "cursor_after_ref": row["cursor_after_ref"],
                "result": results[row["source_id"]],
            }
            for row in plan.ready
        ],
    }


def preview_commit(ws: Workspace, plan: Plan) -> dict[str, Any]:
    """The receipt this plan would write now (``--dry-run``): cursors compared without the lock."""
    return commit.SPEC.build(
        packet_context(ws, plan.asm["decision_id"], plan.agent_id),
        receipt_values(plan, _compare(plan, _cursors(ws, plan, migrate=False))),
    )


def apply_commit(
    ws: Workspace,
    store: Store,
    plan: Plan,
    *,
    wait: float,
    now: str,
    before_write: Sequence[tuple[str, Callable[[], None]]] = (),
) -> Result:
    """Steps 6 to 8 under the cursor lock: re-check, compare-and-swap, write, read back, receipt.
    ``before_write``: (fault step, write) pairs run in order under the lock once the swap is known
    to succeed — review's receipt and event; each is followed by its fault step."""
    decision_id = plan.asm["decision_id"]
    path = cursor_path(ws, plan.agent_id)
    with file_lock(path, wait=wait, display=ws.rel(path)):
        found, other = settled_by(store, plan.asm, plan.event_id)
        if found is not None:
            return replayed(ws, found, plan.asm["observed_at"], wait)
        if other is not None:
            raise _already_settled(other, by_review="review_packet_ref" in plan.links)
        current = _cursors(ws, plan, wait=wait)
        results = _compare(plan, current)
        for step, write in before_write:
            write()
            fault_point(step)
        if any(result == "advanced" for result in results.values()):
            updated = {**current, **{sid: plan.pend["proposed_cursors"][sid] for sid in results}}
            fault_point("commit.before_cursor_write")
            write_cursors(ws, updated, plan.agent_id)
            fault_point("commit.after_cursor_write")
            if read_cursors(ws, plan.agent_id) != updated:
                raise _refuse("readback_failed", "the cursor file did not read back as written")
        receipt = store.put(
            commit.SPEC,
            packet_context(ws, decision_id, plan.agent_id),
            receipt_values(plan, results),
        )
        fault_point("commit.after_receipt")
        decisions.append(ws, decision_id, "commit", receipt["receipt_ref"], now, wait=wait)
    fault_point("commit.after_index")
    pending.remove(ws, plan.asm["assembly_ref"])
    return Result("commit", {"receipt": receipt, "replayed": False})


def load_chain(store: Store, refs: dict[str, str | None]) -> dict[str, dict[str, Any] | None]:
    """Every packet of the chain, re-hashed on read."""
    specs = {
        "evidence": evidence.SPEC,
        "proposal": proposal.SPEC,
        "outcome": outcome.SPEC,
        "review": review.SPEC,
    }
    return {
        kind: (store.get(ref, kind=specs[kind].kind) if ref else None) for kind, ref in refs.items()
    }


@signed("commit")  # one signed statement of what it read and wrote (SPEC §18)
def commit_decision(
    *,
    ws: Workspace,
    decision_id: str,
    event_id: str,
    event_log: str | None,
    agent_id: str | None,
    clock: Clock,
    wait: float,
) -> Result:
    check_decision_id(decision_id)
    state = require_active(ws, agent_id)
    profile, _registry = state.settings()
    store = Store(ws)

    # 1. exact-read the event
    log_path, display = event_log_path(ws, profile, event_log)
    log = events.read_log(log_path, display)
    event_id = events.resolve_id(log, event_id)
    event = events.find_event(log, event_id, display)
    refs = _check_event(ws, event, decision_id, display)
    if decision_id in events.abandoned(events.read_log(ws.events, ws.rel(ws.events))):
        raise _refuse(
            "decision_abandoned",
            f"decision {decision_id} was abandoned (`dcx abandon`)",
            "prepare a new decision id to take the work up again",
        )
    try:
        chain = load_chain(store, refs)
    except Redacted as exc:
        raise _redacted(exc.stub) from None
    gate_event = None
    rev = chain.get("review")
    if rev is not None and rev.get("source_event_id"):
        # the gate sits in events.jsonl or in a host log the profile lists
        matches = [e for e in gate_logs(ws, profile) if e.get("event_id") == rev["source_event_id"]]
        gate_event = (
            events.find_event(matches, rev["source_event_id"], display) if matches else None
        )
    plan = plan_commit(
        ws, store, state, decision_id, event_id, chain, gate_event=gate_event, wait=wait
    )
    if isinstance(plan, Result):
        return plan
    return apply_commit(ws, store, plan, wait=wait, now=clock.now())
