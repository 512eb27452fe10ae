"""``decision_source_scan_receipt_v0``: what one source scan found, in opaque refs only (SPEC §5.4).

A receipt names changes by keyed refs (``change_ref`` of (source, path),
``revision_ref`` of (source, path, revision)) and cursors by ``source-cursor``
refs — never a path, revision, cursor, locator or content. The constant
flags state that promise in the packet itself:

| flag | promise |
|---|---|
| ``provider_fail_open: true`` | a provider failure became this receipt, not an error |
| ``raw_content_captured: false`` | no file or item content |
| ``raw_provider_payload_captured: false`` | nothing an adapter returned, verbatim |
| ``locator_captured: false`` | no locator, path or adapter config |
| ``resource_ref_captured: false`` | no resource ref (path) of an item, only ``change_ref`` |
| ``revision_captured: false`` | no revision (file hash), only ``revision_ref`` |
| ``cursor_captured: false`` | no cursor value, only ``cursor_*_ref`` |
| ``credentials_captured: false`` | no credential from any config |

``exact_read_verified`` is true when an exact read confirmed the scanned
revision (re-hashed text or binary, or the deletion seen again);
``exact_read_count`` counts those. ``dcx scan`` reads nothing, so its
receipts have none; ``prepare`` passes its reads in. ``content_kind`` is the
read's outcome when there was one (``oversize`` is known only then), else
what the scan saw.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from dcx.core.envelope import PacketContext, PacketSpec
from dcx.core.fields import (
    Bool,
    Const,
    Enum,
    Int,
    Obj,
    ReasonCode,
    Records,
    Ref,
    Shape,
    Timestamp,
    Token,
)
from dcx.core.vocab import CONTENT_KINDS, SCAN_STATUSES

if TYPE_CHECKING:
    from dcx.refmap import RefMinter
    from dcx.sources.base import ReadResult
    from dcx.sources.plane import SourceScan

MAX_CHANGES = 10_000
CAPTURE_FLAGS = (
    "raw_content_captured",
    "raw_provider_payload_captured",
    "locator_captured",
    "resource_ref_captured",
    "revision_captured",
    "cursor_captured",
    "credentials_captured",
)

CHANGE = Shape(
    "scan_change",
    {
        "change_ref": Ref("source-change", doc="Keyed ref of (source_id, resource ref)."),
        "revision_ref": Ref("source-revision", doc="Keyed ref of (source_id, resource ref, revision)."),
        "observed_at": Timestamp(doc="Scan time (never a file mtime)."),
        "content_kind": Enum(values=CONTENT_KINDS),
        "exact_read_verified": Bool(doc="An exact read confirmed this revision."),
    },
)

TELEMETRY = Shape(
    "scan_telemetry",
    {
        "latency_ms": Int(lo=0, doc="From the injected clock: 0 under DCX_NOW."),
        "result_cap_applied": Bool(doc="More changes than max_changes: the rest stay for a later scan."),
        "skipped_outside_locator": Int(lo=0, doc="Symlinks leaving the locator, not followed."),
        "skipped_oversize": Int(lo=0, doc="Files over max_scan_bytes, not hashed."),
        "adopted_unlisted_count": Int(lo=0, optional=True, doc=(
            "Baseline only: changes beyond the listed max_changes that the proposed cursor adopts too "
            "(a baseline adopts the whole current state; absent otherwise).")),
        "skipped_submodules": Int(lo=0, optional=True, doc="git: submodule entries skipped (git sources only)."),
        "skipped_symlinks": Int(lo=0, optional=True, doc="git: symlinks skipped, never followed (git sources only)."),
    },
)

SPEC = PacketSpec(
    kind="scan",
    schema_version="decision_source_scan_receipt_v0",
    prefix="decision-source-scan",
    ref_field="receipt_ref",
    decision_scoped="optional",
    doc="One source scan: status, counts and opaque refs of changes and cursors; never content or private values.",
    fields={
        "provider_id": Token(),
        "source_id": Token(),
        "status": Enum(values=SCAN_STATUSES),
        "reason_code": ReasonCode(optional=True, doc="Why the scan failed or is unavailable; on a completed or no_change scan, a note (cursor_rewound, locator_changed)."),
        "provider_version": Token(optional=True),
        "observed_at": Timestamp(),
        "requested_limit": Int(lo=1, hi=MAX_CHANGES, doc="The source's max_changes."),
        "changed_count": Int(lo=0, hi=MAX_CHANGES),
        "exact_read_count": Int(lo=0, hi=MAX_CHANGES),
        "changes": Records(shape=CHANGE, id_field="change_ref", max_items=MAX_CHANGES),
        "cursor_before_ref": Ref("source-cursor", doc="Keyed ref of the committed cursor compared with (of null when none)."),
        "cursor_after_ref": Ref("source-cursor", optional=True, doc="The cursor that absorbs exactly these changes."),
        "telemetry": Obj(shape=TELEMETRY),
        "provider_fail_open": Const(value=True),
        **{flag: Const(value=False) for flag in CAPTURE_FLAGS},
    },
)


def receipt_values(
    scan: SourceScan, reads: Mapping[str, ReadResult], minter: RefMinter
) -> dict[str, Any]:
    """The receipt's fields for one scan and the exact reads made of its items (by resource ref)."""
    source_id = scan.source_id
    changes = []
    verified = 0
    for item in scan.items:
        read = reads.get(item.resource_ref)
        confirmed = read is not None and read.verified and read.revision == item.revision
        verified += confirmed
        kind = read.content_kind if read is not None and read.absorbed else None
        changes.append(
            {
                "change_ref": minter.change_ref(source_id, item.resource_ref),
                "revision_ref": minter.revision_ref(source_id, item.resource_ref, item.revision),
                "observed_at": item.observed_at,
                "content_kind": kind or item.content_kind,
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
        "cursor_after_ref": minter.cursor_ref(source_id, scan.cursor_after) if scan.cursor_after else None,
        "telemetry": {
            "latency_ms": scan.latency_ms,
            "result_cap_applied": scan.telemetry.result_cap_applied,
            "skipped_outside_locator": scan.telemetry.skipped_outside_locator,
            "skipped_oversize": scan.telemetry.skipped_oversize,
            "adopted_unlisted_count": scan.telemetry.adopted_unlisted_count,
            "skipped_submodules": scan.telemetry.skipped_submodules,
            "skipped_symlinks": scan.telemetry.skipped_symlinks,
        },
        "provider_fail_open": True,
    }
    values.update({flag: False for flag in CAPTURE_FLAGS})
    return values


def build_scan_receipt(
    ctx: PacketContext, scan: SourceScan, reads: Mapping[str, ReadResult], minter: RefMinter
) -> dict[str, Any]:
    """Build (not store) the receipt; ``ctx.decision_id`` binds it to a decision when given."""
    return SPEC.build(ctx, receipt_values(scan, reads, minter))
