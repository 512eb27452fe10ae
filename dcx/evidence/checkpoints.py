"""Cursor checkpoint dispositions (SPEC §8.2): one pure rule, used by prepare
to decide and by commit to re-derive (``checkpoint_not_derivable``).

Per source, the first rule that applies:

0. a ``snapshot`` source is never committed → preserve / ``snapshot_not_committed``
1. no ``cursor_after_ref`` → preserve / ``cursor_after_missing``
2. scan ``no_change`` → ready / ``no_change``
3. scan not ``completed`` → preserve / ``scan_incomplete``
4. policy ``never`` → preserve / ``exact_read_disabled``
4b. a ``--baseline`` adoption → ready / ``baseline_adopted`` (a baseline reads
   nothing: it adopts the current state of a large source as a whole)
5. a transient exact-read failure → preserve / ``exact_read_incomplete``
6. semantic no change → ready / ``semantic_no_change``
7. an item no fact, claim or conflict cites → preserve / ``rebase_incomplete``
8. else ready_after_writeback / ``validated_rebase``

Rules 0 and 4b are dcx's reading of SPEC §5.1/§8.2 ("snapshot ... is never
committed"; "--baseline ... absorbing every item"), written down in
docs/decision-cycle.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from dcx.core.vocab import READ_TERMINAL, policy_reads

READY = "ready_after_writeback"
PRESERVE = "preserve"
# Exact-read outcomes that end the matter: recorded and absorbable (SPEC §5.3).
TERMINAL_KINDS = frozenset(READ_TERMINAL)


def read_required(policy: str, change: Mapping[str, Any]) -> bool:
    return policy_reads(policy, deleted=change.get("content_kind") == "deleted")


def read_incomplete(policy: str, change: Mapping[str, Any]) -> bool:
    """A required read that neither verified nor reached a terminal outcome."""
    if not read_required(policy, change):
        return False
    return (
        not change.get("exact_read_verified") and change.get("content_kind") not in TERMINAL_KINDS
    )


def disposition(
    receipt: Mapping[str, Any],
    policy: str,
    *,
    semantic_no_change: bool,
    baseline: bool,
    cited: set[str],
    snapshot: bool = False,
) -> tuple[str, str]:
    if snapshot:
        return PRESERVE, "snapshot_not_committed"
    if not receipt.get("cursor_after_ref"):
        return PRESERVE, "cursor_after_missing"
    status = receipt.get("status")
    if status == "no_change":
        return READY, "no_change"
    if status != "completed":
        return PRESERVE, "scan_incomplete"
    if policy == "never":
        return PRESERVE, "exact_read_disabled"
    if baseline:
        return READY, "baseline_adopted"
    changes = receipt.get("changes", [])
    if any(read_incomplete(policy, change) for change in changes):
        return PRESERVE, "exact_read_incomplete"
    if semantic_no_change:
        return READY, "semantic_no_change"
    if any(change["change_ref"] not in cited for change in changes):
        return PRESERVE, "rebase_incomplete"
    return READY, "validated_rebase"


def cited_change_refs(evidence: Mapping[str, Any]) -> set[str]:
    """Every change ref a fact, claim or conflict of the evidence cites."""
    cited: set[str] = set()
    for key in ("changed_facts", "recalled_claims", "stale_or_rejected_claims"):
        for record in evidence.get(key, []):
            if record.get("source_ref"):
                cited.add(record["source_ref"])
    for conflict in evidence.get("conflicts", []):
        cited.update(conflict.get("source_refs", []))
    return cited


def derive_rows(
    receipts: Iterable[Mapping[str, Any]],
    manifest_rows: Mapping[str, Mapping[str, Any]],
    evidence: Mapping[str, Any],
    rebase: Mapping[str, Any],
) -> list[dict[str, Any]]:
    """The checkpoint rows of an assembly, recomputed from what it embeds
    (``manifest_rows``: the manifest's source rows by source id)."""
    cited = cited_change_refs(evidence)
    rows = []
    for receipt in receipts:
        source_id = receipt["source_id"]
        source = manifest_rows[source_id]
        kind, reason = disposition(
            receipt,
            source["exact_read_policy"],
            semantic_no_change=bool(rebase.get("semantic_no_change")),
            baseline=rebase.get("mode") == "baseline",
            cited=cited,
            snapshot=source["scan_mode"] == "snapshot",
        )
        row = {
            "source_id": source_id,
            "scan_receipt_ref": receipt["receipt_ref"],
            "cursor_before_ref": receipt["cursor_before_ref"],
            "cursor_after_ref": receipt.get("cursor_after_ref"),
            "disposition": kind,
            "reason_code": reason,
        }
        rows.append({k: v for k, v in row.items() if v is not None})
    return rows
