"""``dcx log``: decisions newest first, each with its chain, like ``git log`` (SPEC §9).

Chain order: assembly → evidence → proposal → outcomes → events → commit
receipt → feedback. Goal-level scan receipts (from ``dcx scan``) are listed
apart. Reads packets through the store, so a corrupt one stops the log with
the usual ``dcx verify`` hint.

Each chain row names who did it (``agent_id``: the packet's or event's agent,
or who proposed or recorded it) and the chain it belongs to
(``chain_evidence_ref``, SPEC §16); when two agents or hosts each prepared the
decision, each chain is listed whole, one after the other, in the order the
chains began.
"""

from __future__ import annotations

from typing import Any

from dcx import cycle
from dcx.chains import agent_of, evidence_of
from dcx.core.result import Result
from dcx.core.workspace import Workspace
from dcx.state import decisions, events, gates, pending
from dcx.state.redaction import is_stub
from dcx.state.signatures import Book
from dcx.state.store import Store


def short(ref: str) -> str:
    prefix, _, hexpart = ref.rpartition("-")
    return f"{prefix}-{hexpart[:8]}"


def describe(kind: str, packet: dict[str, Any]) -> str:
    if kind == "assembly":
        mode = "preview" if packet["preview"] else f"{packet['mode']} rebase"
        return f"{mode} · coverage {packet['coverage_status']} · {packet['checkpoint']['ready_count']} ready"
    if kind == "evidence":
        return (
            f"{len(packet['changed_facts'])} fact(s) · {len(packet['recalled_claims'])} accepted"
            f" · {len(packet['stale_or_rejected_claims'])} stale/rejected · {len(packet['conflicts'])} conflict(s)"
        )
    if kind == "proposal":
        rec = packet["recommended_decision"]
        return f"recommends {rec['option_id']} ({rec['confidence']:g})"
    if kind == "outcome":
        return (
            f"{packet['verification_status']} · accepted {packet['accepted_decision']['option_id']}"
        )
    if kind == "commit":
        moved = sum(1 for s in packet["sources"] if s["result"] == "advanced")
        return f"{packet['status']} · {moved} cursor(s) advanced"
    if kind == "review":
        who = "quiet" if packet["disposition"] == "no_change" else f"by {packet['actor_ref']}"
        return f"{packet['disposition']} {who} · {packet['reason_code']}"
    if kind == "feedback":
        return "candidate emitted" if packet["candidate_emitted"] else "no candidate"
    return ""


def details(kind: str, packet: dict[str, Any]) -> dict[str, Any]:
    """The machine fields behind ``describe``'s line: counts and disposition codes."""
    if kind == "assembly":
        return {
            "preview": packet["preview"],
            "mode": packet["mode"],
            "coverage_status": packet["coverage_status"],
            "ready_count": packet["checkpoint"]["ready_count"],
        }
    if kind == "evidence":
        return {
            "facts": len(packet["changed_facts"]),
            "accepted_claims": len(packet["recalled_claims"]),
            "stale_or_rejected_claims": len(packet["stale_or_rejected_claims"]),
            "conflicts": len(packet["conflicts"]),
        }
    if kind == "proposal":
        rec = packet["recommended_decision"]
        return {"option_id": rec["option_id"], "confidence": rec["confidence"]}
    if kind == "outcome":
        return {
            "verification_status": packet["verification_status"],
            "option_id": packet["accepted_decision"]["option_id"],
        }
    if kind == "commit":
        return {
            "status": packet["status"],
            "advanced": sum(1 for s in packet["sources"] if s["result"] == "advanced"),
        }
    if kind == "feedback":
        return {"candidate_emitted": packet["candidate_emitted"]}
    return {}


