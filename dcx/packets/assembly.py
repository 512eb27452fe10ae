"""``decision_context_assembly_v0``: one prepare run, whole (SPEC §8.2).

Embeds the manifest, every scan receipt, coverage, freshness, the retrieval
receipt (when recall ran), the evidence packet, the semantic rebase receipt
and the cursor checkpoint — each keeping its own ref, each also stored on its
own — so a reviewer reads one file and commit verifies one chain.
"""

from __future__ import annotations

from dcx.core.envelope import Nested, NestedList
from dcx.core.fields import Bool, Enum, Timestamp, Token
from dcx.packets import (
    checkpoint,
    coverage,
    declare,
    evidence,
    freshness,
    manifest,
    rebase,
    retrieval,
    scan,
)

SPEC = declare(
    "assembly",
    decision_scoped=True,
    doc="One prepare run: sources scanned, recall, evidence, rebase and cursor checkpoint.",
    fields={
        "observed_at": Timestamp(),
        "agent_id": Token(),
        "mode": Enum(values=rebase.MODES),
        "preview": Bool(),
        "coverage_status": Enum(values=("complete", "partial")),
        "manifest": Nested(spec=manifest.SPEC),
        "scan_receipts": NestedList(spec=scan.SPEC),
        "coverage": Nested(spec=coverage.SPEC),
        "freshness": Nested(spec=freshness.SPEC),
        "retrieval": Nested(spec=retrieval.SPEC, optional=True),
        "evidence": Nested(spec=evidence.SPEC),
        "rebase": Nested(spec=rebase.SPEC),
        "checkpoint": Nested(spec=checkpoint.SPEC),
    },
)
