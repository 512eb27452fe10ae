"""Packet families. ``KINDS`` is the SPEC §3.1 table, the one declaration of each kind's
identity (folder, schema token, ref prefix, ref field); each module's ``SPEC`` is made from
its row by ``declare``. Specs load lazily by kind (the store resolves a ref's prefix without
importing every family)."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from dcx.core.envelope import PacketSpec


class Kind(NamedTuple):
    folder: str
    schema_version: str
    prefix: str
    ref_field: str
    module: str  # dcx.packets.<module> defines SPEC


KINDS: dict[str, Kind] = {
    k.folder: k
    for k in (
        Kind(
            "manifest",
            "decision_source_manifest_v0",
            "decision-source-manifest",
            "manifest_ref",
            "manifest",
        ),
        Kind(
            "scan", "decision_source_scan_receipt_v0", "decision-source-scan", "receipt_ref", "scan"
        ),
        Kind(
            "coverage",
            "decision_source_coverage_v0",
            "decision-source-coverage",
            "coverage_ref",
            "coverage",
        ),
        Kind(
            "freshness",
            "decision_source_freshness_v0",
            "decision-source-freshness",
            "freshness_ref",
            "freshness",
        ),
        Kind(
            "retrieval",
            "context_provider_retrieval_v0",
            "context-retrieval",
            "retrieval_ref",
            "retrieval",
        ),
        Kind(
            "rebase",
            "decision_semantic_rebase_receipt_v0",
            "decision-semantic-rebase",
            "rebase_ref",
            "rebase",
        ),
        Kind(
            "evidence", "decision_evidence_packet_v0", "decision-evidence", "packet_ref", "evidence"
        ),
        Kind(
            "checkpoint",
            "decision_cursor_checkpoint_v0",
            "decision-cursor-checkpoint",
            "checkpoint_ref",
            "checkpoint",
        ),
        Kind(
            "assembly",
            "decision_context_assembly_v0",
            "decision-context-assembly",
            "assembly_ref",
            "assembly",
        ),
        Kind("proposal", "decision_proposal_v0", "decision-proposal", "packet_ref", "proposal"),
        Kind("outcome", "decision_outcome_receipt_v0", "decision-outcome", "packet_ref", "outcome"),
        Kind(
            "commit",
            "decision_cursor_commit_receipt_v0",
            "decision-cursor-commit",
            "receipt_ref",
            "commit",
        ),
        Kind("review", "decision_review_receipt_v0", "decision-review", "packet_ref", "review"),
        Kind(
            "feedback",
            "decision_outcome_feedback_v0",
            "decision-feedback",
            "feedback_ref",
            "feedback",
        ),
    )
}

BY_PREFIX: dict[str, Kind] = {k.prefix: k for k in KINDS.values()}


def declare(kind: str, **rest: Any) -> PacketSpec:
    """The ``PacketSpec`` of ``kind``: its identity from ``KINDS``, its fields from the caller."""
    from dcx.core.envelope import PacketSpec

    row = KINDS[kind]
    return PacketSpec(
        kind=row.folder,
        schema_version=row.schema_version,
        prefix=row.prefix,
        ref_field=row.ref_field,
        **rest,
    )


def spec_for(kind: str) -> PacketSpec:
    """The PacketSpec of a kind folder (imports its module on first use)."""
    return import_module(f"dcx.packets.{KINDS[kind].module}").SPEC


def all_specs() -> dict[str, PacketSpec]:
    """The spec of every kind (imports every family)."""
    return {kind: spec_for(kind) for kind in KINDS}
