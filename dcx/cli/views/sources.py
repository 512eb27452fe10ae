"""Views of the source-plane packets: manifest, scan receipt, coverage, freshness."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dcx.cli._views import view
from dcx.cli.views.common import (
    banner,
    duration,
    facts,
    header,
    never_captured,
    plural,
    short,
    table,
    yes,
)

if TYPE_CHECKING:
    from dcx.cli._layout import Page

SCAN_FLAGS = {
    "raw_content_captured": "content",
    "raw_provider_payload_captured": "provider payload",
    "locator_captured": "locator",
    "resource_ref_captured": "paths",
    "revision_captured": "revisions",
    "cursor_captured": "cursor values",
    "credentials_captured": "credentials",
}


@view("manifest")
def manifest(page: Page, packet: dict[str, Any]) -> None:
    header(page, "Source manifest", packet, "manifest_ref")
    page.line(
        f"{plural(packet['source_count'], 'source')}, {packet['enabled_source_count']} enabled · "
        "policy only: no locator, provider config or cursor"
    )
    table(
        page,
        "Sources",
        ("source", "via", "kind", "priority", "evidence level", "objectives"),
        [
            (
                _name(s),
                s["provider_id"],
                s["source_kind"],
                s["priority"],
                s["evidence_level"],
                ", ".join(s["objectives"]),
            )
            for s in packet["sources"]
        ],
    )
    table(
        page,
        "Policy",
        ("source", "scan", "exact read", "fresh for", "max changes", "conflict rule"),
        [
            (
                _name(s),
                s["scan_mode"],
                s["exact_read_policy"],
                duration(s["freshness_seconds"]),
                s["max_changes"],
                s.get("conflict_rule") or "-",
            )
            for s in packet["sources"]
        ],
    )


def _name(source: dict[str, Any]) -> str:
    return source["source_id"] + ("" if source["enabled"] else " (disabled)")


def _cursor_line(packet: dict[str, Any]) -> str:
    after = (
        short(packet.get("cursor_after_ref")) if packet.get("cursor_after_ref") else "none proposed"
    )
    return f"{short(packet['cursor_before_ref'])} → {after}"


def _alert_facts(packet: dict[str, Any]) -> list[tuple[str, str]]:
    alerts = packet.get("alerts")  # SPEC §5.5 v4; absent on older receipts and quiet sources
    if not alerts:
        return []
    shown = ", ".join(alerts["active"]) or "none"
    moved = [f"raised {c}" for c in alerts["raised"]] + [f"cleared {c}" for c in alerts["cleared"]]
    return [
        (
            "alerts",
            f"{shown} · {alerts['failure_streak']} consecutive failure(s) "
            f"(failing after {alerts['failure_alert_after']})"
            + (f" · {', '.join(moved)}" if moved else ""),
        )
    ]


@view("scan")
def scan(page: Page, packet: dict[str, Any]) -> None:
    header(page, "Scan receipt", packet, "receipt_ref")
    status = packet["status"]
    verdict = f"{packet['source_id']} · {status}"
    if packet.get("reason_code") and status in ("failed", "unavailable"):
        verdict += f" ({packet['reason_code']}; failed open, cursor kept)"
    elif packet.get("reason_code"):
        verdict += f" (note: {packet['reason_code']})"
    verdict += (
        f"\n{plural(packet['changed_count'], 'change')}, "
        f"{packet['exact_read_count']} confirmed by exact read"
    )
    banner(page, verdict, "yellow" if status in ("failed", "unavailable") else "")
    telemetry = packet["telemetry"]
    facts(
        page,
        [
            (
                "provider",
                packet["provider_id"]
                + (
                    f" (version {packet['provider_version']})"
                    if packet.get("provider_version")
                    else ""
                ),
            ),
            ("cursor", f"{_cursor_line(packet)} (committed → proposed; scanning moves no cursor)"),
            (
                "limit",
                f"{packet['requested_limit']} change(s)"
                + (
                    " · capped: the rest wait for a later scan"
                    if telemetry["result_cap_applied"]
                    else ""
                ),
            ),
            (
                "skipped",
                f"{telemetry['skipped_outside_locator']} symlink(s) leaving the locator · "
                f"{telemetry['skipped_oversize']} oversize file(s)"
                + (
                    f" · {telemetry['skipped_submodules']} submodule(s) · {telemetry['skipped_symlinks']}"
                    " symlink(s) not followed"
                    if "skipped_submodules" in telemetry
                    else ""
                )
                + (
                    f" · {telemetry['skipped_binary']} binary resource(s)"
                    if "skipped_binary" in telemetry
                    else ""
                ),
            ),
            ("latency", f"{telemetry['latency_ms']} ms"),
            *_alert_facts(packet),
        ],
    )
    rows = [
        (
            short(c["change_ref"]),
            short(c["revision_ref"]),
            c["content_kind"],
            yes(c["exact_read_verified"]),
            c["observed_at"],
        )
        for c in packet["changes"]
    ]
    table(
        page,
        "Changes (opaque refs: `dcx show REF --reveal` on a terminal resolves them)",
        ("change", "revision", "content", "exact read", "observed"),
        rows,
        constant={"observed": packet["observed_at"]},
    )
    never_captured(page, packet, SCAN_FLAGS)


@view("coverage")
def coverage(page: Page, packet: dict[str, Any]) -> None:
    header(page, "Coverage", packet, "coverage_ref")
    incomplete = packet["incomplete_required_source_ids"]
    required = packet["required_priority"]
    if packet["status"] == "partial":
        banner(
            page,
            f"PARTIAL — required ({required}) source(s) not covered completely: "
            f"{', '.join(incomplete)}",
            "yellow",
        )
    else:
        banner(
            page,
            f"complete — every required ({required}) source was scanned and read completely",
        )
    rows = [
        (
            row["priority"],
            yes(row["priority"] == required),
            row["source_count"],
            row["complete_count"],
            row["exact_read_incomplete_count"],
            ", ".join(f"{status} {count}" for status, count in sorted(row["status_counts"].items()))
            or "-",
        )
        for row in sorted(packet["priorities"], key=lambda r: r["priority"])
    ]
    table(
        page,
        "By priority",
        ("priority", "required", "sources", "complete", "exact read incomplete", "scan statuses"),
        rows,
    )


@view("freshness")
def freshness(page: Page, packet: dict[str, Any]) -> None:
    header(page, "Freshness", packet, "freshness_ref")
    alerts = packet["alert_source_ids"]
    if alerts:
        banner(page, f"{plural(len(alerts), 'source')} not fresh: {', '.join(alerts)}", "yellow")
    else:
        banner(page, "every source was exact-read within its freshness window")
    rows = [
        (
            row["source_id"],
            row["priority"],
            row["scan_mode"],
            duration(row["freshness_seconds"]),
            row["last_read_at"] or "never",
            duration(row["staleness_seconds"]),
            row["status"] + (" (!)" if row["alert"] else ""),
        )
        for row in packet["sources"]
    ]
    table(
        page,
        "Sources",
        ("source", "priority", "scan", "fresh for", "last exact read", "age", "status"),
        rows,
    )
