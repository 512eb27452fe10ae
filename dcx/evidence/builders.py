"""Builders: what the planes observed, turned into packet values (SPEC §5.4-§5.5, §6.2).

The packet modules (``dcx.packets``) declare fields and bounds only; these
functions fill them from a scan, its exact reads, the registry and a recall,
and ``SPEC.build`` adds the envelope and the ref. Each ``*_values`` function
returns the body; each ``build_*`` the validated packet (built, not stored).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from dcx.core.clock import normalise_ts, seconds_between
from dcx.core.envelope import PacketContext
from dcx.core.vocab import PRIORITIES, REQUIRED_PRIORITY
from dcx.packets import coverage as coverage_packet
from dcx.packets import freshness as freshness_packet
from dcx.packets import manifest as manifest_packet
from dcx.packets import retrieval as retrieval_packet
from dcx.packets import scan as scan_packet
from dcx.sources.plane import content_kind_after_read, read_complete
from dcx.state.profile import Registry

if TYPE_CHECKING:
    from dcx.providers.base import Retrieval
    from dcx.sources.base import ReadResult
    from dcx.sources.plane import SourceScan
    from dcx.state.refmap import RefMinter


# scan receipts (decision_source_scan_receipt_v0)


def scan_receipt_values(
    scan: SourceScan,
    reads: Mapping[str, ReadResult],
    minter: RefMinter,
    alerts: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The receipt's fields for one scan and the exact reads made of its items (by resource ref);
    ``alerts`` is the attempt's public alerts object (``Assessment.public()``), if any."""
    source_id = scan.source_id
    changes = []
    verified = 0
    for item in scan.items:
        read = reads.get(item.resource_ref)
        confirmed = read is not None and read.verified and read.revision == item.revision
        verified += confirmed
        changes.append(
            {
                "change_ref": minter.change_ref(source_id, item.resource_ref),
                "revision_ref": minter.revision_ref(source_id, item.resource_ref, item.revision),
                "observed_at": item.observed_at,
                "content_kind": content_kind_after_read(item, read),
                "exact_read_verified": confirmed,
            }
        )
    values: dict[str, Any] = {
        "provider_id": scan.provider_id,
        "source_id": source_id,
        "status": scan.status,
        "reason_code": scan.reason_code,
        "provider_version": scan.provider_version,
        "observed_at": scan.observed_at,
        "requested_limit": scan.requested_limit,
        "changed_count": len(changes),
        "exact_read_count": verified,
        "changes": changes,
        "cursor_before_ref": minter.cursor_ref(source_id, scan.cursor_before),
        "cursor_after_ref": minter.cursor_ref(source_id, scan.cursor_after)
        if scan.cursor_after
        else None,
        "telemetry": {
            "latency_ms": scan.latency_ms,
            "result_cap_applied": scan.telemetry.result_cap_applied,
            "skipped_outside_locator": scan.telemetry.skipped_outside_locator,
            "skipped_oversize": scan.telemetry.skipped_oversize,
            "adopted_unlisted_count": scan.telemetry.adopted_unlisted_count,
            "skipped_submodules": scan.telemetry.skipped_submodules,
            "skipped_symlinks": scan.telemetry.skipped_symlinks,
            "skipped_binary": scan.telemetry.skipped_binary,
        },
        "alerts": dict(alerts) if alerts else None,
        "provider_fail_open": True,
    }
    values.update({flag: False for flag in scan_packet.CAPTURE_FLAGS})
    return values


