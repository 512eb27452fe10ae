"""The people's view of ``dcx report``: rich tables, every foreign string made visible."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dcx.cli._render import styled
from dcx.core.terminal import visible

if TYPE_CHECKING:
    from rich.console import Console

    from dcx.core.result import Result


def safe(value: Any) -> str:
    """Text read back from public files, printable on a terminal (never rich markup)."""
    if value is None:
        return "-"
    text = str(value)
    return visible(text)  # the one escape rule (SPEC §3.4.1)


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


def _duration(seconds: Any) -> str:
    if seconds is None:
        return "-"
    seconds = int(seconds)
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    return f"{days}d {hours}h" if days else f"{hours}h {rest // 60}m"


def _table(title: str, *columns: str, left: int = 1):
    from rich.table import Table

    table = Table(title=title, title_justify="left", title_style="bold")
    for index, name in enumerate(columns):
        table.add_column(name, justify="left" if index < left else "right", no_wrap=True)
    return table


def _cells(*values: Any):
    from rich.text import Text

    return [Text(v if isinstance(v, str) else _num(v)) for v in values]


SHOWN = 50  # decisions and changes listed in text; --format json and --html hold them all


def render_report(console: Console, result: Result) -> None:
    data = result.data
    goals, totals = data["goals"], data["totals"]
    if data["accepted_stale_claims"]:
        console.print(
            styled(
                "[bold red]ACCEPTED STALE CLAIMS: {}[/] — a recalled claim was accepted against an "
                "authority revision that is not current",
                len(data["accepted_stale_claims"]),
            )
        )
        for row in data["accepted_stale_claims"]:
            console.print(
                f"  {safe(row['goal_id'])} · {safe(row['decision_id'])} · {safe(row['claim_id'])}"
                f" in {safe(row['evidence_ref'])}",
                markup=False,
            )
    gate = data["promotion_gate"]
    console.print(
        styled(
            "[bold]decision quality[/]  {} goal(s) · {} decision(s) · promotion gate: [bold]{}[/]",
            len(goals),
            totals["decisions"],
            gate["status"],
        )
    )

    names = [safe(g["goal_id"]) for g in goals]
    summaries = [g["summary"] for g in goals] + ([totals] if len(goals) > 1 else [])
    headers = names + (["all goals"] if len(goals) > 1 else [])
    table = _table("measures", "measure", *headers)
    measures = (
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
            lambda s: _duration(s["outcomes"]["time_to_verified_seconds"]["median"]),
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
    for label, get in measures:
        table.add_row(*_cells(label, *(get(s) for s in summaries)))
    console.print(table)

    providers = _table(
        "providers (stop condition)",
        "goal",
        "provider",
        "calls",
        "results",
        "accepted",
        "stale",
        "rejected",
        "unavail.",
        "accept",
        "stop",
        left=2,
    )
    for goal in goals:
        for p in goal["providers"]:
            providers.add_row(
                *_cells(
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
                )
            )
    console.print(providers)
    for goal in goals:
        for p in goal["providers"]:
            if p["unavailable"]:
                console.print(
                    f"unavailable {safe(goal['goal_id'])} · {p['provider']}: "
                    f"{_reasons(p['unavailable_by_reason'])}",
                    markup=False,
                )

    cal = totals["calibration"]
    bins = _table(
        f"calibration (all goals): Brier {_num(cal['brier_score'])} over {cal['scored']} decision(s)",
        "confidence",
        "decisions",
        "mean confidence",
        "observed verified",
    )
    for row in cal["bins"]:
        bins.add_row(
            *_cells(row["bin"], row["count"], row["mean_confidence"], row["observed_rate"])
        )
    console.print(bins)
    left = cal["left_out"]
    console.print(
        f"left out of calibration: {left['pending']} pending, {left['inconclusive']} inconclusive, "
        f"{left['none']} without outcome, {left['no_confidence']} without proposal",
        markup=False,
    )

    changed = [(row, change) for row in data["decisions"] for change in row["changes"]]
    for row, change in changed[-SHOWN:]:
        console.print(
            styled(
                "[bold]changed by evidence[/] {} · {}: {} → {}",
                safe(row["goal_id"]),
                safe(row["decision_id"]),
                safe(change["from_option"]),
                safe(change["to_option"]),
            )
        )
        console.print(
            f"    evidence {_short(change['from_evidence'])} → {_short(change['to_evidence'])}",
            markup=False,
        )
        if not change["comparable"]:
            console.print("    evidence minted with another key: refs not compared", markup=False)
        for fact in change["facts_added"]:
            console.print(
                f"    + fact {safe(fact['fact_id'])}: {safe(fact['summary'])}", markup=False
            )
        for fact in change["facts_removed"]:
            console.print(
                f"    - fact {safe(fact['fact_id'])}: {safe(fact['summary'])}", markup=False
            )
        for claim in change["claims_changed"]:
            console.print(
                f"    ~ claim {safe(claim['claim_id'])}: {safe(claim['before'])} → "
                f"{safe(claim['after'])}",
                markup=False,
            )

    table = _table(
        "decisions",
        "goal",
        "decision",
        "agents",
        "started",
        "conf",
        "outcome",
        "to verified",
        "inval.",
        left=3,
    )
    shown = (
        sorted(data["decisions"], key=lambda r: r["started_at"] or "")[-SHOWN:]
        if len(data["decisions"]) > SHOWN
        else data["decisions"]
    )
    for row in shown:
        started = safe(row["started_at"]).replace("T", " ").removesuffix(":00Z")
        table.add_row(
            *_cells(
                safe(row["goal_id"]),
                safe(row["decision_id"]),
                ", ".join(safe(a) for a in row["agents"]) or "-",
                started,
                _num(row["confidence"], 2),
                row["outcome"],
                _duration(row["time_to_verified_seconds"]),
                len(row["invalidated_assumptions"]),
            )
        )
    console.print(table)
    hidden = len(data["decisions"]) - len(shown) + max(0, len(changed) - SHOWN)
    if hidden:
        console.print(
            f"… the latest {SHOWN} decisions and changes are listed; --format json or --html "
            "holds them all",
            markup=False,
        )
    for goal in gate["goals"]:
        console.print(
            f"gate {safe(goal['goal_id'])}: stale rejection {'yes' if goal['stale_rejection'] else 'no'}"
            f", outcome linkage {'yes' if goal['outcome_linkage'] else 'no'}",
            markup=False,
        )
    for row in data["left_out"]:
        console.print(styled("[yellow]left out[/] {}: {}", safe(row["goal_id"]), safe(row["file"])))
        console.print(f"    {safe(row['problem'])}", markup=False)
