"""The workbench page in a real headless Chromium (Debian's `chromium`, driven by Playwright).

The browser is the oracle here: it runs the page's script under its CSP,
so a payload in a recalled document that the page let through as HTML would
really execute. Skipped when no chromium is installed, except in CI.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.workbench import Workbench, hostile_goal, running

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None and not os.environ.get("CI"):
    pytest.skip("no chromium here (CI installs it)", allow_module_level=True)

if os.environ.get("CI"):
    from playwright import sync_api  # CI installs it: missing is a failure there, not a skip
else:
    sync_api = pytest.importorskip("playwright.sync_api")


@pytest.fixture
def bench(example: Path) -> Iterator[Workbench]:
    with running(hostile_goal(example)) as wb:
        yield wb


@pytest.fixture
def page() -> Iterator[object]:
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.set_default_timeout(
                60_000
            )  # a loaded CI machine is slow; the checks are not about time
            yield page
        finally:
            browser.close()


def test_try_a_query_read_hits_as_text_and_clear(bench: Workbench, page) -> None:
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(bench.url)
    # the token leaves the address bar once the page holds it
    assert "token" not in page.url
    assert "catalog-cache-ttl" in page.inner_text("#who") and "agent-a" in page.inner_text("#who")
    assert 'goal_id = "catalog-cache-ttl"' in page.input_value("#profile")

    page.click("#inspect")
    # a selector wait: wait_for_function's string predicate is eval, which the page's CSP refuses
    page.wait_for_selector("#activation:not(:empty)")
    assert "activation: available" in page.inner_text("#activation")

    page.fill("#query", "purge queue rollback drill")
    page.fill("#summary", "rollback drill")
    page.click("#recall")
    page.wait_for_selector("#hits li")
    hits = page.locator("#hits li")
    assert hits.count() >= 1
    texts = [hits.nth(i).inner_text() for i in range(hits.count())]
    assert all("UNTRUSTED ADVISORY" in text.upper() for text in texts)
    hostile = next(text for text in texts if "<script>" in text)
    assert "hostile-note.md (source:authority:docs)" in hostile  # which file the hit came from
    # shown as text, and nothing in it ran or became an element
    assert '<img src=x onerror="window.__pwned=1">' in hostile and "<b>bold?</b>" in hostile
    assert page.evaluate("window.__pwned === undefined")
    assert page.locator("#hits img, #hits script, #hits b").count() == 0
    assert page.is_visible("#banner")
    assert "bm25" in page.inner_text("#recall-status")

    page.click("#clear")
    assert page.input_value("#profile") == "" and page.input_value("#query") == ""
    assert page.locator("#hits li").count() == 0
    assert errors == []


def test_unavailable_shows_the_reason_and_hint_and_retry_uses_the_same_path(
    bench: Workbench, page
) -> None:
    page.goto(bench.url)
    text = page.input_value("#profile").replace('provider = "bm25"', 'provider = "none"')
    page.fill("#profile", text)
    page.fill("#query", "anything")
    page.click("#recall")
    page.wait_for_selector("#retry:not([hidden])")
    status = page.inner_text("#recall-status")
    assert "context_provider_disabled" in status and "hint:" in status
    page.fill("#profile", text.replace('provider = "none"', 'provider = "bm25"'))
    page.click("#retry")  # the same request again: the profile it was sent with
    page.wait_for_selector("#retry:not([hidden])")
    assert "context_provider_disabled" in page.inner_text("#recall-status")


def test_a_refused_profile_names_the_key(bench: Workbench, page) -> None:
    page.goto(bench.url)
    page.fill(
        "#profile", page.input_value("#profile").replace("max_results = 2", "max_results = 99")
    )
    page.click("#inspect")
    # a selector wait: wait_for_function's string predicate is eval, which the page's CSP refuses
    page.wait_for_selector("#activation:not(:empty)")
    assert "context_provider.max_results" in page.inner_text("#activation")


def test_a_page_from_another_origin_cannot_call_the_api(bench: Workbench, page) -> None:
    # a page served elsewhere (here: about:blank) posting with the stolen token is refused by Origin
    page.goto("about:blank")
    status = page.evaluate(
        """async ([url, token]) => {
            try {
              const r = await fetch(url + "/api/inspect", {method: "POST", headers: {"Content-Type":
                "application/json", "X-DCX-Token": token}, body: "{}"});
              return r.status;
            } catch (e) { return "blocked"; }
        }""",
        [bench.origin, bench.token],
    )
    assert status in (403, "blocked")
