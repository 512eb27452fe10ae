from __future__ import annotations

import json
import os
from pathlib import Path

from tests.support.cycle import OUTCOME, PROPOSAL, seed_evidence, verified_outcome, write_json

D = "ttl-2026-12"
T = "2026-11-29T18:00:00Z"
CHANGE = "source-change-" + "a" * 32
REVISION = "source-revision-" + "b" * 32
PROVIDER = "provider-" + "c" * 32


def _claims(conflict_status: str | None = None) -> dict:
    records = {
        "recalled_claims": [
            {
                "claim_id": "rollback-threshold",
                "summary": "Roll back above 400 ms p99",
                "provider_ref": PROVIDER,
                "source_ref": CHANGE,
                "source_revision": REVISION,
                "observed_at": T,
                "exact_read_verified": True,
            }
        ],
        "stale_or_rejected_claims": [
            {
                "claim_id": "old-ttl",
                "summary": "The TTL is 900 s",
                "provider_ref": "provider-" + "d" * 32,
                "observed_at": T,
                "reason_code": "stale_authority_revision",
            }
        ],
        "source_revisions": [
            {
                "source_ref": CHANGE,
                "revision": REVISION,
                "observed_at": T,
                "freshness": "current",
                "changed": False,
            }
        ],
    }
    if conflict_status:
        records["conflicts"] = [
            {
                "conflict_id": "ttl-owner",
                "summary": "Two owners disagree",
                "source_refs": [CHANGE],
                "conflict_rule": "canonical_revision_wins",
                "status": conflict_status,
            }
        ]
    return records


def _cycle(dcx, root: Path, outcome_body_for) -> str:
    evidence_ref = seed_evidence(root, D, **_claims())
    dcx(
        "-C",
        str(root),
        "propose",
        "--decision-id",
        D,
        "--from",
        str(write_json(root / "p.json", PROPOSAL)),
    )
    body = outcome_body_for(evidence_ref)
    result = dcx(
        "-C",
        str(root),
        "outcome",
        "--decision-id",
        D,
        "--from",
        str(write_json(root / "o.json", body)),
    )
    assert result.exit_code == 0, result.stderr
    return evidence_ref


def test_pending_outcome_lists_sorted_reasons(dcx, example: Path) -> None:
    _cycle(dcx, example, lambda ref: OUTCOME)
    result = dcx("-C", str(example), "feedback", "--decision-id", D, "--format", "json")
    assert result.exit_code == 0, result.stdout
    packet = result.json()["data"]["feedback"]
    assert packet["candidate_emitted"] is False and "candidate" not in packet
    assert packet["ineligible_reasons"] == [
        "outcome_not_candidate_eligible",
        "outcome_not_verified",
        "verified_outcome_not_linked_to_evidence",
    ]
    assert packet["telemetry"]["count_mode"] == "evidence_records"
    assert packet["telemetry"]["rejected_by_exact_read_count"] == 1


def test_verified_linked_outcome_emits_one_candidate(dcx, example: Path, snapshot_json) -> None:
    evidence_ref = _cycle(dcx, example, verified_outcome)
    result = dcx("-C", str(example), "feedback", "--decision-id", D, "--format", "json")
    packet = result.json()["data"]["feedback"]
    assert packet["candidate_emitted"] is True and packet["ineligible_reasons"] == []
    candidate = packet["candidate"]
    assert candidate["candidate_kind"] == "procedural_experience"
    assert candidate["ingested"] is False and candidate["activated"] is False
    assert candidate["evidence_packet_ref"] == evidence_ref and candidate["claim_ids"] == [
        "rollback-threshold"
    ]
    assert packet == snapshot_json


def test_unlinked_verified_outcome_is_not_a_candidate(dcx, example: Path) -> None:
    _cycle(dcx, example, lambda ref: verified_outcome("decision-evidence-" + "0" * 32))
    packet = dcx("-C", str(example), "feedback", "--decision-id", D, "--format", "json").json()[
        "data"
    ]["feedback"]
    assert packet["ineligible_reasons"] == ["verified_outcome_not_linked_to_evidence"]


def test_open_conflict_blocks_candidate() -> None:
    from dcx.ops.feedback import evaluate

    base = {
        "packet_ref": "decision-evidence-" + "1" * 32,
        "decision_id": D,
        "changed_facts": [],
        "conflicts": [],
        "recalled_claims": [],
        "stale_or_rejected_claims": [],
        "source_revisions": [],
    }
    ev = {**base, **_claims("open")}
    out = {
        **verified_outcome(ev["packet_ref"]),
        "packet_ref": "decision-outcome-" + "2" * 32,
        "reward_memory_candidate_eligible": True,
    }
    assert evaluate(ev, out, None)["ineligible_reasons"] == ["unresolved_authority_conflict"]
    ev_resolved = {**base, **_claims("resolved")}
    assert evaluate(ev_resolved, out, None)["candidate"] is not None
    no_current = {**ev_resolved, "source_revisions": []}
    assert evaluate(no_current, out, None)["ineligible_reasons"] == ["no_current_source_revision"]
    no_claim = {**ev_resolved, "recalled_claims": []}
    assert evaluate(no_claim, out, None)["ineligible_reasons"] == ["no_exact_read_promoted_claim"]


def test_tampered_evidence_is_refused_as_not_canonical(dcx, example: Path) -> None:
    evidence_ref = _cycle(dcx, example, verified_outcome)
    path = example / ".decision-context" / "packets" / "evidence" / f"{evidence_ref}.json"
    os.chmod(path, 0o644)
    body = json.loads(path.read_text())
    body["recalled_claims"][0]["summary"] = "Roll back above 900 ms p99"
    path.write_text(json.dumps(body, indent=2, sort_keys=True) + "\n")
    result = dcx("-C", str(example), "feedback", "--decision-id", D)
    assert result.exit_code == 1 and "does not match the content" in result.stderr
    assert not list((example / ".decision-context" / "packets").glob("feedback/*.json"))
