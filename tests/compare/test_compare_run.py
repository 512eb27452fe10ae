"""`dcx compare` end to end on the tiny plan: real `dcx recall` processes, hand-computed metrics, the lock, the report.

One comparison runs per module (subprocesses are the slow part): a scripted
extension whose every ranking is fixed, and bm25. The metric oracle below is
written from trec_eval's definitions, by hand, not from dcx or ir-measures.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from math import log2
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from scripts import schemas
from tests.support.compare import DOCS, QUERIES, compare_env, tiny_plan

# ---- the oracle: per query, per k, from the fixed rankings (unmatched items drop out of a ranking;
# a document counts once, at its first occurrence). Gains are the grades; discount log2(rank + 1).
# q1: rels a=2, b=1; ranking [b, a]    (the unmatched item between them is not a document)
# q2: rels c=1;      ranking [a, b, c]
# q3: rels d=1, a=1; ranking [a, d]    ("Apples are red." is inside a.md: a again, not counted twice)
IDCG_Q1 = {1: 2, 2: 2 + 1 / log2(3), 3: 2 + 1 / log2(3)}
HAND = {
    "q1": {
        1: (1 / 2, 1 / 1, 1.0, 1 / IDCG_Q1[1]),
        2: (2 / 2, 2 / 2, 1.0, (1 + 2 / log2(3)) / IDCG_Q1[2]),
        3: (2 / 2, 2 / 3, 1.0, (1 + 2 / log2(3)) / IDCG_Q1[3]),
    },
    "q2": {
        1: (0.0, 0.0, 0.0, 0.0),
        2: (0.0, 0.0, 0.0, 0.0),
        3: (1.0, 1 / 3, 1 / 3, (1 / log2(4)) / 1),
    },
    "q3": {
        1: (1 / 2, 1.0, 1.0, 1.0),
        2: (1.0, 1.0, 1.0, (1 + 1 / log2(3)) / (1 + 1 / log2(3))),
        3: (1.0, 2 / 3, 1.0, 1.0),
    },
}
NAMES = ("recall", "precision", "mrr", "ndcg")


def _run(
    plan: Path, *args: str, env: dict[str, str], timeout: float = 240
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dcx", "compare", str(plan), *args],
        cwd=plan.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("tiny")
    home = base / "home"
    home.mkdir()
    plan = tiny_plan(base / "plan")
    env = compare_env(home)
    proc = _run(plan, "--freeze", "--report", "out", "--format", "json", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return {"plan": plan, "env": env, "result": json.loads(proc.stdout), "out": plan.parent / "out"}


def _profile(ran: dict[str, Any], name: str) -> dict[str, Any]:
    return next(p for p in ran["result"]["data"]["profiles"] if p["name"] == name)


def test_metrics_equal_the_hand_computed_ones(ran: dict[str, Any]) -> None:
    row = _profile(ran, "scripted")
    assert (
        row["queries_measured"] == 3
    )  # q1..q3; q4 is unanswerable, q5 unavailable (left out, listed)
    for at in row["metrics"]:
        k = at["k"]
        for i, name in enumerate(NAMES):
            expected = sum(HAND[q][k][i] for q in HAND) / len(HAND)
            assert at[name] == pytest.approx(expected, abs=1e-9), (k, name)
    per_query = {
        r["query_id"]: r for r in ran["result"]["data"]["per_query"] if r["profile"] == "scripted"
    }
    for q, by_k in HAND.items():
        for at in per_query[q]["metrics"]:
            assert tuple(at[n] for n in NAMES) == pytest.approx(by_k[at["k"]], abs=1e-9), (
                q,
                at["k"],
            )
    assert [d["docid"] for d in per_query["q1"]["ranking"]] == ["b.md", "a.md"]
    assert [d["docid"] for d in per_query["q3"]["ranking"]] == ["a.md", "d.md"]


def test_unmatched_unavailable_and_unanswerable_are_kept_apart(ran: dict[str, Any]) -> None:
    row = _profile(ran, "scripted")
    assert (row["items"], row["unmatched_items"], row["matched_items"]) == (10, 1, 9)
    assert row["unavailable"] == [{"query_id": "q5", "reason_code": "backend_down"}]
    assert row["unanswerable"] == {
        "queries": 1,
        "answered": 1,
        "with_candidates": 1,
        "candidates": 1,
    }
    assert ran["result"]["status"] == "partial" and ran["result"]["warnings"]
    data = ran["result"]["data"]
    assert data["queries"] == {
        "total": 5,
        "answerable": 4,
        "unanswerable": 1,
    }  # q5 is answerable, not answered
    q4 = next(r for r in data["per_query"] if r["profile"] == "scripted" and r["query_id"] == "q4")
    assert q4["answerable"] is False and q4["metrics"] == [] and q4["ranking"][0]["docid"] == "c.md"


def test_latency_comes_from_receipts_and_wall_time_from_the_caller(ran: dict[str, Any]) -> None:
    # under DCX_NOW every dcx latency is 0 (SPEC 3.1); both columns are there and apart
    for row in ran["result"]["data"]["profiles"]:
        assert set(row["latency_ms"]) == set(row["wall_ms"]) == {"p50", "p95"}
        assert row["latency_ms"]["p50"] == 0 and row["wall_ms"]["p50"] == 0


def test_report_validates_and_matches_snapshot(ran: dict[str, Any], snapshot_json) -> None:
    report = json.loads((ran["out"] / "report.json").read_text())
    assert report == ran["result"]["data"]
    schema = schemas.all_schemas()["dcx_provider_comparison_v0"]
    Draft202012Validator(schema).validate(report)
    assert report == snapshot_json


def test_markdown_report_matches_snapshot(ran: dict[str, Any], snapshot) -> None:
    assert (ran["out"] / "report.md").read_text() == snapshot


def test_text_table_matches_snapshot(ran: dict[str, Any], snapshot) -> None:
    from dcx.cli._layout import Page, plain_text
    from dcx.cli.compare import render
    from dcx.core.result import Result

    page = Page()
    render(page, Result("compare", ran["result"]["data"]))
    assert plain_text(page) == snapshot


def test_report_holds_no_query_text_no_content_no_paths(
    ran: dict[str, Any], tmp_path: Path
) -> None:
    out = ran["out"]
    for name in ("report.json", "report.md", "report.html"):
        text = (out / name).read_text()
        for _, query, _ in QUERIES:
            assert query not in text, (name, query)
        for content in DOCS.values():
            assert content.strip().splitlines()[-1] not in text, name
        assert str(ran["plan"].parent) not in text and "/tmp" not in text
        assert (
            "does not measure outcome utility" in text.replace("\n", " ")
            or "outcome utility" in text
        )
        assert "grants no provider any activation" in text.replace("\n", " ")
    html = (out / "report.html").read_text()
    assert (
        "<script" not in html
        and 'http-equiv="Content-Security-Policy" content="default-src \'none\'' in html
    )


def test_include_queries_puts_the_text_in(ran: dict[str, Any], tmp_path: Path) -> None:
    plan = tiny_plan(tmp_path / "q", profiles=("scripted",), only=("q1", "q4"))
    proc = _run(
        plan, "--freeze", "--report", "out", "--include-queries", "--format", "json", env=ran["env"]
    )
    assert proc.returncode == 0, proc.stderr
    for name in ("report.html", "report.md", "report.json"):
        assert "which fruit is red" in (plan.parent / "out" / name).read_text()
    texts = json.loads(proc.stdout)["data"]["query_text"]
    assert [t["query_id"] for t in texts] == ["q1", "q4"]


def test_corpus_lock_refuses_a_one_byte_change(ran: dict[str, Any], tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(ran["plan"].parent, copy, ignore=shutil.ignore_patterns("out"))
    lock = json.loads((copy / "corpus.lock").read_text())
    assert lock["granularity"] == "file" and [d["path"] for d in lock["documents"]] == sorted(DOCS)
    doc = copy / "corpus" / "c.md"
    doc.write_bytes(doc.read_bytes().replace(b"cherries", b"cherriez"))  # same size, one byte
    proc = _run(copy / "plan.toml", env=ran["env"], timeout=60)
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[0] == (
        "error: corpus_changed: document c.md (same size, other bytes) differs from corpus.lock"
    )
    doc.write_bytes(doc.read_bytes() + b"\n")  # one byte more
    proc = _run(copy / "plan.toml", "--format", "json", env=ran["env"], timeout=60)
    assert proc.returncode == 1
    error = json.loads(proc.stdout)["error"]
    size = len(DOCS["c.md"].encode())
    assert (
        error["code"] == "corpus_changed"
        and f"c.md ({size} → {size + 1} bytes)" in error["message"]
    )
    assert "--freeze" in error["hint"]
    assert not (copy / "out").exists()


def test_a_changed_qrels_file_is_a_changed_corpus_too(ran: dict[str, Any], tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(ran["plan"].parent, copy, ignore=shutil.ignore_patterns("out"))
    (copy / "qrels.txt").write_text(
        (copy / "qrels.txt").read_text().replace("q2 0 c.md 1", "q2 0 c.md 2")
    )
    proc = _run(copy / "plan.toml", env=ran["env"], timeout=60)
    assert proc.returncode == 1 and "qrels.txt differs from corpus.lock" in proc.stderr


def test_the_html_report_renders_its_charts_in_chromium(
    ran: dict[str, Any], tmp_path: Path
) -> None:
    playwright = pytest.importorskip("playwright.sync_api")
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.skip("Debian's chromium is not installed (.ci/run installs it)")
    requests: list[str] = []
    errors: list[str] = []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1150, "height": 900})
        page.on("request", lambda r: requests.append(r.url))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto((ran["out"] / "report.html").as_uri())
        charts = {}
        for chart in ("chart-recall", "chart-latency"):
            box = page.locator(f"#{chart}").bounding_box()
            assert box is not None and box["width"] > 300 and box["height"] > 100, chart
            charts[chart] = box
        series = page.locator("#chart-recall polyline.series")
        assert series.count() == 2  # one line per profile
        for i in range(2):
            line = series.nth(i).bounding_box()
            assert line is not None and line["width"] > 100  # drawn across the k axis
        bars = page.locator("#chart-latency rect.bar")
        assert bars.count() == 8  # 2 profiles x (provider p50, p95, wall p50, p95)
        assert "grants no provider any activation" in page.locator("#statement").inner_text()
        page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
        browser.close()
    assert requests == [
        (ran["out"] / "report.html").as_uri()
    ]  # self-contained: nothing else is loaded
    assert errors == []
    assert (tmp_path / "report.png").stat().st_size > 10_000