def _chain(
    store: Store,
    ws: Workspace,
    decision_id: str,
    all_events: list[dict[str, Any]],
    book: Book | None = None,
) -> list[dict[str, Any]]:
    """The decision's packets in the order they happened. The rebase receipt and
    checkpoint are shown by the assembly that embeds them; its evidence follows it;
    each event follows the outcome it references."""
    entries = decisions.entries(ws, decision_id)
    packets = {e["ref"]: store.get_or_stub(e["ref"], kind=e["kind"]) for e in entries}
    rows = _packet_rows(entries, packets)
    seq_of = {row["ref"]: row["_seq"] for row in rows}
    for event in all_events:
        if (event.get("causality") or {}).get("decision_id") == decision_id:
            rows.append(_event_row(event, seq_of, len(entries)))
    unique = list({r["ref"]: r for r in reversed(rows)}.values())[::-1]  # the first row of each ref
    unique.sort(key=lambda r: r["_seq"])
    keys = {r["chain_evidence_ref"] for r in unique if r["chain_evidence_ref"]}
    if (
        len(keys) > 1
    ):  # two agents' (or hosts') chains of one decision: each whole, apart (SPEC §16)
        first: dict[str, tuple[int, int]] = {}
        for row in unique:
            if row["chain_evidence_ref"]:
                first.setdefault(row["chain_evidence_ref"], row["_seq"])
        unique.sort(key=lambda r: (first.get(r["chain_evidence_ref"] or "", r["_seq"]), r["_seq"]))
    for row in unique:
        del row["_seq"]
        if book is not None:  # who signed it (SPEC §18), from verify's cache: log verifies nothing
            stored = packets.get(row["ref"])
            redacted = stored is not None and is_stub(stored)
            row["signature"] = book.verdict(row["ref"], row["agent_id"], redacted=redacted)
    return unique


def _embedded(assembly: dict[str, Any]) -> set[str]:
    """The refs of the packets an assembly embeds (shown by it, not on rows of their own)."""
    refs = {
        assembly["evidence"]["packet_ref"],
        assembly["rebase"]["rebase_ref"],
        assembly["checkpoint"]["checkpoint_ref"],
        assembly["coverage"]["coverage_ref"],
        assembly["freshness"]["freshness_ref"],
    }
    refs.update(r["receipt_ref"] for r in assembly["scan_receipts"])
    if assembly.get("retrieval"):
        refs.add(assembly["retrieval"]["retrieval_ref"])
    return refs


EMBEDDED_KINDS = ("rebase", "checkpoint", "scan", "coverage", "freshness", "retrieval")


def _packet_rows(
    entries: list[dict[str, Any]], packets: dict[str, dict[str, Any]]
) -> list[dict[str, Any]]:
    embedded: set[str] = set()
    for entry in entries:
        if entry["kind"] == "assembly" and not is_stub(packets[entry["ref"]]):
            embedded |= _embedded(packets[entry["ref"]])
    rows: list[dict[str, Any]] = []
    for seq, entry in enumerate(entries):
        ref, kind = entry["ref"], entry["kind"]
        if kind in EMBEDDED_KINDS or ref in embedded:
            continue  # shown by (or right after) the assembly that embeds it
        packet = packets[ref]
        rows.append(_row(kind, ref, entry.get("observed_at"), packet, (seq, 0)))
        if kind == "assembly" and not is_stub(packet):
            ev = packet["evidence"]
            rows.append(_row("evidence", ev["packet_ref"], ev["observed_at"], ev, (seq, 1)))
    return rows


def _event_row(
    event: dict[str, Any], seq_of: dict[str, tuple[int, int]], last: int
) -> dict[str, Any]:
    """An event's row, placed right after the latest packet it references (else at the end)."""
    refs = event.get("artifact_refs", [])
    anchors = [seq_of[r] for r in refs if r in seq_of]
    evidence_refs = [r for r in refs if str(r).startswith("decision-evidence-")]
    agent = event.get("agent_id")
    return {
        "kind": "event",
        "ref": event["event_id"],
        "short_ref": event["event_id"][:18],
        "observed_at": event.get("recorded_at"),
        "_seq": (max(anchors)[0], 2) if anchors else (last, 0),
        "details": {"event_kind": event.get("event_kind")},
        "status": _event_status(event),
        "agent_id": agent if isinstance(agent, str) else None,
        "chain_evidence_ref": evidence_refs[0] if evidence_refs else None,
    }


