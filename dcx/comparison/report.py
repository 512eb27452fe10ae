"""``--report DIR``: report.json, report.md and a self-contained report.html (SPEC §11).

All three render the one validated ``dcx_provider_comparison_v0`` object, so
they hold exactly what it holds: no content, no absolute path, no query text
unless it was asked for. The HTML has no script and no external asset: two
inline SVG charts (recall@k per profile; provider latency beside caller
wall time), tables, and a Content-Security-Policy that forbids loading
anything. Every string is HTML-escaped.
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any

from dcx.core.fsutil import atomic_write

COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")


def write_report(folder: Path, report: dict[str, Any]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write(
        folder / "report.json",
        (json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode(),
    )
    atomic_write(folder / "report.md", markdown(report).encode())
    atomic_write(folder / "report.html", html(report).encode())


def _f(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def _at(row: dict[str, Any], k: int) -> dict[str, Any]:
    return next(m for m in row["metrics"] if m["k"] == k)


def _ks(report: dict[str, Any]) -> list[int]:
    return [m["k"] for m in report["profiles"][0]["metrics"]]


def summary_rows(
    report: dict[str, Any], *, compact: bool = False
) -> tuple[list[str], list[list[str]]]:
    """The one table (text, Markdown and HTML share it); ``compact`` for a terminal."""
    ks = _ks(report)
    top = ks[-1]
    if compact:
        tail = ["lat ms", "wall ms", "unans"]
    else:
        tail = ["latency p50/p95 ms", "wall p50/p95 ms", "unanswerable with candidates"]
    head = [
        "profile",
        "provider",
        "measured",
        "unavail" if compact else "unavailable",
        "unmatched",
        *[f"R@{k}" for k in ks],
        f"P@{top}",
        f"MRR@{top}",
        f"nDCG@{top}",
        *tail,
    ]
    sep = "/" if compact else " / "
    rows = []
    for row in report["profiles"]:
        last = _at(row, top)
        hard = row["unanswerable"]
        rows.append(
            [
                row["name"],
                row["provider"],
                f"{row['queries_measured']}/{row['queries_run']}",
                str(len(row["unavailable"])),
                f"{row['unmatched_items']}/{row['items']}",
                *[_f(_at(row, k)["recall"]) for k in ks],
                _f(last["precision"]),
                _f(last["mrr"]),
                _f(last["ndcg"]),
                f"{_ms(row['latency_ms']['p50'])}{sep}{_ms(row['latency_ms']['p95'])}",
                f"{_ms(row['wall_ms']['p50'])}{sep}{_ms(row['wall_ms']['p95'])}",
                f"{hard['with_candidates']}/{hard['queries']}",
            ]
        )
    return head, rows


def _md_table(head: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def markdown(report: dict[str, Any]) -> str:
    q = report["queries"]
    c = report["corpus"]
    head, rows = summary_rows(report)
    ks = _ks(report)
    parts = [
        "# Provider comparison",
        "",
        f"> {report['statement']}",
        "",
        f"Plan `{report['plan']}` · granularity `{report['granularity']}` · {c['files']} files, "
        f"{c['documents']} documents · {q['total']} queries ({q['answerable']} answerable, "
        f"{q['unanswerable']} unanswerable) · generated {report['generated_at']}",
        "",
        _md_table(head, rows),
        "",
        "Metrics are means over the *measured* queries (answerable and answered), computed by "
        "ir-measures over pytrec_eval (trec_eval semantics). Scores are never compared across providers.",
        "",
        "## All cut-offs",
        "",
        _md_table(
            ["profile", "k", "recall", "precision", "MRR", "nDCG"],
            [
                [
                    r["name"],
                    str(k),
                    _f(_at(r, k)["recall"]),
                    _f(_at(r, k)["precision"]),
                    _f(_at(r, k)["mrr"]),
                    _f(_at(r, k)["ndcg"]),
                ]
                for r in report["profiles"]
                for k in ks
            ],
        ),
        "",
        "## Unavailable queries",
        "",
    ]
    missing = [(r["name"], u) for r in report["profiles"] for u in r["unavailable"]]
    parts += [f"- {name}: `{u['query_id']}` ({u['reason_code']})" for name, u in missing] or [
        "None."
    ]
    parts += [
        "",
        "## Unanswerable queries",
        "",
        "Queries with no relevant document. What a provider returns for them is listed here and never "
        "counts as correct.",
        "",
    ]
    parts.append(
        _md_table(
            ["profile", "queries", "answered", "with candidates", "candidates"],
            [
                [
                    r["name"],
                    *(
                        str(r["unanswerable"][k])
                        for k in ("queries", "answered", "with_candidates", "candidates")
                    ),
                ]
                for r in report["profiles"]
            ],
        )
    )
    if "query_text" in report:
        parts += ["", "## Queries", ""]
        parts += [f"- `{t['query_id']}`: {t['query']}" for t in report["query_text"]]
    return "\n".join(parts) + "\n"


def _recall_chart(report: dict[str, Any]) -> str:
    ks = _ks(report)
    w, h, left, right, top, bottom = 560, 300, 50, 150, 20, 40
    pw, ph = w - left - right, h - top - bottom

    def x(k: int) -> float:
        return left + (pw * (ks.index(k) / (len(ks) - 1)) if len(ks) > 1 else pw / 2)

    def y(v: float) -> float:
        return top + ph * (1 - v)

    out = [
        f'<svg id="chart-recall" role="img" aria-label="recall at k per profile" viewBox="0 0 {w} {h}" '
        f'width="{w}" height="{h}" xmlns="http://www.w3.org/2000/svg">'
    ]
    for tick in (0, 0.25, 0.5, 0.75, 1):
        out.append(
            f'<line x1="{left}" y1="{y(tick):.1f}" x2="{left + pw}" y2="{y(tick):.1f}" stroke="#ddd"/>'
        )
        out.append(
            f'<text x="{left - 8}" y="{y(tick) + 4:.1f}" text-anchor="end" font-size="11">{tick:.2f}</text>'
        )
    for k in ks:
        out.append(
            f'<text x="{x(k):.1f}" y="{top + ph + 18}" text-anchor="middle" font-size="11">k={k}</text>'
        )
    out.append(
        f'<text x="{left + pw / 2}" y="{h - 4}" text-anchor="middle" font-size="12">cut-off k</text>'
    )
    for i, row in enumerate(report["profiles"]):
        colour = COLOURS[i % len(COLOURS)]
        points = [(x(m["k"]), y(m["recall"])) for m in row["metrics"] if m["recall"] is not None]
        if points:
            path = " ".join(f"{px:.1f},{py:.1f}" for px, py in points)
            out.append(
                f'<polyline class="series" data-profile="{escape(row["name"])}" points="{path}" fill="none" '
                f'stroke="{colour}" stroke-width="2.5"/>'
            )
            out += [
                f'<circle cx="{px:.1f}" cy="{py:.1f}" r="3.5" fill="{colour}"/>'
                for px, py in points
            ]
        ly = top + 14 + 18 * i
        out.append(
            f'<rect x="{left + pw + 14}" y="{ly - 9}" width="12" height="12" fill="{colour}"/>'
        )
        out.append(
            f'<text x="{left + pw + 32}" y="{ly + 1}" font-size="12">{escape(row["name"])}</text>'
        )
    out.append("</svg>")
    return "\n".join(out)


def _latency_chart(report: dict[str, Any]) -> str:
    rows = report["profiles"]
    series = [
        ("provider p50", "latency_ms", "p50", "#1f77b4"),
        ("provider p95", "latency_ms", "p95", "#aec7e8"),
        ("wall p50", "wall_ms", "p50", "#d62728"),
        ("wall p95", "wall_ms", "p95", "#ff9896"),
    ]
    peak = max([r[g][p] or 0 for r in rows for _, g, p, _ in series] + [1])
    bar, gap, left, top, width = 12, 14, 110, 30, 380
    h = top + len(rows) * (4 * bar + gap) + 30
    out = [
        f'<svg id="chart-latency" role="img" aria-label="provider latency and caller wall time" '
        f'viewBox="0 0 {left + width + 80} {h}" width="{left + width + 80}" height="{h}" '
        'xmlns="http://www.w3.org/2000/svg">'
    ]
    for i, (label, _, _, colour) in enumerate(series):
        out.append(f'<rect x="{left + 100 * i}" y="6" width="10" height="10" fill="{colour}"/>')
        out.append(f'<text x="{left + 100 * i + 14}" y="15" font-size="11">{label}</text>')
    for i, row in enumerate(rows):
        y0 = top + i * (4 * bar + gap)
        out.append(
            f'<text x="{left - 8}" y="{y0 + 2 * bar + 4}" text-anchor="end" font-size="12">'
            f"{escape(row['name'])}</text>"
        )
        for j, (_, group, pct, colour) in enumerate(series):
            value = row[group][pct]
            length = 0 if value is None else max(1.0, width * value / peak)
            out.append(
                f'<rect class="bar" x="{left}" y="{y0 + j * bar}" width="{length:.1f}" height="{bar - 2}" '
                f'fill="{colour}"/>'
            )
            out.append(
                f'<text x="{left + length + 4:.1f}" y="{y0 + j * bar + bar - 3}" font-size="10">'
                f"{_ms(value)} ms</text>"
            )
    out.append("</svg>")
    return "\n".join(out)


def _html_table(head: list[str], rows: list[list[str]]) -> str:
    cells = "".join(f"<th>{escape(c)}</th>" for c in head)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{cells}</tr></thead><tbody>{body}</tbody></table>"


CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1100px;color:#222;padding:0 16px}
h1{font-size:22px;margin:0 0 6px} h2{font-size:16px;margin:26px 0 8px}
.statement{border-left:4px solid #d62728;background:#fff5f5;padding:8px 12px;margin:12px 0}
table{border-collapse:collapse;font-size:12.5px;margin:6px 0} th,td{border:1px solid #ccc;padding:3px 7px;text-align:right}
th{background:#f3f3f3} td:first-child,td:nth-child(2){text-align:left}
.charts{display:flex;flex-wrap:wrap;gap:28px} figure{margin:0} figcaption{font-weight:600;margin-bottom:4px}
.meta{color:#555}
"""


