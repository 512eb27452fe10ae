"""Public writers refuse this workspace's private values (SPEC §3.4 v3, issue 12 §2-3).

The list is the one `dcx audit` uses (dcx/state/privacy.py): here, an indexed file
path behind a minted ref, the goal root's path and a resolved locator.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import Runner
from tests.support.cycle import D


@pytest.mark.parametrize(
    "summary",
    [
        "rolled back per docs/runbook-ttl-rollback.md",  # an indexed path (relative, as a reviewer would write it)
        "see runbook-ttl-rollback.md",  # the path as the ref map records it
    ],
)
def test_writeback_refuses_an_indexed_path(cycled: Path, summary: str) -> None:
    result = Runner(cycled)(
        "writeback",
        "--decision-id",
        D,
        "--kind",
        "validation",
        "--summary",
        summary,
        "--format",
        "json",
        ok=False,
    )
    error = json.loads(result.stdout)["error"]
    assert result.exit_code == 2 and error["field"] == "--summary"
    assert "private value" in error["message"] and "runbook" not in error["message"]


def test_the_resolved_locator_is_refused_and_prose_passes(cycled: Path) -> None:
    dcx = Runner(cycled)
    locator = str((cycled / "docs").resolve())
    refused = dcx(
        "writeback",
        "--decision-id",
        D,
        "--kind",
        "validation",
        "--summary",
        f"copied {locator}",
        ok=False,
    )
    assert refused.exit_code == 2
    fine = dcx(
        "writeback",
        "--decision-id",
        D,
        "--kind",
        "validation",
        "--summary",
        "the runbook says roll back",
    )
    assert fine.exit_code == 0


def test_audit_finds_a_private_value_a_merge_brought_in(cycled: Path) -> None:
    """A packet that holds an indexed path still reads back (verify passes); audit names it."""
    from dcx.core.canonical import packet_ref, pretty_bytes

    folder = cycled / ".decision-context" / "packets" / "proposal"
    packet = json.loads(next(folder.glob("*.json")).read_text())
    packet.pop("packet_ref")
    packet["recommended_decision"]["rationale"] = "as runbook-ttl-rollback.md says"
    ref = packet_ref("decision-proposal", packet, "packet_ref")
    packet["packet_ref"] = ref
    (folder / f"{ref}.json").write_bytes(pretty_bytes(packet))
    dcx = Runner(cycled)
    assert dcx("show", ref).exit_code == 0
    audit = dcx("audit", "--format", "json", ok=False)
    findings = json.loads(audit.stdout)["data"]["findings"]
    assert audit.exit_code == 1
    assert {
        "file": f".decision-context/packets/proposal/{ref}.json",
        "field": "recommended_decision.rationale",
        "problem": "private value behind an opaque ref",
    } in findings
    assert "runbook-ttl-rollback.md" not in audit.stdout
