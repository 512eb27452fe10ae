"""``dcx report --html``: one self-contained page with inline SVG charts (SPEC §13).

No script, no external asset, a Content-Security-Policy that allows neither;
every string from the report is HTML-escaped. Charts: the calibration
(reliability) diagram, recall acceptance per provider, the decision timeline.
"""

from __future__ import annotations

from datetime import UTC, datetime
from html import escape
from typing import Any


def duration(seconds: Any) -> str:
    """A span as the report says it in text and HTML alike: ``2d 3h``, ``4h 10m``, ``-`` for none."""
    if seconds is None:
        return "-"
    seconds = int(seconds)
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    return f"{days}d {hours}h" if days else f"{hours}h {rest // 60}m"


def tick_format(span_seconds: float) -> str:
    """Timeline ticks: dates for spans of days, times when the whole span is shorter (every tick
    would otherwise print the same date)."""
    return "%Y-%m-%d" if span_seconds >= 2 * 86400 else "%m-%d %H:%M"


COLOURS = {
    "accepted": "#2e7d32",
    "stale": "#f9a825",
    "rejected": "#c62828",
    "unavailable": "#757575",
    "verified": "#2e7d32",
    "refuted": "#c62828",
    "inconclusive": "#6a1b9a",
    "pending": "#f9a825",
    "none": "#9e9e9e",
}
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def _e(value: Any) -> str:
    return escape("-" if value is None else str(value), quote=True)


def _fmt(value: Any) -> str:
    return "-" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)


def calibration_svg(cal: dict[str, Any]) -> str:
    size, pad = 300, 40
    span = size - 2 * pad
    x = lambda v: pad + v * span  # noqa: E731
    y = lambda v: size - pad - v * span  # noqa: E731
    parts = [
        f'<svg id="calibration" xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size}" '
        f'viewBox="0 0 {size} {size}" role="img" aria-label="calibration diagram">',
        f'<rect x="{pad}" y="{pad}" width="{span}" height="{span}" fill="#fafafa" stroke="#bbb"/>',
        f'<line x1="{x(0)}" y1="{y(0)}" x2="{x(1)}" y2="{y(1)}" stroke="#999" stroke-dasharray="4 3"/>',
    ]
    for tick in (0, 0.2, 0.4, 0.6, 0.8, 1.0):
        parts.append(
            f'<text x="{x(tick)}" y="{size - pad + 14}" font-size="10" text-anchor="middle">{tick:.1f}</text>'
        )
        parts.append(
            f'<text x="{pad - 6}" y="{y(tick) + 3}" font-size="10" text-anchor="end">{tick:.1f}</text>'
        )
    parts.append(
        f'<text x="{size / 2}" y="{size - 6}" font-size="11" text-anchor="middle">proposal confidence</text>'
    )
    parts.append(
        f'<text x="12" y="{size / 2}" font-size="11" text-anchor="middle" '
        f'transform="rotate(-90 12 {size / 2})">observed verified rate</text>'
    )
    points = [b for b in cal["bins"] if b["count"]]
    if len(points) > 1:
        path = " ".join(
            f"{x(b['mean_confidence']):.1f},{y(b['observed_rate']):.1f}" for b in points
        )
        parts.append(f'<polyline points="{path}" fill="none" stroke="#1565c0" stroke-width="1.5"/>')
    for b in points:
        radius = 4 + 2 * b["count"] ** 0.5
        parts.append(
            f'<circle class="bin" cx="{x(b["mean_confidence"]):.1f}" cy="{y(b["observed_rate"]):.1f}" '
            f'r="{radius:.1f}" fill="#1565c0" fill-opacity="0.6"><title>{_e(b["bin"])}: {b["count"]} '
            f"decision(s)</title></circle>"
        )
    parts.append("</svg>")
    return "".join(parts)


def acceptance_svg(providers: list[dict[str, Any]]) -> str:
    width, bar, label = 560, 22, 190
    height = 30 + len(providers) * (bar + 10) + 20
    parts = [
        f'<svg id="acceptance" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="recall acceptance per provider">'
    ]
    keys = ("accepted", "stale", "rejected", "unavailable")
    for index, key in enumerate(keys):
        parts.append(
            f'<rect x="{label + index * 90}" y="4" width="10" height="10" fill="{COLOURS[key]}"/>'
            f'<text x="{label + index * 90 + 14}" y="13" font-size="11">{key}</text>'
        )
    span = width - label - 50
    for row, p in enumerate(providers):
        top = 30 + row * (bar + 10)
        name = f"{p['goal_id']} · {p['provider']}" if "goal_id" in p else p["provider"]
        parts.append(
            f'<text x="{label - 6}" y="{top + 15}" font-size="11" text-anchor="end">{_e(name)}</text>'
        )
        total = sum(p[k] for k in keys)
        left = label
        for key in keys:
            if not total or not p[key]:
                continue
            w = span * p[key] / total
            parts.append(
                f'<rect class="seg-{key}" x="{left:.1f}" y="{top}" width="{w:.1f}" height="{bar}" '
                f'fill="{COLOURS[key]}"><title>{_e(name)}: {p[key]} {key}</title></rect>'
            )
            left += w
        if not total:
            parts.append(
                f'<text x="{label}" y="{top + 15}" font-size="11" fill="#777">no recall</text>'
            )
        if p["stop_condition"] == "stop":
            parts.append(
                f'<text x="{width - 4}" y="{top + 15}" font-size="11" text-anchor="end" '
                f'fill="#c62828">stop</text>'
            )
    parts.append("</svg>")
    return "".join(parts)


