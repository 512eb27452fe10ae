"""verify catches a packet rewritten with a recomputed ref that breaks its own rules."""

from __future__ import annotations

import json
import os
from pathlib import Path

from dcx.core.canonical import packet_ref, pretty_bytes
from tests.support.cycle import prepared


def _rewrite(path: Path, mutate, prefix: str, ref_field: str) -> None:
    """Edit a packet and store it under its recomputed ref, as a forger would."""
    body = json.loads(path.read_text())
    mutate(body)
    body[ref_field] = packet_ref(prefix, body, ref_field)
    os.chmod(path, 0o644)
    path.unlink()
    (path.parent / f"{body[ref_field]}.json").write_bytes(pretty_bytes(body))


def test_forged_assembly_checkpoint_is_found(dcx, example: Path) -> None:
    prepared(dcx, example)
    assert dcx("-C", str(example), "verify").exit_code == 0
    path = next((example / ".decision-context" / "packets" / "assembly").glob("*.json"))

    checkpoints = example / ".decision-context" / "packets" / "checkpoint"

    def force_reason(body):  # a different reason than the receipts and rebase give
        checkpoint = body["checkpoint"]
        for row in checkpoint["rows"]:
            row["reason_code"] = "semantic_no_change"
        checkpoint["checkpoint_ref"] = packet_ref(
            "decision-cursor-checkpoint", checkpoint, "checkpoint_ref"
        )
        (checkpoints / f"{checkpoint['checkpoint_ref']}.json").write_bytes(pretty_bytes(checkpoint))

    _rewrite(path, force_reason, "decision-context-assembly", "assembly_ref")
    result = dcx("-C", str(example), "verify", "--format", "json")
    assert result.exit_code == 1
    assert any(
        "checkpoint does not follow" in p["problem"] for p in result.json()["data"]["problems"]
    )


def test_forged_evidence_without_source_revision_is_found(dcx, example: Path) -> None:
    prepared(dcx, example)
    path = next((example / ".decision-context" / "packets" / "evidence").glob("*.json"))
    _rewrite(path, lambda body: body.update(source_revisions=[]), "decision-evidence", "packet_ref")
    problems = dcx("-C", str(example), "verify", "--format", "json").json()["data"]["problems"]
    assert any("source_revisions do not list" in p["problem"] for p in problems)
