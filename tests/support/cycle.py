"""The example's decision stories, built the way a user would, and the inputs they use.

The cycle (the story of `make demo`): `dcx index`; an authority edit after indexing, so one
recalled claim goes stale (``stale_runbook``); `prepare --auto-rebase` with a query; propose and
outcome from the example's own JSON files; writeback; commit; feedback. Fixed clock and key
(``tests.support.workspace``), so every ref, and so every snapshot, is reproducible.

- ``prepared`` / ``through_writeback``: the first steps through a test's ``dcx`` fixture.
- ``run_cycle`` / ``run_review_cycle``: the whole story (plain, or gated by a person's approval);
  ``tests/conftest.py`` builds each once per session (the ``cycled`` and ``reviewed`` fixtures).
- ``PROPOSAL`` / ``OUTCOME`` / ``verified_outcome`` / ``seed_evidence``: inputs for the units that
  follow prepare.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tests.support.cli import Runner
from tests.support.workspace import REPO

D = "ttl-2026-12"
QUERY = "when do we roll back the catalog cache TTL change origin p99 latency"
QUERY_SUMMARY = "TTL rollback criteria"
RUNBOOK = Path("docs") / "runbook-ttl-rollback.md"
OWNER = "storefront-platform-lead"
PROPOSAL = json.loads((REPO / "fixtures" / "cycle" / "proposal.json").read_text())
OUTCOME = json.loads((REPO / "fixtures" / "cycle" / "outcome.json").read_text())


def stale_runbook(root: Path) -> None:
    """The authority moves after indexing: the rollback threshold changes."""
    path = root / RUNBOOK
    path.write_text(path.read_text().replace("stays above 400 ms", "stays above 350 ms"))


def write_json(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value))
    return path


def verified_outcome(evidence_ref: str) -> dict[str, Any]:
    body = json.loads(json.dumps(OUTCOME))
    body["verification_status"] = "verified"
    body["observed_outcomes"] = [
        {
            "outcome_id": "p99-held",
            "summary": "Origin p99 stayed under 400 ms for a week",
            "evidence_ref": evidence_ref,
            "status": "verified",
            "observed_at": "2026-12-06T18:00:00Z",
        }
    ]
    return body


def seed_evidence(
    root: Path, decision_id: str, observed_at: str = "2026-11-29T18:00:00Z", **records: Any
) -> str:
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


# -- through a test's `dcx` fixture -------------------------------------------


def prepared(dcx, root: Path, *extra: str, query: bool = True) -> dict[str, Any]:
    assert dcx("-C", str(root), "index").exit_code == 0
    stale_runbook(root)
    args = [
        "-C",
        str(root),
        "prepare",
        "--decision-id",
        D,
        "--auto-rebase",
        "--format",
        "json",
        *extra,
    ]
    if query:
        args += ["--query", QUERY, "--query-summary", QUERY_SUMMARY]
    result = dcx(*args)
    assert result.exit_code == 0, result.stdout + result.stderr
    return result.json()["data"]


def through_writeback(dcx, root: Path) -> str:
    for verb, name in (("propose", "proposal.json"), ("outcome", "outcome.json")):
        result = dcx("-C", str(root), verb, "--decision-id", D, "--from", str(root / name))
        assert result.exit_code == 0, result.stderr
    event = dcx(
        "-C",
        str(root),
        "writeback",
        "--decision-id",
        D,
        "--kind",
        "validation",
        "--summary",
        "TTL kept at 90 s",
        "--format",
        "json",
    )
    return event.json()["data"]["event"]["event_id"]


# -- whole stories --------------------------------------------------------------


def run_cycle(
    root: Path,
    decision_id: str = D,
    *,
    edit_authority: bool = True,
    env: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """One full cycle on ``root``; returns the refs and the event id by kind."""
    dcx = Runner(root, env)
    dcx("index")
    if edit_authority:
        stale_runbook(root)
    prepared = dcx.json(
        "prepare",
        "--decision-id",
        decision_id,
        "--auto-rebase",
        "--query",
        QUERY,
        "--query-summary",
        QUERY_SUMMARY,
    )["data"]["assembly"]
    proposal = dcx.json(
        "propose", "--decision-id", decision_id, "--from", str(root / "proposal.json")
    )
    outcome = dcx.json(
        "outcome", "--decision-id", decision_id, "--from", str(root / "outcome.json")
    )
    event = dcx.json(
        "writeback",
        "--decision-id",
        decision_id,
        "--kind",
        "validation",
        "--summary",
        "TTL kept at 90 s",
    )["data"]["event"]
    commit = dcx.json("commit", "--decision-id", decision_id, "--event-id", event["event_id"])
    feedback = dcx.json("feedback", "--decision-id", decision_id)
    return {
        "assembly": prepared["assembly_ref"],
        "evidence": prepared["evidence"]["packet_ref"],
        "proposal": proposal["data"]["proposal"]["packet_ref"],
        "outcome": outcome["data"]["outcome"]["packet_ref"],
        "event": event["event_id"],
        "commit": commit["data"]["receipt"]["receipt_ref"],
        "feedback": feedback["data"]["feedback"]["feedback_ref"],
    }


def run_review_cycle(
    root: Path, decision_id: str = D, *, env: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The gated story on ``root``: prepare, propose, a person's approve gate, review (which
    commits), then an observed outcome and feedback. Every packet kind is stored once."""
    dcx = Runner(root, env)
    dcx("index")
    stale_runbook(root)
    prepared = dcx.json(
        "prepare",
        "--decision-id",
        decision_id,
        "--auto-rebase",
        "--query",
        QUERY,
        "--query-summary",
        QUERY_SUMMARY,
    )["data"]["assembly"]
    evidence_ref = prepared["evidence"]["packet_ref"]
    proposal = dcx.json(
        "propose", "--decision-id", decision_id, "--from", str(root / "proposal.json")
    )
    gate = dcx.json(
        "gate",
        "--decision-id",
        decision_id,
        "--approve",
        "--by",
        OWNER,
        "--summary",
        "Keep the 90 s TTL; watch origin p99",
    )["data"]["event"]
    settled = dcx.json("review", "--decision-id", decision_id, "--gate-event", gate["event_id"])[
        "data"
    ]
    observed = root / "outcome-observed.json"
    observed.write_text(json.dumps(verified_outcome(evidence_ref)))
    outcome = dcx.json("outcome", "--decision-id", decision_id, "--from", str(observed))
    feedback = dcx.json("feedback", "--decision-id", decision_id)
    return {
        "assembly": prepared["assembly_ref"],
        "evidence": evidence_ref,
        "proposal": proposal["data"]["proposal"]["packet_ref"],
        "gate": gate["event_id"],
        "review": settled["review"]["packet_ref"],
        "event": settled["event"]["event_id"],
        "commit": settled["commit"]["receipt_ref"],
        "outcome": outcome["data"]["outcome"]["packet_ref"],
        "feedback": feedback["data"]["feedback"]["feedback_ref"],
    }
