"""The scan progress ends at the true number of files listed: the parts of a parallel sweep add up.

Oracle: the files counted with os.walk in the test. (Before the fix a split
tree reported the loose files twice: `200000/?` on a 100k-file tree.)
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dcx.core.walk import walk
from dcx.core.workspace import Workspace


@pytest.mark.parametrize(
    ("tops", "subs"), [(1, 3), (8, 10)]
)  # serial, and split across forked workers
def test_the_last_progress_call_is_the_listed_total(fresh_ws: Path, tops: int, subs: int) -> None:
    docs = fresh_ws / "docs"
    for i in range(tops):
        for j in range(subs):
            folder = docs / f"t{i}" / f"s{j}"
            folder.mkdir(parents=True)
            for k in range(5):
                (folder / f"f{k}.md").write_text(f"{i} {j} {k}\n")
    (docs / "loose.md").write_text("top\n")
    (docs / "t0" / "mid.md").write_text("mid\n")
    expected = sum(len(files) for _, _, files in os.walk(docs))
    calls: list[tuple[int, ...]] = []
    walk(
        Workspace(fresh_ws),
        "docs",
        {"path": "docs"},
        max_scan_bytes=1 << 20,
        progress=lambda *args: calls.append(args),
    )
    assert calls[-1] == (expected, expected)
    assert all(args[0] <= expected for args in calls)
