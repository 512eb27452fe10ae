"""Views of the rest of the cycle: proposal, outcome, review, commit receipt, feedback."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dcx.cli._views import view
from dcx.cli.views.common import banner, facts, header, meaning, plural, short, table, yes

if TYPE_CHECKING:
    from dcx.cli._layout import Page


def by_rank(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: (r.get("rank") is None, r.get("rank") or 0))


@view("proposal")
def proposal(page: Page, packet: dict[str, Any]) -> None:
    header(
        page,
        "Advisory proposal",
        packet,
        "packet_ref",
        extra=(f"proposed by {packet['proposed_by']}",),
    )
    rec = packet["recommended_decision"]
    banner(
        page,
        f"recommends {rec['option_id']}: {rec['summary']} (confidence {rec['confidence']:g})\n"
        f"{rec['rationale']}",
    )
    facts(
        page,
        [
            ("bound to", f"{short(packet['evidence_packet_ref'])} (the evidence it reasons from)"),
            (
                "authority",
                "confirmation required: a proposal decides nothing until an outcome records acceptance",
            ),
            ("review at", packet["review_at"]),
        ],
    )
    table(
        page,
        "Objective scores",
        ("objective", "score", "rationale"),
        [
            (o["objective_id"], f"{o['score']:g}", o["rationale"])
            for o in packet["objective_scores"]
        ],
    )
    table(
        page,
        "Alternatives",
        ("rank", "alternative", "summary", "trade-off"),
        [
            (a.get("rank"), a["alternative_id"], a["summary"], a["tradeoff"])
            for a in by_rank(packet["alternatives"])
        ],
    )
    table(
        page,
        "Next actions",
        ("rank", "action", "owner", "summary", "acceptance", "stop when"),
        [
            (
                a.get("rank"),
                a["action_id"],
                a["owner_ref"],
                a["summary"],
                a["acceptance"],
                a["stop_condition"],
            )
            for a in by_rank(packet["next_actions"])
        ],
    )
    table(
        page,
        "Stop list",
        ("stop", "summary", "condition"),
        [(s["stop_id"], s["summary"], s["condition"]) for s in packet["stop_list"]],
    )


@view("outcome")
def outcome(page: Page, packet: dict[str, Any]) -> None:
    header(
        page,
        "Outcome receipt",
        packet,
        "packet_ref",
        extra=(f"recorded by {packet['recorded_by']}",),
    )
    acc = packet["accepted_decision"]
    status = packet["verification_status"]
    banner(
        page,
        f"{status} · accepted {acc['option_id']} by {acc['accepted_by']} at {acc['accepted_at']}\n"
        f"{acc['summary']}",
        "yellow" if status in ("refuted", "inconclusive") else "",
    )
    eligible = packet["reward_memory_candidate_eligible"]
    facts(
        page,
        [
            (
                "chain",
                f"proposal {short(packet['proposal_packet_ref'])} → evidence "
                f"{short(packet['evidence_packet_ref'])}",
            ),
            ("review at", packet["review_at"]),
            (
                "memory candidate",
                "eligible (verified, with a verified observed outcome)"
                if eligible
                else "not eligible (needs status verified and a verified observed outcome)",
            ),
            (
                "append-only",
                "a later receipt (say verified) is a new packet; this one never changes",
            ),
        ],
    )
    table(
        page,
        "Resulting transitions",
        ("transition", "status", "summary", "event"),
        [
            (t["transition_id"], t["status"], t["summary"], t.get("event_ref"))
            for t in packet["resulting_transitions"]
        ],
    )
    table(
        page,
        "Observed outcomes",
        ("outcome", "status", "summary", "evidence", "observed"),
        [
            (o["outcome_id"], o["status"], o["summary"], short(o["evidence_ref"]), o["observed_at"])
            for o in packet["observed_outcomes"]
        ],
    )
    table(
        page,
        "Invalidated assumptions",
        ("assumption", "summary", "evidence", "invalidated"),
        [
            (a["assumption_id"], a["summary"], short(a["evidence_ref"]), a["invalidated_at"])
            for a in packet["invalidated_assumptions"]
        ],
    )


DISPOSITION_WORDS = {
    "approve": "approved: the proposal may proceed; an observed outcome is due",
    "reject": "rejected: the proposal does not proceed; the material it was based on is consumed",
    "defer": "deferred: no decision now; the material it was based on is consumed",
    "no_change": "no change: nothing material changed, settled quietly without a proposal or gate",
}


@view("review")
def review(page: Page, packet: dict[str, Any]) -> None:
    disposition = packet["disposition"]
    header(
        page,
        "Review settlement",
        packet,
        "packet_ref",
        extra=(f"recorded {packet['recorded_at']}",),
    )
    who = "quiet path" if packet["quiet_noop"] else f"decided by {packet['actor_ref']}"
    banner(
        page,
        f"{disposition} · {who} · {packet['reason_code']}\n{packet['summary']}",
        "yellow" if disposition in ("reject", "defer") else "",
    )
    rows = [("meaning", DISPOSITION_WORDS.get(disposition, disposition))]
    if packet.get("source_event_id"):
        rows.append(("gate", f"{packet['source_event_id']} (todo {packet['gate_todo_id']})"))
        rows.append(
            (
                "chain",
                f"proposal {short(packet['proposal_packet_ref'])} → evidence "
                f"{short(packet['evidence_packet_ref'])}",
            )
        )
    else:
        rows.append(
            (
                "chain",
                f"evidence {short(packet['evidence_packet_ref'])} (no proposal: a semantic no-change)",
            )
        )
        rows.append(("actor", f"{packet['actor_ref']} (the agent that settled it)"))
    rows += [
        (
            "authority",
            f"confirmation required {yes(packet['authority_confirmation_required'])} · "
            f"confirmed {yes(packet['authority_confirmed'])}",
        ),
        (
            "outcome",
            "due: record observed outcomes with dcx outcome"
            if packet["outcome_observation_required"]
            else "none expected",
        ),
        (
            "cursors",
            "may advance: settlement, not the outcome, is the cursor boundary"
            if packet["cursor_commit_allowed"]
            else "held",
        ),
    ]
    facts(page, rows)


@view("commit")
def commit(page: Page, packet: dict[str, Any]) -> None:
    header(page, "Cursor commit receipt", packet, "receipt_ref")
    advanced = sum(1 for s in packet["sources"] if s["result"] == "advanced")
    replayed = len(packet["sources"]) - advanced
    banner(
        page,
        f"{packet['status']} · {plural(advanced, 'cursor')} advanced"
        + (f", {replayed} already there (replayed)" if replayed else "")
        + f" · read back and verified: {yes(packet['readback_verified'])}",
    )
    facts(
        page,
        [
            (
                "event",
                f"{packet['event_id']} ("
                + (
                    "the review's validation event"
                    if packet.get("review_packet_ref")
                    else "the writeback that allowed it"
                )
                + ")",
            ),
            (
                "chain",
                f"assembly {short(packet['assembly_ref'])} → checkpoint {short(packet['checkpoint_ref'])}",
            ),
            ("", _commit_chain(packet)),
        ],
    )
    table(
        page,
        "Sources (cursor refs are keyed hashes: the cursor values stay private)",
        ("source", "committed before", "committed now", "result"),
        [
            (
                s["source_id"],
                short(s["cursor_before_ref"]),
                short(s["cursor_after_ref"]),
                s["result"],
            )
            for s in packet["sources"]
        ],
    )


def _commit_chain(packet: dict[str, Any]) -> str:
    links = [f"evidence {short(packet['evidence_packet_ref'])}"]
    if packet.get("proposal_packet_ref"):
        links.append(f"proposal {short(packet['proposal_packet_ref'])}")
    if packet.get("review_packet_ref"):
        links.append(f"review {short(packet['review_packet_ref'])} (settled by review)")
    if packet.get("outcome_packet_ref"):
        links.append(f"outcome {short(packet['outcome_packet_ref'])}")
    return " → ".join(links)


TELEMETRY_LABELS = (
    ("count_mode", "counted from"),
    ("retrieval_status", "recall"),
    ("provider_result_count", "recall results"),
    ("accepted_claim_count", "accepted claims"),
    ("stale_or_rejected_claim_count", "stale or rejected claims"),
    ("rejected_by_exact_read_count", "rejected by exact read"),
    ("changed_fact_count", "changed facts"),
    ("open_conflict_count", "open conflicts"),
    ("current_source_revision_count", "current source revisions"),
    ("verified_outcome_count", "verified observed outcomes"),
    ("linked_verified_outcome_count", "…citing this evidence"),
    ("invalidated_assumption_count", "invalidated assumptions"),
)


@view("feedback")
def feedback(page: Page, packet: dict[str, Any]) -> None:
    header(page, "Outcome feedback", packet, "feedback_ref")
    candidate = packet.get("candidate")
    if packet["candidate_emitted"] and candidate:
        banner(
            page,
            f"Reward Memory candidate ({candidate['candidate_kind']}): {candidate['summary']}\n"
            "review required · never ingested · never activated",
        )
    else:
        banner(
            page,
            f"no Reward Memory candidate: {plural(len(packet['ineligible_reasons']), 'reason')}",
        )
    facts(
        page,
        [
            (
                "chain",
                f"outcome {short(packet['outcome_packet_ref'])} → evidence {short(packet['evidence_packet_ref'])}"
                + (
                    f" · recall {short(packet['retrieval_ref'])}"
                    if packet.get("retrieval_ref")
                    else ""
                ),
            ),
            (
                "authority",
                f"granted {yes(packet['authority_granted'])} · memory ingested {yes(packet['memory_ingested'])}",
            ),
        ],
    )
    if candidate:
        table(page, "Candidate claims", ("claim",), [(c,) for c in candidate["claim_ids"]])
    table(
        page,
        "Why no candidate",
        ("reason", "meaning"),
        [(code, meaning(code)) for code in packet["ineligible_reasons"]],
        empty="-" if candidate else "none",
    )
    telemetry = packet["telemetry"]
    table(
        page,
        "Telemetry",
        ("measure", "value"),
        [(label, telemetry[key]) for key, label in TELEMETRY_LABELS if key in telemetry],
    )