TIMELINE_MAX = 200  # rows drawn; a 10,000-decision history shows its latest 200


def timeline_svg(decisions: list[dict[str, Any]], goals: list[str]) -> str:
    decisions = sorted(decisions, key=lambda d: d["started_at"] or "")[-TIMELINE_MAX:]
    width, row_h, label = 900, 26, 260
    stamps = [
        datetime.fromisoformat(t.replace("Z", "+00:00")).timestamp()
        for d in decisions
        for t in (d["started_at"], d["outcome_at"])
        if t
    ]
    lo, hi = (min(stamps), max(stamps)) if stamps else (0.0, 1.0)
    hi = hi if hi > lo else lo + 1
    span = width - label - 30

    def x(t: str) -> float:
        stamp = datetime.fromisoformat(t.replace("Z", "+00:00")).timestamp()
        return label + span * (stamp - lo) / (hi - lo)

    height = 60 + len(decisions) * row_h
    parts = [
        f'<svg id="timeline" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="decision timeline">'
    ]
    for index, key in enumerate(("verified", "refuted", "inconclusive", "pending", "none")):
        parts.append(
            f'<circle cx="{label + index * 100 + 5}" cy="10" r="5" fill="{COLOURS[key]}"/>'
            f'<text x="{label + index * 100 + 14}" y="14" font-size="11">{key}</text>'
        )
    for row, d in enumerate(decisions):
        top = 34 + row * row_h
        parts.append(
            f'<text x="{label - 6}" y="{top + 4}" font-size="10" text-anchor="end">'
            f"{_e(d['goal_id'])} · {_e(d['decision_id'])}</text>"
        )
        if not d["started_at"]:
            continue
        start = x(d["started_at"])
        end = x(d["outcome_at"]) if d["outcome_at"] else start
        colour = COLOURS.get(d["outcome"], "#9e9e9e")
        parts.append(
            f'<line x1="{start:.1f}" y1="{top}" x2="{end:.1f}" y2="{top}" stroke="{colour}" stroke-width="3"/>'
        )
        parts.append(
            f'<circle class="decision" cx="{end:.1f}" cy="{top}" r="6" fill="{colour}"><title>'
            f"{_e(d['decision_id'])}: {_e(d['outcome'])}</title></circle>"
        )
        if d["changes"]:
            parts.append(
                f'<text x="{start:.1f}" y="{top - 6}" font-size="9" fill="#1565c0">changed by evidence</text>'
            )
    axis = 34 + len(decisions) * row_h
    parts.append(f'<line x1="{label}" y1="{axis}" x2="{label + span}" y2="{axis}" stroke="#bbb"/>')
    shape = tick_format(hi - lo)
    for share in (0, 0.25, 0.5, 0.75, 1):
        tick = datetime.fromtimestamp(lo + share * (hi - lo), tz=UTC).strftime(shape)
        parts.append(
            f'<text x="{label + share * span:.1f}" y="{axis + 14}" font-size="10" '
            f'text-anchor="middle">{tick}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _table(headers: list[str], rows: list[list[Any]]) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join(
        "<tr>" + "".join(f"<td>{_e(_fmt(c))}</td>" for c in row) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _changes(decisions: list[dict[str, Any]]) -> str:
    items = []
    for d in decisions:
        for c in d["changes"]:
            lines = [
                f"<li>+ fact {_e(f['fact_id'])}: {_e(f['summary'])}</li>" for f in c["facts_added"]
            ]
            lines += [
                f"<li>- fact {_e(f['fact_id'])}: {_e(f['summary'])}</li>"
                for f in c["facts_removed"]
            ]
            lines += [
                f"<li>claim {_e(x['claim_id'])}: {_e(x['before'])} → {_e(x['after'])}</li>"
                for x in c["claims_changed"]
            ]
            if not c["comparable"]:
                lines.append("<li>evidence minted with another key: refs not compared</li>")
            items.append(
                f"<li><strong>{_e(d['goal_id'])} · {_e(d['decision_id'])}</strong>: "
                f"{_e(c['from_option'])} → {_e(c['to_option'])}<ul>{''.join(lines)}</ul></li>"
            )
    if not items:
        return ""
    return f'<h2>Evidence-driven changes</h2><ul id="changes">{"".join(items)}</ul>'


def render_html(data: dict[str, Any]) -> str:
    goals = data["goals"]
    totals = data["totals"]
    gate = data["promotion_gate"]
    providers = [p for g in goals for p in g["providers"]]
    summary_rows = []
    for g in [*goals, {"goal_id": "all goals", "summary": totals}]:
        s = g["summary"]
        summary_rows.append(
            [
                g["goal_id"],
                s["decisions"],
                s["authority"]["exact_reads"],
                s["authority"]["changed_facts"],
                s["recall"]["calls"],
                s["recall"]["accepted"],
                s["stale_claims"]["demoted"],
                s["stale_claims"]["accepted_stale"],
                s["decision_changes"]["evidence_driven"],
                s["outcomes"]["verified"],
                s["outcomes"]["refuted"],
                s["outcomes"]["pending"],
                duration(s["outcomes"]["time_to_verified_seconds"]["median"]),
                "{approve} / {reject} / {defer} / {no_change}".format(
                    **s["reviews"]["by_disposition"]
                ),
                f"{s['reviews']['approved_verified']} / {s['reviews']['approved_refuted']} / "
                f"{s['reviews']['outcome_due']}",
                s["calibration"]["brier_score"],
            ]
        )
    alarm = ""
    if data["accepted_stale_claims"]:
        alarm = (
            f'<p class="alarm">{len(data["accepted_stale_claims"])} accepted stale claim(s): a recalled claim '
            "was accepted against an authority revision that is not current.</p>"
        )
    left = "".join(
        f"<li>{_e(r['goal_id'])}: {_e(r['file'])} — {_e(r['problem'])}</li>"
        for r in data["left_out"]
    )
    cal = totals["calibration"]
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<title>dcx decision-quality report</title>
<style>
body{{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}}
table{{border-collapse:collapse;margin:8px 0 20px}}th,td{{border:1px solid #ddd;padding:3px 8px;font-size:13px}}
th{{background:#f0f0f0}}td{{text-align:right}}td:first-child{{text-align:left}}
.charts{{display:flex;flex-wrap:wrap;gap:24px;align-items:flex-start}}.alarm{{color:#fff;background:#c62828;padding:8px}}
figure{{margin:0}}figcaption{{font-weight:600;margin-bottom:4px}}
</style></head><body>
<h1>Decision quality</h1>
<p>{len(goals)} goal(s) · {totals["decisions"]} decision(s) · promotion gate: <strong id="gate">{
        _e(gate["status"])
    }</strong>.
Measured from public packets only; definitions in docs/report.md.</p>
{alarm}
{
        _table(
            [
                "goal",
                "decisions",
                "exact reads",
                "changed facts",
                "recall calls",
                "accepted",
                "stale demoted",
                "accepted stale",
                "evidence-driven changes",
                "verified",
                "refuted",
                "pending",
                "time to verified (median)",
                "reviewed: approve / reject / defer / no change",
                "approved: verified / refuted / outcome due",
                "Brier",
            ],
            summary_rows,
        )
    }
<div class="charts">
<figure><figcaption>Calibration: Brier {_e(_fmt(cal["brier_score"]))} over {
        cal["scored"]
    } decision(s)</figcaption>
{calibration_svg(cal)}</figure>
<figure><figcaption>Recall acceptance per provider</figcaption>{acceptance_svg(providers)}</figure>
</div>
<figure><figcaption>Decision timeline (proposal to latest outcome{
        f"; the latest {TIMELINE_MAX} of {len(data['decisions'])}"
        if len(data["decisions"]) > TIMELINE_MAX
        else ""
    })</figcaption>
{timeline_svg(data["decisions"], [g["goal_id"] for g in goals])}</figure>
{_changes(data["decisions"])}
<h2>Providers</h2>
{
        _table(
            [
                "goal",
                "provider",
                "calls",
                "results",
                "accepted",
                "stale",
                "rejected",
                "unavailable",
                "acceptance",
                "stop condition",
            ],
            [
                [
                    p["goal_id"],
                    p["provider"],
                    p["calls"],
                    p["results"],
                    p["accepted"],
                    p["stale"],
                    p["rejected"],
                    p["unavailable"],
                    p["acceptance_rate"],
                    p["stop_condition"],
                ]
                for p in providers
            ],
        )
    }
<h2>Decisions</h2>
{
        _table(
            [
                "goal",
                "decision",
                "agents",
                "started",
                "confidence",
                "outcome",
                "time to verified",
                "changes",
            ],
            [
                [
                    d["goal_id"],
                    d["decision_id"],
                    ", ".join(d["agents"]),
                    d["started_at"],
                    d["confidence"],
                    d["outcome"],
                    duration(d["time_to_verified_seconds"]),
                    len(d["changes"]),
                ]
                for d in data["decisions"]
            ],
        )
    }
{"<h2>Left out</h2><ul>" + left + "</ul>" if left else ""}
</body></html>
"""
