"""Issue 11 §3: glob-match answers are kept with the stat cache and dropped when the globs change.

Oracle: the expected file sets are written down from the tree built here
(every `.md` outside `skip/`), not computed by pathspec.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dcx.core import sweep as sweep_module
from dcx.core import walk as walk_module
from dcx.core.statcache import StatCache, cache_path
from dcx.core.workspace import Workspace

SID = "source:docs"


def _tree(root: Path) -> set[str]:
    wanted = set()
    for top in ("a", "b", "c", "skip"):
        for sub in ("x", "y"):
            for n in range(4):
                for ext in ("md", "txt"):
                    rel = f"{top}/{sub}/f{n}.{ext}"
                    path = root / "docs" / rel
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(f"{rel}\n")
                    if ext == "md" and top != "skip":
                        wanted.add(rel)
    return wanted


@pytest.fixture
def counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = walk_module.glob_matcher

    def counted(include, exclude):
        match = real(include, exclude)
        if match is None:
            return None

        def m(rel: str) -> bool:
            calls.append(rel)
            return match(rel)

        return m

    monkeypatch.setattr(walk_module, "glob_matcher", counted)
    return calls


def _walk(root: Path, include: list[str], exclude: list[str]):
    locator = {"path": "docs", "include": include, "exclude": exclude}
    return walk_module.walk(Workspace(root), SID, locator, max_scan_bytes=1 << 20)


def test_warm_rescan_matches_no_path_again(fresh_ws: Path, counting: list[str]) -> None:
    wanted = _tree(fresh_ws)
    first = _walk(fresh_ws, ["**/*.md"], ["skip/"])
    assert set(first.files) == wanted and len(counting) == 64
    counting.clear()
    again = _walk(fresh_ws, ["**/*.md"], ["skip/"])
    assert set(again.files) == wanted
    assert counting == []  # every answer came from the cache
    (fresh_ws / "docs" / "a" / "new.md").write_text("new\n")  # a new path is matched, once
    third = _walk(fresh_ws, ["**/*.md"], ["skip/"])
    assert set(third.files) == wanted | {"a/new.md"} and counting == ["a/new.md"]


def test_changed_globs_are_matched_afresh(fresh_ws: Path, counting: list[str]) -> None:
    wanted = _tree(fresh_ws)
    _walk(fresh_ws, ["**/*.md"], ["skip/"])
    counting.clear()
    widened = _walk(fresh_ws, ["**/*.md", "**/*.txt"], ["skip/"])
    assert set(widened.files) == wanted | {p.replace(".md", ".txt") for p in wanted}
    assert len(counting) == 64
    narrowed = _walk(fresh_ws, ["**/*.md"], ["skip/", "a/"])
    assert set(narrowed.files) == {p for p in wanted if not p.startswith("a/")}
    unfiltered = walk_module.walk(
        Workspace(fresh_ws), SID, {"path": "docs"}, max_scan_bytes=1 << 20
    )
    assert len(unfiltered.files) == 64


def test_forked_sweeps_bring_their_rejections_home(
    fresh_ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wanted = _tree(fresh_ws)
    monkeypatch.setattr(sweep_module, "PARALLEL_MIN_FILES", 8)
    monkeypatch.setattr(sweep_module, "PARALLEL_MIN_DIRS", 2)
    monkeypatch.setattr(sweep_module, "SPLIT_DEPTH", 1)
    walked = _walk(fresh_ws, ["**/*.md"], ["skip/"])
    assert set(walked.files) == wanted
    cache = StatCache(cache_path(Workspace(fresh_ws), SID))
    key = walk_module._globs_key(("**/*.md",), ("skip/",))
    known, rejected = cache.glob_answers(key)
    assert set(known) == wanted and len(rejected) == 64 - len(wanted)
    assert cache.glob_answers(walk_module._globs_key(("**/*.md",), ())) == ((), ())