def html(report: dict[str, Any]) -> str:
    q = report["queries"]
    c = report["corpus"]
    head, rows = summary_rows(report)
    missing = [
        [r["name"], u["query_id"], u["reason_code"]]
        for r in report["profiles"]
        for u in r["unavailable"]
    ]
    hard = [
        [
            r["name"],
            *(
                str(r["unanswerable"][k])
                for k in ("queries", "answered", "with_candidates", "candidates")
            ),
        ]
        for r in report["profiles"]
    ]
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">",
        "<title>dcx provider comparison</title>",
        f"<style>{CSS}</style></head><body>",
        "<h1>Provider comparison</h1>",
        f'<p class="statement" id="statement">{escape(report["statement"])}</p>',
        f'<p class="meta">Plan <code>{escape(report["plan"])}</code> · granularity '
        f"<code>{escape(report['granularity'])}</code> · {c['files']} files, {c['documents']} documents · "
        f"{q['total']} queries ({q['answerable']} answerable, {q['unanswerable']} unanswerable) · "
        f"generated {escape(report['generated_at'])}</p>",
        '<div class="charts">',
        f"<figure><figcaption>Recall@k per profile</figcaption>{_recall_chart(report)}</figure>",
        f"<figure><figcaption>Latency (ms): provider receipts beside caller wall time</figcaption>"
        f"{_latency_chart(report)}</figure>",
        "</div>",
        "<h2>Summary</h2>",
        _html_table(head, rows),
        '<p class="meta">Means over the measured queries (answerable and answered), computed by ir-measures '
        "over pytrec_eval (trec_eval semantics). Scores are provider-native and never compared.</p>",
        "<h2>Unavailable queries</h2>",
        _html_table(["profile", "query", "reason"], missing) if missing else "<p>None.</p>",
        "<h2>Unanswerable queries</h2>",
        "<p>No relevant document exists for these; candidates returned for them never count as correct.</p>",
        _html_table(["profile", "queries", "answered", "with candidates", "candidates"], hard),
    ]
    if "query_text" in report:
        parts += [
            "<h2>Queries</h2>",
            _html_table(
                ["query", "text"], [[t["query_id"], t["query"]] for t in report["query_text"]]
            ),
        ]
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
