"""``dcx commit``: advance private cursors through a verified, crash-safe chain (SPEC §8.6).

Commit never guesses "latest": the chain comes from the event. Every check
below refuses with exit 1 (reason code in the error) and writes nothing. The
cursor file is written last under its lock — compare-and-swap, atomic
replace, fsync, read back — like ``git update-ref``. A commit killed after
the replace is completed by the next one (cursors already equal the
proposals → the receipt is written with status ``replayed``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from dcx import decisions, events, pending
from dcx.activation import require_active
from dcx.checkpoints import READY, derive_rows
from dcx.clock import clock_from_env
from dcx.cursors import read_cursors, write_cursors
from dcx.errors import Refused
from dcx.fsutil import fault_point, file_lock
from dcx.keys import load_key
from dcx.names import same_actor
from dcx.ops._common import check_decision_id, packet_context
from dcx.packets import commit, evidence, outcome, proposal
from dcx.redaction import Redacted, is_stub
from dcx.refmap import RefMinter
from dcx.result import Result
from dcx.store import Store
from dcx.workspace import Workspace

ARTIFACT_KINDS = {"decision-evidence": "evidence", "decision-proposal": "proposal", "decision-outcome": "outcome"}


def _refuse(code: str, message: str, hint: str | None = None) -> Refused:
    return Refused(f"commit refused ({code}): {message}", code=code, hint=hint)


def _redacted(stub: dict[str, Any]) -> Redacted:
    return Redacted(stub, code="chain_redacted",
                    hint="a redacted packet cannot bind a commit: prepare the decision again")


def _event_log(ws: Workspace, profile, event_log: str | None) -> tuple[Path, str]:
    if event_log is None:
        return ws.events, ws.rel(ws.events)
    wanted = os.path.realpath(event_log)
    allowed = {os.path.realpath(ws.root / p) for p in profile.external_event_logs}
    if wanted not in allowed:
        raise _refuse("event_log_not_allowed", "that event log is not listed in [commit] external_event_logs")
    return Path(wanted), "the external event log"


def _check_event(ws: Workspace, event: dict[str, Any], decision_id: str, display: str) -> dict[str, str]:
    """Step 1: the event recomputes and binds exactly one evidence, proposal and outcome of D."""
    if not events.id_recomputes(event):
        raise _refuse("event_id_mismatch", f"{display}: the event id does not recompute from its body")
    if event.get("goal_id") != ws.goal_id:
        raise _refuse("event_goal_mismatch", "the event belongs to another goal")
    if event.get("event_kind") not in events.KINDS:
        raise _refuse("event_kind_not_allowed", f"event kind must be one of {', '.join(events.KINDS)}")
    if event.get("status") != "committed":
        raise _refuse("event_not_committed", "the event's status is not committed")
    causality = event.get("causality")
    if not isinstance(causality, dict) or causality.get("decision_id") != decision_id:
        raise _refuse("event_decision_mismatch", f"the event is not about decision {decision_id}")
    refs = event.get("artifact_refs")
    if not isinstance(refs, list):
        raise _refuse("event_artifacts_invalid", "the event has no artifact_refs list")
    indexed = {entry["ref"] for entry in decisions.entries(ws, decision_id)}
    found: dict[str, list[str]] = {kind: [] for kind in ARTIFACT_KINDS.values()}
    for ref in refs:
        prefix = ref.rsplit("-", 1)[0] if isinstance(ref, str) else ""
        if prefix in ARTIFACT_KINDS and ref in indexed:
            found[ARTIFACT_KINDS[prefix]].append(ref)
    for kind, matches in found.items():
        if len(matches) != 1:
            raise _refuse(
                "event_artifacts_invalid",
                f"the event must reference exactly one {kind} of decision {decision_id} (found {len(matches)})",
            )
    return {kind: matches[0] for kind, matches in found.items()}


def _find_assembly(store: Store, ws: Workspace, decision_id: str, evidence_ref: str) -> dict[str, Any]:
    candidates, stubs = [], []
    for ref in decisions.refs_of(ws, decision_id, "assembly"):
        packet = store.get_or_stub(ref, kind="assembly")
        if is_stub(packet):
            stubs.append(packet)
        elif packet["evidence"]["packet_ref"] == evidence_ref:
            candidates.append(packet)
    if not candidates and stubs:  # the assembly this chain needs may be the redacted one
        raise _redacted(stubs[0])
    if len(candidates) != 1:
        raise _refuse("chain_ambiguous" if candidates else "chain_missing",
                      f"{len(candidates)} assemblies of decision {decision_id} hold that evidence")
    return candidates[0]


def _existing_receipt(store: Store, decision_id: str, checkpoint_ref: str, event_id: str):
    """A stored receipt for (checkpoint, event) — looked up in the store itself, not the
    index, so a commit killed between writing its receipt and indexing it is found."""
    for stored in store.iter_packets("commit"):
        receipt = stored.packet
        if (receipt["decision_id"], receipt["checkpoint_ref"], receipt["event_id"]) == (
            decision_id, checkpoint_ref, event_id
        ):
            return receipt
    return None


def _refuse_if_committed(store: Store, decision_id: str, checkpoint_ref: str) -> None:
    """A receipt for this checkpoint under another event: the assembly is spent, not lost."""
    for stored in store.iter_packets("commit"):
        receipt = stored.packet
        if (receipt["decision_id"], receipt["checkpoint_ref"]) == (decision_id, checkpoint_ref):
            raise _refuse(
                "already_committed",
                f"decision {decision_id} is already committed: receipt {receipt['receipt_ref']} "
                f"(event {receipt['event_id']}) advanced this assembly's cursors",
                hint=f"an assembly commits once; to advance again, `dcx prepare --decision-id {decision_id}` "
                     "anew and run the cycle on the new assembly (or commit the first event again to replay it)",
            )


def _replayed(ws: Workspace, receipt: dict[str, Any], observed_at: str, wait: float) -> Result:
    """Print the existing receipt; finish what an interrupted commit left (index line, companion)."""
    decisions.append(ws, receipt["decision_id"], "commit", receipt["receipt_ref"], observed_at, wait=wait)
    pending.remove(ws, receipt["assembly_ref"])
    return Result("commit", {"receipt": receipt, "replayed": True})


def _check_pending(ws: Workspace, minter: RefMinter, asm: dict[str, Any], pend: dict[str, Any]) -> list[dict]:
    """Step 4: the companion matches the assembly and every disposition re-derives."""
    checkpoint = asm["checkpoint"]
    if (pend["assembly_ref"], pend["evidence_packet_ref"], pend["checkpoint_ref"], pend["decision_id"]) != (
        asm["assembly_ref"], asm["evidence"]["packet_ref"], checkpoint["checkpoint_ref"], asm["decision_id"]
    ):
        raise _refuse("pending_mismatch", "the pending companion belongs to another assembly")
    sources = {row["source_id"]: row for row in asm["manifest"]["sources"]}
    try:
        derived = derive_rows(asm["scan_receipts"], sources, asm["evidence"], asm["rebase"])
    except KeyError:
        raise _refuse("checkpoint_not_derivable", "a scanned source is missing from the embedded manifest") from None
    # stored record lists are in canonical-JSON order (SPEC §3.1), not source order: compare as sets of rows
    by_source = lambda rows: sorted(rows, key=lambda r: r["source_id"])  # noqa: E731
    if by_source(derived) != by_source(checkpoint["rows"]):
        raise _refuse("checkpoint_not_derivable", "the checkpoint does not follow from the receipts and evidence")
    ready = [row for row in checkpoint["rows"] if row["disposition"] == READY]
    ready_ids = {row["source_id"] for row in ready}
    if set(pend["proposed_cursors"]) != ready_ids or set(pend["expected_cursors"]) != ready_ids:
        raise _refuse("pending_mismatch", "the pending cursors are not exactly the ready sources")
    for row in ready:
        sid = row["source_id"]
        if minter.cursor_ref(sid, pend["expected_cursors"][sid]) != row["cursor_before_ref"]:
            raise _refuse("pending_mismatch", f"the expected cursor of {sid} does not match the checkpoint")
        if minter.cursor_ref(sid, pend["proposed_cursors"][sid]) != row.get("cursor_after_ref"):
            raise _refuse("pending_mismatch", f"the proposed cursor of {sid} does not match the checkpoint")
    if not ready:
        decision = asm["decision_id"]
        if asm.get("preview"):
            hint = (f"this assembly is a preview, which never advances a cursor: run `dcx prepare --decision-id "
                    f"{decision} --auto-rebase` (or --rebase FILE, or --baseline), then propose, outcome, "
                    "writeback and commit again")
        else:
            hint = (f"every source keeps its cursor (the reason is on each checkpoint row: "
                    f"`dcx show {asm['assembly_ref']}`); prepare again when it is resolved")
        raise _refuse("nothing_to_commit", "no source of this assembly is ready to advance", hint)
    return ready


def commit_decision(*, ws: Workspace, decision_id: str, event_id: str, event_log: str | None,
                    agent_id: str | None, wait: float) -> Result:
    check_decision_id(decision_id)
    state = require_active(ws, agent_id)
    profile, registry = state.profile, state.registry
    assert profile is not None and registry is not None
    store = Store(ws)

    # 1. exact-read the event
    log_path, display = _event_log(ws, profile, event_log)
    logged = events.read_log(log_path, display)
    event_id = events.resolve_id(logged, event_id)
    event = events.find_event(logged, event_id, display)
    chain = _check_event(ws, event, decision_id, display)
    if decision_id in events.abandoned(events.read_log(ws.events, ws.rel(ws.events))):
        raise _refuse("decision_abandoned", f"decision {decision_id} was abandoned (`dcx abandon`)",
                      "prepare a new decision id to take the work up again")

    # 2. the one assembly of that evidence; every packet re-hashes; links hold
    asm = _find_assembly(store, ws, decision_id, chain["evidence"])
    try:
        ev = store.get(chain["evidence"], kind=evidence.SPEC.kind)
        prop = store.get(chain["proposal"], kind=proposal.SPEC.kind)
        out = store.get(chain["outcome"], kind=outcome.SPEC.kind)
        store.get(asm["checkpoint"]["checkpoint_ref"], kind="checkpoint")
    except Redacted as exc:
        raise _redacted(exc.stub) from None
    if ev != asm["evidence"]:
        raise _refuse("chain_mismatch", "the stored evidence differs from the assembly's")
    if prop["evidence_packet_ref"] != ev["packet_ref"]:
        raise _refuse("chain_mismatch", "the proposal is not bound to that evidence")
    if out["proposal_packet_ref"] != prop["packet_ref"]:
        raise _refuse("chain_mismatch", "the outcome is not bound to that proposal")
    if same_actor(out["accepted_decision"]["accepted_by"], out["recorded_by"]) and not profile.allow_self_confirmation:
        raise _refuse("self_confirmation_not_allowed", "the outcome was confirmed by the agent that recorded it")

    checkpoint_ref = asm["checkpoint"]["checkpoint_ref"]
    # 3. replay
    existing = _existing_receipt(store, decision_id, checkpoint_ref, event_id)
    if existing is not None:
        return _replayed(ws, existing, asm["observed_at"], wait)

    # 4. the private companion
    key = load_key(ws)
    minter = RefMinter(ws, key, record=False)
    try:
        pend = pending.read(ws, asm["assembly_ref"])
    except Refused:
        # a racing commit of this chain may have finished since step 3: it writes its receipt before
        # it removes the companion, so look again before refusing
        existing = _existing_receipt(store, decision_id, checkpoint_ref, event_id)
        if existing is not None:
            return _replayed(ws, existing, asm["observed_at"], wait)
        _refuse_if_committed(store, decision_id, checkpoint_ref)
        raise
    ready = _check_pending(ws, minter, asm, pend)

    # 5. nothing private changed since prepare
    if (profile.digest, registry.digest) != (pend["profile_digest"], pend["registry_digest"]):
        raise _refuse("profile_changed", "profile.toml or sources.toml changed since prepare",
                      hint="prepare again with the current profile")

    # 6. to 8. under the cursor lock: re-check, compare-and-swap, write, read back, receipt
    with file_lock(ws.cursors, wait=wait, display=ws.rel(ws.cursors)):
        existing = _existing_receipt(store, decision_id, checkpoint_ref, event_id)
        if existing is not None:
            return _replayed(ws, existing, asm["observed_at"], wait)
        current = read_cursors(ws)
        results = {}
        for row in ready:
            sid = row["source_id"]
            have = current.get(sid)
            if have == pend["proposed_cursors"][sid]:
                results[sid] = "replayed"
            elif have == pend["expected_cursors"][sid]:
                results[sid] = "advanced"
            else:
                raise _refuse("cursor_moved", f"the committed cursor of {sid} moved since prepare",
                              hint="prepare again: another decision advanced this source")
        if any(result == "advanced" for result in results.values()):
            updated = {**current, **{sid: pend["proposed_cursors"][sid] for sid in results}}
            fault_point("commit.before_cursor_write")
            write_cursors(ws, updated)
            fault_point("commit.after_cursor_write")
            if read_cursors(ws) != updated:
                raise _refuse("readback_failed", "the cursor file did not read back as written")
        receipt = store.put(
            commit.SPEC,
            packet_context(ws, decision_id),
            {
                "assembly_ref": asm["assembly_ref"],
                "checkpoint_ref": checkpoint_ref,
                "evidence_packet_ref": ev["packet_ref"],
                "proposal_packet_ref": prop["packet_ref"],
                "outcome_packet_ref": out["packet_ref"],
                "event_id": event_id,
                "status": "committed" if "advanced" in results.values() else "replayed",
                "sources": [
                    {
                        "source_id": row["source_id"],
                        "cursor_before_ref": row["cursor_before_ref"],
                        "cursor_after_ref": row["cursor_after_ref"],
                        "result": results[row["source_id"]],
                    }
                    for row in ready
                ],
            },
        )
        fault_point("commit.after_receipt")
        decisions.append(ws, decision_id, "commit", receipt["receipt_ref"], clock_from_env().now(), wait=wait)
    fault_point("commit.after_index")
    pending.remove(ws, asm["assembly_ref"])
    return Result("commit", {"receipt": receipt, "replayed": False})