def _event_status(event: dict[str, Any]) -> str:
    if gates.is_user_gate(event):
        verdict = gates.disposition_of(event) or "no disposition"
        text = f"gate {verdict} by {gates.actor_of(event) or '-'} · {event.get('summary', '')}"
    else:
        text = f"{event.get('event_kind')} · {event.get('summary', '')}"
    return text[:120]


def _row(
    kind: str, ref: str, observed_at: str | None, packet: dict[str, Any], seq: tuple[int, int]
) -> dict[str, Any]:
    stub = is_stub(packet)
    status = f"redacted ({packet['reason_code']})" if stub else describe(kind, packet)
    return {
        "kind": kind,
        "ref": ref,
        "short_ref": short(ref),
        "observed_at": observed_at,
        "status": status,
        "details": {} if stub else details(kind, packet),
        "_seq": seq,
        "agent_id": None if stub else agent_of(packet),
        "chain_evidence_ref": None if stub else evidence_of(packet),
    }


def _requires_review(ws: Workspace) -> bool:
    """``[commit] require_review`` of the profile (False when it cannot be used: log still reads)."""
    from dcx.state.profile import load_profile

    try:
        profile = load_profile(ws)
    except Exception:
        return False
    return bool(profile and profile.require_review)


def log(*, ws: Workspace, decision_id: str | None, limit: int | None) -> Result:
    store = Store(ws)
    require_review: bool | None = None  # read from the profile once a next step depends on it
    all_events = events.read_log(ws.events, ws.rel(ws.events))
    ids = [decision_id] if decision_id else decisions.decision_ids(ws)
    if decision_id and decision_id not in decisions.decision_ids(ws):
        from dcx.core.errors import InvalidInput

        raise InvalidInput(
            f"--decision-id: no decision {decision_id} in this workspace",
            field="--decision-id",
            code="unknown_decision",
            hint="`dcx log` lists the decisions",
        )
    book = Book(ws, check=False)
    rows = []
    for ident in ids:
        chain = _chain(store, ws, ident, all_events, book)
        if not chain:
            continue
        kinds = {row["kind"] for row in chain}
        mine = [e for e in all_events if (e.get("causality") or {}).get("decision_id") == ident]
        settled = cycle.settlement(mine)
        outcomes = [
            p
            for p in (
                store.get_or_stub(r, kind="outcome")
                for r in decisions.refs_of(ws, ident, "outcome")
            )
            if not is_stub(p)
        ]
        observed = cycle.outcome_observed(outcomes, settled["approved"])
        latest = decisions.latest(ws, ident, "assembly")
        preview = (
            latest is not None and store.get_or_stub(latest, kind="assembly").get("preview") is True
        )
        if require_review is None and "proposal" in kinds:  # before a proposal it decides nothing
            require_review = _requires_review(ws)
        where = cycle.standing(
            kinds, settled, observed, require_review=bool(require_review), latest_is_preview=preview
        )
        where = cycle.commit_here(
            where,
            any(pending.path_for(ws, r).exists() for r in decisions.refs_of(ws, ident, "assembly")),
        )
        index_times = [
            e["observed_at"]
            for e in decisions.entries(ws, ident)
            if isinstance(e.get("observed_at"), str)
        ]
        event_times = [e["recorded_at"] for e in mine if isinstance(e.get("recorded_at"), str)]
        rows.append(
            {
                "decision_id": ident,
                "last_observed_at": cycle.last_observed(index_times, event_times),
                **where,
                "chain": chain,
            }
        )
    rows.sort(key=lambda r: (r["last_observed_at"] or "", r["decision_id"]), reverse=True)
    if limit is not None:
        rows = rows[:limit]
    scans = []
    if decision_id is None:
        for stored in store.iter_packets("scan"):
            receipt = stored.packet
            if receipt.get("decision_id"):
                continue  # a prepare run's receipt: shown in its decision's chain
            scans.append(
                {
                    "ref": stored.ref,
                    "short_ref": short(stored.ref),
                    "source_id": receipt["source_id"],
                    "status": receipt["status"],
                    "observed_at": receipt["observed_at"],
                    "changed_count": receipt["changed_count"],
                }
            )
        scans.sort(key=lambda r: (r["observed_at"], r["ref"]), reverse=True)
    return Result("log", {"decisions": rows, "goal_scans": scans})
