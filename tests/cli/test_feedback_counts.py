"""Feedback's counts from a retrieval receipt with several rejection reasons (SPEC §8.7 v4; the
reference's parity case).

A real decision: the example indexed, its runbook edited after the index (so the recalled
runbook chunk no longer matches authority), one recall, and an agent's rebase that judges
both recalled results and adds records of its own. The expected numbers are written out
here from the SPEC and the seed's distinction: the evidence's *aggregate records* (every
stale or rejected claim, by reason code) against the *actual provider results* of the
receipt rejected by exact read.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cycle import (
    PROPOSAL,
    QUERY,
    QUERY_SUMMARY,
    stale_runbook,
    verified_outcome,
    write_json,
)

D = "ttl-2026-12"
GHOST = "provider-" + "e" * 32  # a result of no run of this decision


def _recall_refs(dcx, root: Path) -> dict[str, str]:
    """{'runbook'|'adr': provider_ref} of this recall, as an agent sees them (writes nothing)."""
    shown = dcx(
        "-C", str(root), "prepare", "--decision-id", D, "--show-content",
        "--query", QUERY, "--query-summary", QUERY_SUMMARY, "--format", "json",
    )  # fmt: skip
    assert shown.exit_code == 0, shown.stdout + shown.stderr
    results = shown.json()["data"]["content"]["recall_results"]
    refs = {}
    for row in results:
        name = "runbook" if row["content"].startswith("# Runbook") else "adr"
        refs[name] = row["provider_ref"]
    assert sorted(refs) == ["adr", "runbook"] and len(results) == 2
    return refs


def test_feedback_counts_from_a_receipt_with_several_rejection_reasons(dcx, example: Path) -> None:
    root = example
    assert dcx("-C", str(root), "index").exit_code == 0
    stale_runbook(root)
    refs = _recall_refs(dcx, root)
    rebase = {
        "recalled_claims": [
            # dcx judges these two by exact read: the edited runbook is stale, the ADR holds
            {"claim_id": "runbook-rule", "summary": "Roll back above 400 ms", "provider_ref": refs["runbook"]},
            {"claim_id": "adr-traffic", "summary": "Origin traffic rises", "provider_ref": refs["adr"]},
            # cites a result no recall of this run returned: demoted recall_not_reproduced
            {"claim_id": "ghost", "summary": "Something recalled last week", "provider_ref": GHOST},
        ],
        "stale_or_rejected_claims": [
            {
                "claim_id": "runbook-again",
                "summary": "The runbook chunk, doubted twice",
                "provider_ref": refs["runbook"],
                "reason_code": "unverifiable_recall",
            },
            {  # a doubt about a result that another claim got accepted: not a rejected result
                "claim_id": "adr-doubt",
                "summary": "The ADR may be superseded",
                "provider_ref": refs["adr"],
                "reason_code": "superseded_by_owner",
            },
            {  # a record that cites no provider result at all
                "claim_id": "hearsay",
                "summary": "Someone said the TTL moved",
                "reason_code": "superseded_by_owner",
            },
        ],
    }  # fmt: skip
    prepared = dcx(
        "-C", str(root), "prepare", "--decision-id", D, "--rebase",
        str(write_json(root / "rebase.json", rebase)),
        "--query", QUERY, "--query-summary", QUERY_SUMMARY, "--format", "json",
    )  # fmt: skip
    assert prepared.exit_code == 0, prepared.stdout + prepared.stderr
    evidence = prepared.json()["data"]["assembly"]["evidence"]
    judged = {c["claim_id"]: c["reason_code"] for c in evidence["stale_or_rejected_claims"]}
    assert judged["runbook-rule"] == "stale_authority_revision"  # the exact read's own verdict
    assert [c["claim_id"] for c in evidence["recalled_claims"]] == ["adr-traffic"]

    propose = dcx(
        "-C",
        str(root),
        "propose",
        "--decision-id",
        D,
        "--from",
        str(write_json(root / "p.json", PROPOSAL)),
    )
    assert propose.exit_code == 0, propose.stderr
    outcome_body = verified_outcome(evidence["packet_ref"])
    outcome = dcx(
        "-C",
        str(root),
        "outcome",
        "--decision-id",
        D,
        "--from",
        str(write_json(root / "o.json", outcome_body)),
    )
    assert outcome.exit_code == 0, outcome.stderr
    result = dcx("-C", str(root), "feedback", "--decision-id", D, "--format", "json")
    assert result.exit_code == 0, result.stdout + result.stderr
    packet = result.json()["data"]["feedback"]
    assert (
        packet["retrieval_ref"] == prepared.json()["data"]["assembly"]["retrieval"]["retrieval_ref"]
    )
    telemetry = packet["telemetry"]
    assert {k: telemetry[k] for k in EXPECTED} == EXPECTED, json.dumps(telemetry, indent=1)


EXPECTED = {
    "count_mode": "retrieval_receipt",
    "retrieval_status": "completed",
    "provider_result_count": 2,  # the receipt's results: the runbook chunk and the ADR
    "accepted_claim_count": 1,  # adr-traffic
    # aggregate records: runbook-rule, ghost, runbook-again, adr-doubt, hearsay
    "stale_or_rejected_claim_count": 5,
    "rejected_by_exact_read_count": 4,  # the records that cite a provider result (not hearsay)
    "rejection_reason_counts": {
        "recall_not_reproduced": 1,
        "stale_authority_revision": 1,
        "superseded_by_owner": 2,
        "unverifiable_recall": 1,
    },
    "provider_health_counts": {
        "completed": 1,
        "partial": 0,
        "unavailable": 0,
        "unavailable_by_reason": {},
    },
    # the actual provider results: only the runbook chunk was rejected (twice, counted once); the
    # ADR was accepted despite a doubt; the ghost is no result of this receipt
    "rejected_provider_result_count": 1,
    "unjudged_provider_result_count": 0,
}


def test_without_a_receipt_only_the_aggregate_records_are_counted() -> None:
    """No recall ran: the record counts stand alone; results need a receipt to be counted."""
    from dcx.ops.feedback import evaluate

    stale = [
        {"claim_id": "a", "reason_code": "stale_authority_revision", "provider_ref": GHOST},
        {"claim_id": "b", "reason_code": "stale_authority_revision"},
        {"claim_id": "c", "reason_code": "unverifiable_recall", "provider_ref": GHOST},
    ]
    ev = {
        "packet_ref": "decision-evidence-" + "0" * 32,
        "decision_id": D,
        "recalled_claims": [],
        "stale_or_rejected_claims": stale,
        "conflicts": [],
        "source_revisions": [],
        "changed_facts": [],
    }
    out = {
        "packet_ref": "decision-outcome-" + "0" * 32,
        "observed_outcomes": [],
        "invalidated_assumptions": [],
        "verification_status": "pending",
        "reward_memory_candidate_eligible": False,
    }
    telemetry = evaluate(ev, out, None)["telemetry"]
    assert telemetry["rejection_reason_counts"] == {
        "stale_authority_revision": 2,
        "unverifiable_recall": 1,
    }
    assert telemetry["provider_health_counts"] == {
        "completed": 0,
        "partial": 0,
        "unavailable": 0,
        "unavailable_by_reason": {},
    }
    assert "rejected_provider_result_count" not in telemetry
    assert "unjudged_provider_result_count" not in telemetry
    # an unavailable receipt with dropped nothing: unavailable by its reason, no results judged
    receipt = {
        "status": "unavailable",
        "reason_code": "index_missing",
        "result_count": 0,
        "results": [],
        "telemetry": {"items_dropped": 0},
    }
    got = evaluate(ev, out, receipt)["telemetry"]
    assert got["provider_health_counts"] == {
        "completed": 0,
        "partial": 0,
        "unavailable": 1,
        "unavailable_by_reason": {"index_missing": 1},
    }
    assert (got["rejected_provider_result_count"], got["unjudged_provider_result_count"]) == (0, 0)
    # a completed receipt that dropped items is partial; a result nobody cites is unjudged
    receipt = {
        "status": "completed",
        "reason_code": None,
        "result_count": 2,
        "results": [{"provider_ref": GHOST}, {"provider_ref": "provider-" + "f" * 32}],
        "telemetry": {"items_dropped": 3},
    }
    got = evaluate(ev, out, receipt)["telemetry"]
    assert got["provider_health_counts"]["partial"] == 1
    assert (got["rejected_provider_result_count"], got["unjudged_provider_result_count"]) == (1, 1)
