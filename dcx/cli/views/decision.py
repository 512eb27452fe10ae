"""Views of one prepare run: evidence, semantic rebase, cursor checkpoint, assembly."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dcx.cli._render import styled
from dcx.cli._views import view
from dcx.cli.views.common import (
    banner,
    facts,
    header,
    legend,
    meaning,
    never_captured,
    plural,
    short,
    table,
    yes,
)

if TYPE_CHECKING:
    from dcx.cli._layout import Page

EVIDENCE_FLAGS = {
    "raw_content_captured": "content",
    "raw_provider_payload_captured": "provider payload",
    "credentials_captured": "credentials",
    "recommendation_included": "recommendation",
}
READY = "ready_after_writeback"


def verdict_of(claim: dict[str, Any]) -> str:
    """stale (authority moved), not reproduced (demoted) or rejected."""
    code = claim["reason_code"]
    if code.startswith("stale"):
        return "stale"
    if code == "recall_not_reproduced":
        return "not reproduced"
    return "rejected"


def evidence_counts(packet: dict[str, Any]) -> str:
    verdicts = [verdict_of(c) for c in packet["stale_or_rejected_claims"]]
    open_conflicts = sum(1 for c in packet["conflicts"] if c["status"] == "open")
    parts = [
        plural(len(packet["changed_facts"]), "changed fact"),
        plural(len(packet["recalled_claims"]), "accepted claim"),
        f"{verdicts.count('stale')} stale",
        f"{len(verdicts) - verdicts.count('stale')} rejected",
        plural(len(packet["conflicts"]), "conflict")
        + (f" ({open_conflicts} open)" if open_conflicts else ""),
    ]
    return " · ".join(parts)


@view("evidence")
def evidence(page: Page, packet: dict[str, Any]) -> None:
    header(page, "Evidence packet", packet, "packet_ref")
    banner(page, evidence_counts(packet))
    page.line(
        "What is currently true, from exact reads of the authority sources. Recalled claims count only "
        "when the current authority text confirms them (authority wins). No recommendation here.",
        style="dim",
    )
    table(
        page,
        "Accepted claims (recalled, then confirmed by exact read)",
        ("claim", "summary", "provider ref", "authority"),
        [
            (c["claim_id"], c["summary"], short(c["provider_ref"]), short(c["source_ref"]))
            for c in packet["recalled_claims"]
        ],
    )
    stale = packet["stale_or_rejected_claims"]
    table(
        page,
        "Stale or rejected claims (not evidence)",
        ("claim", "verdict", "reason", "summary", "provider ref"),
        [
            (
                c["claim_id"],
                verdict_of(c),
                c["reason_code"],
                c["summary"],
                short(c.get("provider_ref")),
            )
            for c in stale
        ],
    )
    legend(page, (c["reason_code"] for c in stale))
    table(
        page,
        "Changed facts",
        ("fact", "summary", "source", "freshness"),
        [
            (
                f["fact_id"],
                f["summary"] + (" (generic)" if f.get("generic") else ""),
                short(f["source_ref"]),
                f["freshness"],
            )
            for f in packet["changed_facts"]
        ],
    )
    table(
        page,
        "Conflicts",
        ("conflict", "status", "rule", "summary", "sources"),
        [
            (
                c["conflict_id"],
                c["status"],
                c["conflict_rule"],
                c["summary"],
                ", ".join(short(r) for r in c["source_refs"]),
            )
            for c in packet["conflicts"]
        ],
    )
    table(
        page,
        "Source revisions (every source a record cites, at the revision read)",
        ("source", "revision", "changed", "freshness", "observed"),
        [
            (
                short(r["source_ref"]),
                short(r["revision"]),
                yes(r["changed"]),
                r["freshness"],
                r["observed_at"],
            )
            for r in packet["source_revisions"]
        ],
        constant={"observed": packet["observed_at"]},
    )
    table(
        page,
        "Provider health (providers fail open)",
        ("provider", "status", "reason", "observed"),
        [
            (p["provider"], p["status"], p.get("reason_code") or "-", p["observed_at"])
            for p in packet["provider_health"]
        ],
        constant={"observed": packet["observed_at"], "reason": "-"},
    )
    never_captured(page, packet, EVIDENCE_FLAGS)


@view("rebase")
def rebase(page: Page, packet: dict[str, Any]) -> None:
    header(page, "Semantic rebase receipt", packet, "rebase_ref")
    banner(
        page,
        f"{packet['mode']} rebase · {packet['status'].replace('_', ' ')} · "
        f"{packet['changed_item_count'] - packet['uncited_change_count']} of "
        f"{plural(packet['changed_item_count'], 'changed item')} accounted for",
    )
    facts(
        page,
        [
            ("semantic no change", yes(packet["semantic_no_change"])),
            (
                "records",
                f"{packet['changed_fact_count']} fact(s) · {packet['recalled_claim_count']} accepted claim(s) · "
                f"{packet['stale_or_rejected_claim_count']} stale or rejected · "
                f"{packet['conflict_count']} conflict(s)",
            ),
            ("demoted", f"{packet['demoted_claim_count']} claim(s) whose recall did not recur"),
            ("uncited", f"{packet['uncited_change_count']} changed item(s) nobody accounted for"),
            ("input digest", packet.get("input_digest") or "-"),
        ],
    )
    cited = packet["cited_change_refs"]
    page.blank()
    page.line(
        styled(
            "[bold]Cited changes[/]: {}", ", ".join(short(r) for r in cited) if cited else "none"
        )
    )


def dispositions(page: Page, title: str, packet: dict[str, Any]) -> None:
    rows = [
        (
            row["source_id"],
            "ready" if row["disposition"] == READY else "preserve",
            row["reason_code"],
            meaning(row["reason_code"]),
        )
        for row in packet["rows"]
    ]
    table(page, title, ("source", "disposition", "reason", "why"), rows)


@view("checkpoint")
def checkpoint(page: Page, packet: dict[str, Any]) -> None:
    header(page, "Cursor checkpoint", packet, "checkpoint_ref")
    banner(
        page,
        f"{plural(packet['ready_count'], 'source')} ready to advance after writeback · "
        f"{packet['preserve_count']} preserved",
    )
    page.line(
        "`dcx commit` advances only ready rows, and only after a writeback event names this chain.",
        style="dim",
    )
    dispositions(page, "Dispositions", packet)
    table(
        page,
        "Cursors (keyed refs: the cursor values stay private)",
        ("source", "committed", "proposed", "scan receipt"),
        [
            (
                row["source_id"],
                short(row["cursor_before_ref"]),
                short(row.get("cursor_after_ref")),
                short(row["scan_receipt_ref"]),
            )
            for row in packet["rows"]
        ],
    )


def _recall_line(retrieval: dict[str, Any] | None) -> str:
    if retrieval is None:
        return "not run (no --query)"
    line = f"{retrieval['provider']} · {retrieval['status']}"
    if retrieval.get("reason_code"):
        line += f" ({retrieval['reason_code']})"
    return (
        line
        + f" · {plural(retrieval['result_count'], 'result')} for “{retrieval['query_summary']}”"
    )


@view("assembly")
def assembly(page: Page, packet: dict[str, Any]) -> None:
    header(page, "Context assembly", packet, "assembly_ref", extra=(f"agent {packet['agent_id']}",))
    cov = packet["coverage"]
    ready = packet["checkpoint"]["ready_count"]
    if packet["preview"]:
        mode = "PREVIEW (no rebase input): changed sources keep their cursors"
    else:
        mode = f"{packet['mode']} rebase"
    if packet["coverage_status"] == "partial":
        coverage = "coverage PARTIAL: incomplete required source(s) " + ", ".join(
            cov["incomplete_required_source_ids"]
        )
    else:
        coverage = "coverage complete"
    ready_line = f"{ready} of {plural(len(packet['checkpoint']['rows']), 'source')} ready to advance after writeback"
    banner(
        page,
        "\n".join((mode, coverage, ready_line)),
        "yellow" if packet["preview"] or packet["coverage_status"] == "partial" else "",
    )
    ev, rb = packet["evidence"], packet["rebase"]
    facts(
        page,
        [
            ("evidence", evidence_counts(ev)),
            ("recall", _recall_line(packet.get("retrieval"))),
            (
                "rebase",
                f"{rb['mode']} · {rb['status'].replace('_', ' ')} · "
                f"{rb['uncited_change_count']} uncited change(s)",
            ),
            (
                "freshness",
                "all fresh"
                if not packet["freshness"]["alert_source_ids"]
                else "not fresh: " + ", ".join(packet["freshness"]["alert_source_ids"]),
            ),
        ],
    )
    dispositions(
        page,
        f"Cursor checkpoint {short(packet['checkpoint']['checkpoint_ref'])} "
        "(commit advances only ready rows)",
        packet["checkpoint"],
    )
    table(
        page,
        "Scans",
        ("source", "status", "changes", "exact reads", "reason", "receipt"),
        [
            (
                s["source_id"],
                s["status"],
                s["changed_count"],
                s["exact_read_count"],
                s.get("reason_code") or "-",
                short(s["receipt_ref"]),
            )
            for s in packet["scan_receipts"]
        ],
    )
    embedded = [
        ("manifest", packet["manifest"]["manifest_ref"]),
        *(("scan", s["receipt_ref"]) for s in packet["scan_receipts"]),
        ("coverage", cov["coverage_ref"]),
        ("freshness", packet["freshness"]["freshness_ref"]),
    ]
    if packet.get("retrieval"):
        embedded.append(("retrieval", packet["retrieval"]["retrieval_ref"]))
    embedded += [
        ("evidence", ev["packet_ref"]),
        ("rebase", rb["rebase_ref"]),
        ("checkpoint", packet["checkpoint"]["checkpoint_ref"]),
    ]
    table(
        page,
        "Embedded packets (each also stored on its own: `dcx show REF` opens it)",
        ("kind", "ref"),
        [(kind, short(ref)) for kind, ref in embedded],
    )
