"""`dcx report --html`: a self-contained page, checked in a real headless browser (SPEC §13).

Debian's chromium driven by Playwright (never a browser download). The page must
load nothing but itself, run no script, and draw the three charts from the
fixture's measures. `DCX_WRITE_SCREENSHOT=1` also refreshes docs/report.png.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from tests.support.workspace import REPO

FIXTURE = REPO / "fixtures" / "report"
WRITE_SCREENSHOT = (
    os.environ.get("DCX_WRITE_SCREENSHOT") == "1"
)  # read before the isolation fixture clears DCX_*


@pytest.fixture
def page_file(dcx, tmp_path: Path) -> Path:
    out = tmp_path / "report.html"
    result = dcx(
        "report",
        "-C",
        str(FIXTURE / "catalog"),
        "-C",
        str(FIXTURE / "checkout"),
        "--html",
        str(out),
    )
    assert result.exit_code == 0, result.stderr
    return out


def test_page_is_self_contained(page_file: Path) -> None:
    html = page_file.read_text()
    assert "<script" not in html.lower()
    assert not re.search(r"\b(?:src|href)\s*=", html, re.I)
    assert "default-src 'none'" in html
    # the only URI is the SVG namespace name, which is never fetched
    assert set(re.findall(r"https?://[^\"' ]+", html)) == {"http://www.w3.org/2000/svg"}
    assert str(FIXTURE) not in html and "/tmp" not in html  # no local path


def test_every_string_is_escaped(dcx) -> None:
    """Summaries are agent-written public text: they reach the page as text, never markup."""
    from dcx.core.workspace import Workspace
    from dcx.ops.report import report
    from dcx.report_html import render_html

    data = report(workspaces=[Workspace(FIXTURE / "catalog")]).data
    change = next(c for d in data["decisions"] for c in d["changes"])
    change["facts_added"][0]["summary"] = '<img src=x onerror="alert(1)"> & </ul>'
    html = render_html(data)
    assert (
        "<img" not in html
        and "&lt;img src=x onerror=&quot;alert(1)&quot;&gt; &amp; &lt;/ul&gt;" in html
    )


def test_html_folder_must_exist(dcx, tmp_path: Path) -> None:
    result = dcx(
        "report", "-C", str(FIXTURE / "catalog"), "--html", str(tmp_path / "nowhere" / "r.html")
    )
    assert result.exit_code == 2 and "--html" in result.stderr


def test_charts_render_in_headless_chromium(page_file: Path, tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("no system chromium (CI installs Debian's chromium in .ci/run)")
    requests: list[str] = []
    errors: list[str] = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1150, "height": 900})
            page.on("request", lambda r: requests.append(r.url))
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(page_file.as_uri())
            assert page.text_content("#gate") == "reproduced"
            # calibration: one dot per non-empty bin (0.2-0.4, 0.4-0.6, 0.6-0.8, 0.8-1.0)
            assert page.locator("#calibration circle.bin").count() == 4
            # acceptance: bm25 (accepted + stale) in both goals, the extension all rejected,
            # OpenViking all unavailable
            assert page.locator("#acceptance rect.seg-accepted").count() == 2
            assert page.locator("#acceptance rect.seg-stale").count() == 2
            assert page.locator("#acceptance rect.seg-rejected").count() == 1
            assert page.locator("#acceptance rect.seg-unavailable").count() == 1
            # timeline: one marker per decision
            assert page.locator("#timeline circle.decision").count() == 12
            for chart in ("#calibration", "#acceptance", "#timeline"):
                box = page.locator(chart).bounding_box()
                assert box and box["width"] > 200 and box["height"] > 100, chart
            shot = tmp_path / "report.png"
            page.screenshot(path=str(shot), full_page=True)
        finally:
            browser.close()
    assert requests == [page_file.as_uri()], requests
    assert errors == []
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
    if WRITE_SCREENSHOT:
        shutil.copy2(shot, REPO / "docs" / "report.png")


def test_the_page_says_what_the_text_says(dcx, page_file: Path) -> None:
    """Time to verified reads the same in text and HTML (hand-written spellings of the fixture's
    own seconds), and the settlement rows of the text table are on the page too."""
    data = dcx(
        "report",
        "-C",
        str(FIXTURE / "catalog"),
        "-C",
        str(FIXTURE / "checkout"),
        "--format",
        "json",
    ).json()["data"]
    text = dcx("report", "-C", str(FIXTURE / "catalog"), "-C", str(FIXTURE / "checkout")).stdout
    html = page_file.read_text()
    seconds = [
        d["time_to_verified_seconds"] for d in data["decisions"] if d["time_to_verified_seconds"]
    ]
    assert seconds, "the fixture has verified outcomes"
    for value in seconds:
        days, rest = value // 86400, value % 86400
        said = f"{days}d {rest // 3600}h" if days else f"{rest // 3600}h {rest % 3600 // 60}m"
        assert f"<td>{said}</td>" in html
    assert "seconds to verified" not in html
    for label in (
        "reviewed: approve / reject / defer / no change",
        "approved: verified / refuted / outcome due",
        "time to verified (median)",
    ):
        assert f"<th>{label}</th>" in html
        assert label.split(":")[0].split()[0] in text


def test_timeline_ticks_under_a_day_show_the_time() -> None:
    from dcx.report_html import timeline_svg

    decisions = [
        {"goal_id": "g", "decision_id": f"d{i}", "started_at": f"2026-12-01T{h:02d}:00:00Z",
         "outcome_at": f"2026-12-01T{h + 1:02d}:30:00Z", "outcome": "verified", "changes": []}
        for i, h in enumerate((8, 12))
    ]  # fmt: skip
    ticks = re.findall(r'text-anchor="middle">([^<]+)</text>', timeline_svg(decisions, ["g"]))
    assert ticks[0] == "12-01 08:00" and ticks[-1] == "12-01 13:30"
    assert len(set(ticks)) == len(ticks)  # no tick repeats another
    long = [dict(decisions[0]), dict(decisions[1], outcome_at="2026-12-09T00:00:00Z")]
    ticks = re.findall(r'text-anchor="middle">([^<]+)</text>', timeline_svg(long, ["g"]))
    assert ticks[0] == "2026-12-01" and ticks[-1] == "2026-12-09"