def build_scan_receipt(
    ctx: PacketContext,
    scan: SourceScan,
    reads: Mapping[str, ReadResult],
    minter: RefMinter,
    alerts: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Build (not store) the receipt; ``ctx.decision_id`` binds it to a decision when given."""
    return scan_packet.SPEC.build(ctx, scan_receipt_values(scan, reads, minter, alerts))


# coverage (decision_source_coverage_v0)


def source_complete(scan: SourceScan, reads: Mapping[str, ReadResult]) -> tuple[bool, bool]:
    """(complete, exact_read_incomplete) for one scanned source: a change the policy asks to read
    and nobody read (a baseline's adoption too) leaves it incomplete (SPEC §5.5)."""
    if not scan.ok:
        return False, False
    reads_ok = read_complete(scan, reads)
    return reads_ok and not scan.telemetry.result_cap_applied, not reads_ok


def coverage_values(
    registry: Registry,
    scans: Sequence[SourceScan],
    reads: Mapping[str, Mapping[str, ReadResult]],
) -> dict[str, Any]:
    by_id = {scan.source_id: scan for scan in scans}
    rows: dict[str, dict[str, Any]] = {
        p: {
            "priority": p,
            "source_count": 0,
            "complete_count": 0,
            "exact_read_incomplete_count": 0,
            "status_counts": {},
        }
        for p in PRIORITIES
    }
    incomplete: list[str] = []
    counted = [s for s in registry.sources if s.enabled or s.source_id in by_id]
    for source in counted:
        row = rows[source.priority]
        row["source_count"] += 1
        scan = by_id.get(source.source_id)
        status = scan.status if scan is not None else coverage_packet.NOT_SELECTED
        row["status_counts"][status] = row["status_counts"].get(status, 0) + 1
        complete = False
        if scan is not None:
            complete, read_incomplete = source_complete(scan, reads.get(source.source_id, {}))
            row["exact_read_incomplete_count"] += read_incomplete
        row["complete_count"] += complete
        if not complete and source.priority == REQUIRED_PRIORITY:
            incomplete.append(source.source_id)
    return {
        "required_priority": REQUIRED_PRIORITY,
        "status": "partial" if incomplete else "complete",
        "incomplete_required_source_ids": incomplete,
        "priorities": list(rows.values()),
    }


def build_coverage(
    ctx: PacketContext,
    registry: Registry,
    scans: Sequence[SourceScan],
    reads: Mapping[str, Mapping[str, ReadResult]],
) -> dict[str, Any]:
    """Build (not store) the coverage packet; ``reads`` is ``{source_id: {resource_ref: ReadResult}}``."""
    return coverage_packet.SPEC.build(ctx, coverage_values(registry, scans, reads))


# freshness (decision_source_freshness_v0)


def freshness_row(
    source: Any, last_read_at: str | None, observed_at: str, scanned: bool
) -> dict[str, Any]:
    staleness = None
    if last_read_at is None:
        status = "never_read" if scanned else "not_scanned"
    else:
        staleness = max(0, int(seconds_between(last_read_at, observed_at)))
        status = "stale" if staleness > source.freshness_seconds else "fresh"
    return {
        "source_id": source.source_id,
        "priority": source.priority,
        "scan_mode": source.scan_mode,
        "freshness_seconds": source.freshness_seconds,
        "last_read_at": last_read_at,
        "staleness_seconds": staleness,
        "status": status,
        "alert": status != "fresh",
    }


def freshness_values(
    registry: Registry, scans: Sequence[SourceScan], last_reads: Mapping[str, str], observed_at: str
) -> dict[str, Any]:
    observed_at = normalise_ts(observed_at)
    scanned = {scan.source_id for scan in scans}
    rows = [
        freshness_row(
            source, last_reads.get(source.source_id), observed_at, source.source_id in scanned
        )
        for source in registry.sources
        if source.enabled or source.source_id in scanned
    ]
    return {
        "observed_at": observed_at,
        "sources": rows,
        "alert_source_ids": [row["source_id"] for row in rows if row["alert"]],
    }


def build_freshness(
    ctx: PacketContext,
    registry: Registry,
    scans: Sequence[SourceScan],
    last_reads: Mapping[str, str],
    observed_at: str,
) -> dict[str, Any]:
    """Build (not store) the freshness packet; ``last_reads`` from ``dcx.state.cursors.read_freshness``."""
    return freshness_packet.SPEC.build(
        ctx, freshness_values(registry, scans, last_reads, observed_at)
    )


# the manifest (decision_source_manifest_v0)


def manifest_values(registry: Registry) -> dict[str, Any]:
    """The public projection of each source: the fields of ``SOURCE_ROW`` (policy, never a locator)."""
    rows = [
        {
            name: list(value) if isinstance(value := getattr(s, name), tuple) else value
            for name in manifest_packet.SOURCE_ROW.fields
        }
        for s in registry.sources
    ]
    return {
        "source_count": len(rows),
        "enabled_source_count": sum(1 for r in rows if r["enabled"]),
        "sources": rows,
    }


def build_manifest(ctx: PacketContext, registry: Registry) -> dict[str, Any]:
    return manifest_packet.SPEC.build(ctx, manifest_values(registry))


# retrieval receipts (context_provider_retrieval_v0)


def retrieval_receipt_values(
    retrieval: Retrieval, provider_refs: Sequence[str], decision_id: str | None = None
) -> dict[str, Any]:
    """The receipt's values (no envelope) for ``SPEC.build``.

    ``provider_refs[i]`` is the keyed ref of ``retrieval.items[i]`` (see
    ``RefMinter.provider_ref``); nothing else about an item but its summary and
    score is projected.
    """
    if len(provider_refs) != len(retrieval.items):
        raise ValueError("one provider ref per item")
    values: dict[str, Any] = {
        "ok": retrieval.status == retrieval_packet.COMPLETED,
        "provider": retrieval.provider,
        "namespace": retrieval.namespace,
        "status": retrieval.status,
        "reason_code": retrieval.reason_code,
        "provider_version": retrieval.provider_version,
        "query_summary": retrieval.query_summary,
        "observed_at": retrieval.observed_at,
        "search_performed": retrieval.search_performed,
        "read_performed": retrieval.read_performed,
        "requested_limit": retrieval.requested_limit,
        "result_count": len(retrieval.items),
        "results": [
            {"rank": rank, "provider_ref": ref, "summary": item.summary, "score": item.score}
            for rank, (ref, item) in enumerate(
                zip(provider_refs, retrieval.items, strict=True), start=1
            )
        ],
        "telemetry": {
            "latency_ms": retrieval.latency_ms,
            "result_cap_applied": retrieval.result_cap_applied,
            "items_dropped": retrieval.items_dropped,
        },
        "fail_open": True,
        "external_writes_performed": False,
        "raw_provider_payload_captured": False,
        "raw_content_captured": False,
        "credentials_captured": False,
    }
    if decision_id is not None:
        values["decision_id"] = decision_id
    return values


def build_receipt(
    ctx: PacketContext, retrieval: Retrieval, provider_refs: Sequence[str]
) -> dict[str, Any]:
    """The validated receipt with its ref (bound to ``ctx.decision_id`` when there is one)."""
    return retrieval_packet.SPEC.build(
        ctx, retrieval_receipt_values(retrieval, provider_refs, ctx.decision_id)
    )
