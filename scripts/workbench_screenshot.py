"""Regenerate docs/workbench.png: the workbench on a copy of the example goal, after one recall.

Usage: .venv/bin/python scripts/workbench_screenshot.py   (needs Debian's chromium and playwright)
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

REPO = Path(__file__).resolve().parents[1]
DCX = str(Path(sys.executable).parent / "dcx")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        goal = Path(tmp) / "goal"
        shutil.copytree(
            REPO / ".dcx-example", goal, ignore=shutil.ignore_patterns("private", "*.lock")
        )
        env = {**os.environ, "DCX_NOW": "2026-11-29T18:00:00Z"}
        subprocess.run(
            [DCX, "-C", str(goal), "init", "--goal-id", "catalog-cache-ttl"],
            env=env,
            capture_output=True,
            check=False,
        )
        subprocess.run([DCX, "-C", str(goal), "index"], env=env, check=True, capture_output=True)
        proc = subprocess.Popen(
            [DCX, "-C", str(goal), "workbench"], env=env, stdout=subprocess.PIPE, text=True
        )
        try:
            assert proc.stdout is not None
            url = next(line.strip() for line in proc.stdout if line.startswith("http://"))
            with sync_playwright() as p:
                browser = p.chromium.launch(
                    executable_path=shutil.which("chromium"), args=["--no-sandbox"]
                )
                page = browser.new_page(viewport={"width": 1280, "height": 860})
                page.goto(url)
                page.click("#inspect")
                page.wait_for_function(
                    "document.getElementById('activation').textContent.length > 0"
                )
                page.fill("#query", "how do I roll back the catalog cache TTL")
                page.fill("#summary", "TTL rollback steps")
                page.click("#recall")
                page.wait_for_selector("#hits li")
                page.screenshot(path=str(REPO / "docs" / "workbench.png"), full_page=True)
                browser.close()
        finally:
            proc.send_signal(2)
            proc.wait(timeout=10)
    print("wrote docs/workbench.png")


if __name__ == "__main__":
    main()
