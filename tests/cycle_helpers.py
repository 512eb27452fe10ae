"""Helpers for decision-cycle tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
PROPOSAL = json.loads((REPO / "fixtures" / "cycle" / "proposal.json").read_text())
OUTCOME = json.loads((REPO / "fixtures" / "cycle" / "outcome.json").read_text())


def write_json(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value))
    return path


def verified_outcome(evidence_ref: str) -> dict[str, Any]:
    body = json.loads(json.dumps(OUTCOME))
    body["verification_status"] = "verified"
    body["observed_outcomes"] = [
        {"outcome_id": "p99-held", "summary": "Origin p99 stayed under 400 ms for a week",
         "evidence_ref": evidence_ref, "status": "verified", "observed_at": "2026-12-06T18:00:00Z"}
    ]
    return body


def seed_evidence(root: Path, decision_id: str, observed_at: str = "2026-11-29T18:00:00Z",
                  **records: Any) -> str:
    """Store a minimal evidence packet and index it, as prepare would (for units that follow it)."""
    from dcx.core.workspace import Workspace
    from dcx.ops._common import packet_context
    from dcx.packets import evidence
    from dcx.state import decisions
    from dcx.state.store import Store

    ws = Workspace(root)
    packet = Store(ws).put(
        evidence.SPEC,
        packet_context(ws, decision_id),
        {
            "observed_at": observed_at,
            "visibility": "public_safe",
            "changed_facts": [],
            "recalled_claims": [],
            "stale_or_rejected_claims": [],
            "conflicts": [],
            "source_revisions": [],
            "provider_health": [],
            **records,
        },
    )
    decisions.append(ws, decision_id, "evidence", packet["packet_ref"], observed_at)
    return packet["packet_ref"]
