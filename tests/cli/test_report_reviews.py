"""`dcx report` measures review receipts (SPEC §10, §13; docs/report.md#reviews).

Real settlements written by dcx itself: the example decision is indexed,
prepared and proposed once per module (at the fixed clock, 18:00:00), then in
a copy a person gates it 90 minutes later (approve, reject or defer) and
`dcx review` settles it. The expected measures are derived by hand from those
steps: one receipt, its disposition, 5400 s from the proposal to the gate's
recorded_at, an outcome due only after an approve and until an outcome
receipt with observed outcomes, and the approve/verified pairing.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import Runner
from tests.support.cycle import QUERY, QUERY_SUMMARY, D, stale_runbook
from tests.support.workspace import copy_example

OWNER = "storefront-platform-lead"
GATED_AT = "2026-11-29T19:30:00Z"  # FIXED_NOW (the proposal's observed_at) + 5400 s


@pytest.fixture(scope="module")
def _proposed(tmp_path_factory) -> Path:
    root = copy_example(tmp_path_factory.mktemp("report-review") / "example")
    profile = root / ".decision-context/profile.toml"
    head = profile.read_text().split("\n[commit]")[0]
    profile.write_text(f"{head}\n[commit]\nallow_self_confirmation = false\n")
    dcx = Runner(root, {"HOME": str(root.parent)})
    dcx("index")
    stale_runbook(root)
    dcx(
        "prepare",
        "--decision-id",
        D,
        "--auto-rebase",
        "--query",
        QUERY,
        "--query-summary",
        QUERY_SUMMARY,
    )
    dcx("propose", "--decision-id", D, "--from", str(root / "proposal.json"))
    return root


@pytest.fixture
def ws(_proposed: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "example"
    shutil.copytree(_proposed, dest, symlinks=True)
    return dest


def settle(root: Path, flag: str) -> None:
    later = Runner(root, {"DCX_NOW": GATED_AT})
    gate = later.json(
        "gate", "--decision-id", D, flag, "--by", OWNER, "--summary", "The owner decided"
    )
    event = gate["data"]["event"]["event_id"]
    Runner(root).json("review", "--decision-id", D, "--gate-event", event)


def measured(root: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    data = Runner(root).json("report")["data"]
    (row,) = [r for r in data["decisions"] if r["decision_id"] == D]
    return row["review"], data["totals"]["reviews"]


def test_no_review_yet(ws: Path) -> None:
    row, totals = measured(ws)
    assert row == {
        "receipts": 0,
        "dispositions": {"approve": 0, "reject": 0, "defer": 0, "no_change": 0},
        "approved": False,
        "disposition": None,
        "settled_at": None,
        "proposal_reviewed": False,
        "time_to_review_seconds": None,
        "outcome_due": False,
    }
    assert totals["receipts"] == 0 and totals["decisions_reviewed"] == 0
    assert totals["by_disposition"] == {"approve": 0, "reject": 0, "defer": 0, "no_change": 0}
    assert totals["time_to_review_seconds"] == {
        "count": 0,
        "median": None,
        "min": None,
        "max": None,
    }


@pytest.mark.parametrize(
    "flag, disposition, due",
    [("--approve", "approve", True), ("--reject", "reject", False), ("--defer", "defer", False)],
)
def test_a_settled_decision(ws: Path, flag: str, disposition: str, due: bool) -> None:
    settle(ws, flag)
    row, totals = measured(ws)
    assert row == {
        "receipts": 1,
        "dispositions": {"approve": 0, "reject": 0, "defer": 0, "no_change": 0, disposition: 1},
        "approved": disposition == "approve",
        "disposition": disposition,
        "settled_at": GATED_AT,
        "proposal_reviewed": True,
        "time_to_review_seconds": 5400,
        "outcome_due": due,
    }
    assert totals["receipts"] == 1 and totals["decisions_reviewed"] == 1
    assert totals["by_disposition"] == {
        "approve": 0,
        "reject": 0,
        "defer": 0,
        "no_change": 0,
        disposition: 1,
    }
    assert totals["outcome_due"] == int(due)
    assert totals["approved_verified"] == 0 and totals["approved_refuted"] == 0
    assert totals["time_to_review_seconds"] == {
        "count": 1,
        "median": 5400,
        "min": 5400,
        "max": 5400,
    }
    report = Runner(ws).json("report")
    assert (
        report["data"]["goals"][0]["other_packets"].get("review") is None
    )  # measured, not merely counted
    assert report["status"] == "ok"


@pytest.mark.parametrize("status", ["verified", "refuted"])
def test_an_approved_decision_and_its_observed_outcome(ws: Path, status: str) -> None:
    settle(ws, "--approve")
    outcome = json.loads((ws / "outcome.json").read_text())
    outcome["observed_outcomes"] = [
        {
            "outcome_id": "metric-check",
            "summary": "The metric was checked",
            "evidence_ref": "dashboard-1",
            "status": status,
            "observed_at": "2026-11-30T18:00:00Z",
        }
    ]
    outcome["verification_status"] = status
    (ws / "observed.json").write_text(json.dumps(outcome))
    Runner(ws).json("outcome", "--decision-id", D, "--from", str(ws / "observed.json"))
    row, totals = measured(ws)
    assert row["outcome_due"] is False  # the receipt carries observed outcomes
    assert totals["outcome_due"] == 0
    assert (totals["approved_verified"], totals["approved_refuted"]) == (
        (1, 0) if status == "verified" else (0, 1)
    )


def test_a_tampered_review_receipt_is_left_out_and_named(ws: Path) -> None:
    settle(ws, "--approve")
    (path,) = (ws / ".decision-context/packets/review").glob("*.json")
    path.chmod(0o644)
    path.write_text(path.read_text().replace("The owner decided", "The owner decided!"))
    report = Runner(ws).json("report")
    assert report["status"] == "partial"
    assert [r["ref"] for r in report["data"]["left_out"]] == [path.stem]
    assert report["data"]["totals"]["reviews"]["receipts"] == 0
