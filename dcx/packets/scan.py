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
what the scan saw. ``alerts`` (optional) carries the source's failure streak
and its ``source_stale``/``source_failing`` alerts as codes and counts
(``dcx.sources.alerts``), never a locator.
"""

from __future__ import annotations

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
    Tokens,
)
from dcx.core.vocab import CONTENT_KINDS, SCAN_STATUSES, SOURCE_ALERTS, SOURCE_KINDS
from dcx.packets import declare

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
        "revision_ref": Ref(
            "source-revision", doc="Keyed ref of (source_id, resource ref, revision)."
        ),
        "observed_at": Timestamp(doc="Scan time (never a file mtime)."),
        "content_kind": Enum(values=CONTENT_KINDS),
        "exact_read_verified": Bool(doc="An exact read confirmed this revision."),
    },
)

TELEMETRY = Shape(
    "scan_telemetry",
    {
        "latency_ms": Int(lo=0, doc="From the injected clock: 0 under DCX_NOW."),
        "result_cap_applied": Bool(
            doc="More changes than max_changes: the rest stay for a later scan."
        ),
        "skipped_outside_locator": Int(lo=0, doc="Symlinks leaving the locator, not followed."),
        "skipped_oversize": Int(lo=0, doc="Files over max_scan_bytes, not hashed."),
        "adopted_unlisted_count": Int(
            lo=0,
            optional=True,
            doc=(
                "Baseline only: changes beyond the listed max_changes that the proposed cursor adopts too "
                "(a baseline adopts the whole current state; absent otherwise)."
            ),
        ),
        "skipped_submodules": Int(
            lo=0, optional=True, doc="git: submodule entries skipped (git sources only)."
        ),
        "skipped_symlinks": Int(
            lo=0, optional=True, doc="git: symlinks skipped, never followed (git sources only)."
        ),
        "skipped_binary": Int(
            lo=0,
            optional=True,
            doc="mcp: resources read as blobs, skipped (text only; mcp sources only).",
        ),
    },
)

ALERTS = Shape(
    "scan_alerts",
    {
        "source_kind": Enum(values=SOURCE_KINDS, doc="So dcx report can count alerts per kind."),
        "failure_streak": Int(
            lo=0,
            doc="Consecutive failed scan or read attempts, this one included (0 after a success).",
        ),
        "failure_alert_after": Int(
            lo=1, doc="The profile's [alerts] failure_alert_after when this scan ran."
        ),
        "active": Tokens(
            max_items=len(SOURCE_ALERTS),
            item=Enum(values=SOURCE_ALERTS),
            doc="Alerts standing after this attempt.",
        ),
        "raised": Tokens(
            max_items=len(SOURCE_ALERTS),
            item=Enum(values=SOURCE_ALERTS),
            doc="Active now and not after the source's previous attempt.",
        ),
        "cleared": Tokens(
            max_items=len(SOURCE_ALERTS),
            item=Enum(values=SOURCE_ALERTS),
            doc="Active after the previous attempt and not now.",
        ),
    },
)

SPEC = declare(
    "scan",
    decision_scoped="optional",
    doc="One source scan: status, counts and opaque refs of changes and cursors; never content or private values.",
    fields={
        "provider_id": Token(),
        "source_id": Token(),
        "status": Enum(values=SCAN_STATUSES),
        "reason_code": ReasonCode(
            optional=True,
            doc="Why the scan failed or is unavailable; on a completed or no_change scan, a note (cursor_rewound, locator_changed).",
        ),
        "provider_version": Token(optional=True),
        "observed_at": Timestamp(),
        "requested_limit": Int(lo=1, hi=MAX_CHANGES, doc="The source's max_changes."),
        "changed_count": Int(lo=0, hi=MAX_CHANGES),
        "exact_read_count": Int(lo=0, hi=MAX_CHANGES),
        "changes": Records(shape=CHANGE, id_field="change_ref", max_items=MAX_CHANGES),
        "cursor_before_ref": Ref(
            "source-cursor",
            doc="Keyed ref of the committed cursor compared with (of null when none).",
        ),
        "cursor_after_ref": Ref(
            "source-cursor", optional=True, doc="The cursor that absorbs exactly these changes."
        ),
        "telemetry": Obj(shape=TELEMETRY),
        "alerts": Obj(
            shape=ALERTS,
            optional=True,
            doc=(
                "SPEC §5.5 v4: the source's failure streak and freshness alerts after this attempt; "
                "absent when the source has no streak and no alert was active, raised or cleared "
                "(and on receipts stored before alerts existed)."
            ),
        ),
        "provider_fail_open": Const(value=True),
        **{flag: Const(value=False) for flag in CAPTURE_FLAGS},
    },
)
