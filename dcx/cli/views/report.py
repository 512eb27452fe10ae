"""The people's view of ``dcx report``: titled tables, every foreign string made visible."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from dcx.cli._layout import Page, styled
from dcx.core.terminal import visible
from dcx.report_html import duration

if TYPE_CHECKING:
    from dcx.core.result import Result


def safe(value: Any) -> str:
    """Text read back from public files, printable on a terminal (SPEC §3.4.1; never markup)."""
    return "-" if value is None else visible(str(value))


def _num(value: Any, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _reasons(counts: dict[str, int]) -> str:
    return ", ".join(f"{safe(k)} {v}" for k, v in counts.items()) or "-"


def _short(ref: str) -> str:
    prefix, _, hexpart = safe(ref).rpartition("-")
    return f"{prefix}-{hexpart[:8]}"


def _titled(
    page: Page, title: str, columns: Sequence[str], rows: list[list[Any]], *, left: int = 1
) -> None:
    """A bold title over a table whose columns after the first ``left`` are numbers (right-aligned)."""
    page.blank()
    page.line(title, style="bold")
    cells = [[v if isinstance(v, str) else _num(v) for v in row] for row in rows]
    page.table(columns, cells, right=range(left, len(columns)))


SHOWN = 50  # decisions and changes listed in text; --format json and --html hold them all

MEASURES = (
    ("decisions", lambda s: s["decisions"]),
    (
        "source reads (prepares)",
        lambda s: f"{s['authority']['source_reads']} ({s['authority']['prepares']})",
    ),
    ("exact reads", lambda s: s["authority"]["exact_reads"]),
    ("changed facts", lambda s: s["authority"]["changed_facts"]),
    ("coverage partial", lambda s: s["authority"]["coverage_partial"]),
    ("recall calls / results", lambda s: f"{s['recall']['calls']} / {s['recall']['results']}"),
    ("claims accepted", lambda s: s["recall"]["accepted"]),
    ("claims stale", lambda s: _reasons(s["recall"]["stale_by_reason"])),
    ("claims rejected", lambda s: _reasons(s["recall"]["rejected_by_reason"])),
    ("recall unavailable", lambda s: _reasons(s["recall"]["unavailable_by_reason"])),
    (
        "stale demoted / presented",
        lambda s: f"{s['stale_claims']['demoted']} / {s['stale_claims']['presented']}",
    ),
    ("accepted stale", lambda s: s["stale_claims"]["accepted_stale"]),
    ("evidence-driven changes", lambda s: s["decision_changes"]["evidence_driven"]),
    ("changes without new evidence", lambda s: s["decision_changes"]["without_new_evidence"]),
    (
        "verified / refuted",
        lambda s: f"{s['outcomes']['verified']} / {s['outcomes']['refuted']}",
    ),
    (
        "inconclusive / pending / none",
        lambda s: "{inconclusive} / {pending} / {none}".format(**s["outcomes"]),
    ),
    ("linked verified outcomes", lambda s: s["outcomes"]["linked_verified"]),
    ("invalidated assumptions", lambda s: s["outcomes"]["invalidated_assumptions"]),
    (
        "time to verified (median)",
        lambda s: duration(s["outcomes"]["time_to_verified_seconds"]["median"]),
    ),
    (
        "Brier score (scored)",
        lambda s: f"{_num(s['calibration']['brier_score'])} ({s['calibration']['scored']})",
    ),
    (
        "reviewed: approve / reject / defer / no change",
        lambda s: "{approve} / {reject} / {defer} / {no_change}".format(
            **s["reviews"]["by_disposition"]
        ),
    ),
    (
        "approved: verified / refuted / outcome due",
        lambda s: (
            f"{s['reviews']['approved_verified']} / {s['reviews']['approved_refuted']} / "
            f"{s['reviews']['outcome_due']}"
        ),
    ),
)


def render_report(page: Page, result: Result) -> None:
    data = result.data
    _stale_claims(page, data["accepted_stale_claims"])
    gate = data["promotion_gate"]
    page.line(
        styled(
            "[bold]decision quality[/]  {} goal(s) · {} decision(s) · promotion gate: [bold]{}[/]",
            len(data["goals"]),
            data["totals"]["decisions"],
            gate["status"],
        )
    )
    _measures(page, data["goals"], data["totals"])
    _providers(page, data["goals"])
    _source_alerts(page, data["goals"])
    _calibration(page, data["totals"]["calibration"])
    changed = [(row, change) for row in data["decisions"] for change in row["changes"]]
    _changes(page, changed[-SHOWN:])
    shown = _decisions(page, data["decisions"])
    hidden = len(data["decisions"]) - shown + max(0, len(changed) - SHOWN)
    if hidden:
        page.line(
            f"… the latest {SHOWN} decisions and changes are listed; --format json or --html "
            "holds them all"
        )
    for goal in gate["goals"]:
        page.line(
            f"gate {safe(goal['goal_id'])}: stale rejection {'yes' if goal['stale_rejection'] else 'no'}"
            f", outcome linkage {'yes' if goal['outcome_linkage'] else 'no'}"
        )
    sig = data.get("signatures")
    if sig:  # SPEC §18: the measured packets by signature
        page.line(
            f"signatures: {sig['signed']} signed, {sig['unsigned']} unsigned, {sig['failed']} failed"
        )
    for row in data["left_out"]:
        page.line(styled("[yellow]left out[/] {}: {}", safe(row["goal_id"]), safe(row["file"])))
        page.line(f"    {safe(row['problem'])}")


def _stale_claims(page: Page, rows: list[dict[str, Any]]) -> None:
    if not rows:
        return
    page.line(
        styled(
            "[bold red]ACCEPTED STALE CLAIMS: {}[/] — a recalled claim was accepted against an "
            "authority revision that is not current",
            len(rows),
        )
    )
    for row in rows:
        page.line(
            f"  {safe(row['goal_id'])} · {safe(row['decision_id'])} · {safe(row['claim_id'])}"
            f" in {safe(row['evidence_ref'])}"
        )


def _measures(page: Page, goals: list[dict[str, Any]], totals: dict[str, Any]) -> None:
    """One row per measure, one column per goal (and one for all goals when there are several)."""
    several = len(goals) > 1
    summaries = [g["summary"] for g in goals] + ([totals] if several else [])
    headers = [safe(g["goal_id"]) for g in goals] + (["all goals"] if several else [])
    rows = [[label, *(get(s) for s in summaries)] for label, get in MEASURES]
    _titled(page, "measures", ["measure", *headers], rows)


def _providers(page: Page, goals: list[dict[str, Any]]) -> None:
    rows = [
        [
            safe(goal["goal_id"]),
            p["provider"],
            p["calls"],
            p["results"],
            p["accepted"],
            p["stale"],
            p["rejected"],
            p["unavailable"],
            _num(p["acceptance_rate"], 2),
            p["stop_condition"],
        ]
        for goal in goals
        for p in goal["providers"]
    ]
    columns = ["goal", "provider", "calls", "results", "accepted", "stale", "rejected", "unavail."]
    columns += ["accept", "stop"]
    _titled(page, "providers (stop condition)", columns, rows, left=2)
    for goal in goals:
        for p in goal["providers"]:
            if p["unavailable"]:
                page.line(
                    f"unavailable {safe(goal['goal_id'])} · {p['provider']}: "
                    f"{_reasons(p['unavailable_by_reason'])}"
                )


def _source_alerts(page: Page, goals: list[dict[str, Any]]) -> None:
    """Freshness alerts raised and cleared per source kind (SPEC §5.5 v4); nothing when none."""
    rows = [
        [safe(g["goal_id"]), row["source_kind"], row["alert"], row["raised"], row["cleared"]]
        for g in goals
        for row in g.get("source_alerts", [])
    ]
    if rows:
        columns = ["goal", "source kind", "alert", "raised", "cleared"]
        _titled(page, "source alerts", columns, rows, left=3)


def _calibration(page: Page, cal: dict[str, Any]) -> None:
    _titled(
        page,
        f"calibration (all goals): Brier {_num(cal['brier_score'])} over {cal['scored']} decision(s)",
        ["confidence", "decisions", "mean confidence", "observed verified"],
        [[r["bin"], r["count"], r["mean_confidence"], r["observed_rate"]] for r in cal["bins"]],
    )
    left = cal["left_out"]
    page.line(
        f"left out of calibration: {left['pending']} pending, {left['inconclusive']} inconclusive, "
        f"{left['none']} without outcome, {left['no_confidence']} without proposal"
    )


def _changes(page: Page, changed: list[tuple[dict[str, Any], dict[str, Any]]]) -> None:
    """Each decision changed by evidence: from which option to which, and the evidence's diff."""
    for row, change in changed:
        page.line(
            styled(
                "[bold]changed by evidence[/] {} · {}: {} → {}",
                safe(row["goal_id"]),
                safe(row["decision_id"]),
                safe(change["from_option"]),
                safe(change["to_option"]),
            )
        )
        page.line(
            f"    evidence {_short(change['from_evidence'])} → {_short(change['to_evidence'])}"
        )
        if not change["comparable"]:
            page.line("    evidence minted with another key: refs not compared")
        for fact in change["facts_added"]:
            page.line(f"    + fact {safe(fact['fact_id'])}: {safe(fact['summary'])}")
        for fact in change["facts_removed"]:
            page.line(f"    - fact {safe(fact['fact_id'])}: {safe(fact['summary'])}")
        for claim in change["claims_changed"]:
            page.line(
                f"    ~ claim {safe(claim['claim_id'])}: {safe(claim['before'])} → "
                f"{safe(claim['after'])}"
            )


def _decisions(page: Page, decisions: list[dict[str, Any]]) -> int:
    """The latest ``SHOWN`` decisions; returns how many were listed."""
    shown = (
        sorted(decisions, key=lambda r: r["started_at"] or "")[-SHOWN:]
        if len(decisions) > SHOWN
        else decisions
    )
    rows = [
        [
            safe(row["goal_id"]),
            safe(row["decision_id"]),
            ", ".join(safe(a) for a in row["agents"]) or "-",
            safe(row["started_at"]).replace("T", " ").removesuffix(":00Z"),
            _num(row["confidence"], 2),
            row["outcome"],
            duration(row["time_to_verified_seconds"]),
            len(row["invalidated_assumptions"]),
        ]
        for row in shown
    ]
    columns = ["goal", "decision", "agents", "started", "conf", "outcome", "to verified", "inval."]
    _titled(page, "decisions", columns, rows, left=3)
    return len(shown)
