from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from dcx.core.walk import LocatorError, WalkTimeout, resolve_locator, walk
from dcx.core.workspace import Workspace
from tests.support.sources import file_revision

BIG = 1 << 30


def _ws(fresh_ws: Path) -> Workspace:
    return Workspace(fresh_ws)


def test_walk_tree_with_globs_and_exclusions(fresh_ws: Path, tree) -> None:
    tree(
        fresh_ws,
        {
            "docs": {"a.md": "alpha", "b.txt": "beta", "sub": {"c.md": "gamma"}, "skip.md": "x"},
            ".git": {"x.md": "no"},
        },
    )
    result = walk(
        _ws(fresh_ws),
        "s",
        {"path": "docs", "include": ["**/*.md"], "exclude": ["skip.md"]},
        max_scan_bytes=BIG,
    )
    assert sorted(result.files) == ["a.md", "sub/c.md"]
    assert result.files["a.md"].revision == file_revision(b"alpha")
    assert result.abspath("sub/c.md").read_text() == "gamma"


def test_goal_root_locator_excludes_workspace_and_git(fresh_ws: Path, tree) -> None:
    tree(fresh_ws, {"a.md": "alpha", ".git": {"HEAD": "ref"}})
    result = walk(_ws(fresh_ws), "s", {"path": "."}, max_scan_bytes=BIG)
    assert sorted(result.files) == ["a.md"]


def test_single_file_locator(fresh_ws: Path, tree) -> None:
    tree(fresh_ws, {"docs": {"plan.md": "plan"}})
    result = walk(_ws(fresh_ws), "s", {"path": "docs/plan.md"}, max_scan_bytes=BIG)
    assert list(result.files) == ["plan.md"] and result.abspath("plan.md").read_text() == "plan"


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("../elsewhere", "locator_outside_root"),
        (".decision-context/private", "locator_inside_workspace"),
        ("missing", "locator_missing"),
        ("link-out", "locator_outside_root"),
    ],
)
def test_locator_refusals(fresh_ws: Path, tmp_path: Path, path: str, reason: str) -> None:
    (tmp_path / "elsewhere").mkdir()
    (fresh_ws / "link-out").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(LocatorError) as err:
        resolve_locator(_ws(fresh_ws), {"path": path})
    assert err.value.reason_code == reason


def test_absolute_locator_outside_root_is_allowed(fresh_ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "shared-docs"
    outside.mkdir()
    (outside / "x.md").write_text("x")
    assert list(walk(_ws(fresh_ws), "s", {"path": str(outside)}, max_scan_bytes=BIG).files) == [
        "x.md"
    ]


def test_symlinks_outside_tree_are_counted_not_followed_and_loops_are_safe(
    fresh_ws: Path, tmp_path: Path, tree
) -> None:
    tree(fresh_ws, {"docs": {"a.md": "a", "inner": {"b.md": "b"}}})
    (tmp_path / "secret.md").write_text("outside")
    docs = fresh_ws / "docs"
    (docs / "out.md").symlink_to(tmp_path / "secret.md")
    (docs / "in.md").symlink_to(docs / "a.md")
    (docs / "loop").symlink_to(docs)
    result = walk(_ws(fresh_ws), "s", {"path": "docs"}, max_scan_bytes=BIG)
    assert sorted(result.files) == ["a.md", "in.md", "inner/b.md"]
    assert result.skipped_outside_locator == 1


def test_oversize_files_are_skipped_unhashed(fresh_ws: Path, tree) -> None:
    tree(fresh_ws, {"docs": {"small.md": "x", "big.md": "y" * 100}})
    result = walk(_ws(fresh_ws), "s", {"path": "docs"}, max_scan_bytes=50)
    assert list(result.files) == ["small.md"] and result.skipped_oversize == 1


def test_stat_cache_avoids_rehash_and_catches_edits(fresh_ws: Path, tree) -> None:
    tree(fresh_ws, {"docs": {f"f{i}.md": f"text {i}" for i in range(5)}})
    ws = _ws(fresh_ws)
    old = time.time() - 10
    for p in (fresh_ws / "docs").iterdir():
        os.utime(p, (old, old))
    first = walk(ws, "s", {"path": "docs"}, max_scan_bytes=BIG)
    assert first.hashed == 5
    second = walk(ws, "s", {"path": "docs"}, max_scan_bytes=BIG)
    assert second.hashed == 0 and second.files == first.files
    (fresh_ws / "docs" / "f1.md").write_text("changed!")  # same size class, new mtime
    third = walk(ws, "s", {"path": "docs"}, max_scan_bytes=BIG)
    assert third.hashed == 1 and third.files["f1.md"].revision == file_revision(b"changed!")


def test_racily_clean_file_is_rehashed(fresh_ws: Path, tree) -> None:
    tree(fresh_ws, {"docs": {"a.md": "aaaa"}})
    ws = _ws(fresh_ws)
    walk(ws, "s", {"path": "docs"}, max_scan_bytes=BIG)
    cache = next((fresh_ws / ".decision-context/private/cache").glob("stat-*.bin"))
    path = fresh_ws / "docs" / "a.md"
    path.write_text("bbbb")  # same size
    st = os.stat(cache)
    os.utime(path, ns=(st.st_mtime_ns, st.st_mtime_ns))  # same tick as the cache write
    result = walk(ws, "s", {"path": "docs"}, max_scan_bytes=BIG)
    assert result.files["a.md"].revision == file_revision(b"bbbb")


def test_deadline_raises_but_keeps_hashes(fresh_ws: Path, tree) -> None:
    tree(fresh_ws, {"docs": {f"f{i}.md": "x" for i in range(200)}})
    with pytest.raises(WalkTimeout):
        walk(
            _ws(fresh_ws), "s", {"path": "docs"}, max_scan_bytes=BIG, deadline=time.monotonic() - 1
        )


class _Ticks:
    """A monotonic clock that advances one second per reading (a controlled deadline)."""

    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        self.now += 1
        return self.now


def test_timeout_while_hashing_keeps_the_hashes_made(fresh_ws: Path, tree, monkeypatch) -> None:
    import dcx.core.sweep as sweep_module
    from dcx.core.statcache import StatCache, cache_path

    tree(fresh_ws, {"docs": {f"f{i}.md": f"text {i}" for i in range(10)}})
    monkeypatch.setattr(sweep_module, "time", _Ticks())  # the sweep reads it once per hashed file
    with pytest.raises(WalkTimeout):
        walk(_ws(fresh_ws), "s", {"path": "docs"}, max_scan_bytes=BIG, deadline=3.5)
    kept = StatCache(cache_path(_ws(fresh_ws), "s")).entries()
    assert (
        len(kept) == 4
    )  # readings 1..3 pass, the 4th hash is stored, then the deadline is found passed


def test_parallel_sweep_gives_the_serial_result(fresh_ws: Path, tree, monkeypatch) -> None:
    import dcx.core.forks as forks_module
    import dcx.core.sweep as sweep_module

    tree(
        fresh_ws,
        {
            "docs": {
                f"d{a}": {f"s{b}": {f"f{c}.md": f"{a}{b}{c}" for c in range(5)} for b in range(4)}
                for a in range(3)
            }
            | {"top.md": "loose", "bin.dat": b"\xff"}
        },
    )
    ws = _ws(fresh_ws)
    serial = walk(ws, "serial", {"path": "docs"}, max_scan_bytes=BIG, digest=True)
    monkeypatch.setattr(sweep_module, "PARALLEL_MIN_FILES", 1)
    monkeypatch.setattr(sweep_module.os, "cpu_count", lambda: 3)
    forks = []
    real_fork = forks_module._fork
    monkeypatch.setattr(
        forks_module, "_fork", lambda work, share: forks.append(share) or real_fork(work, share)
    )
    cold = walk(
        ws, "parallel", {"path": "docs"}, max_scan_bytes=BIG, digest=True
    )  # empty cache: serial
    (fresh_ws / "docs" / "d1" / "s2" / "f3.md").write_text("changed")
    (fresh_ws / "docs" / "d2" / "s0" / "f0.md").unlink()
    os.utime(fresh_ws / "docs", (time.time() - 5, time.time() - 5))
    monkeypatch.setattr(sweep_module, "PARALLEL_MIN_FILES", 10**9)
    warm_serial = walk(ws, "serial", {"path": "docs"}, max_scan_bytes=BIG, digest=True)
    monkeypatch.setattr(sweep_module, "PARALLEL_MIN_FILES", 1)
    warm = walk(
        ws, "parallel", {"path": "docs"}, max_scan_bytes=BIG, digest=True
    )  # forked children
    assert cold.files == serial.files and len(serial.files) == 62
    assert warm.files == warm_serial.files and len(warm.files) == 61
    assert warm.files["d1/s2/f3.md"].revision == file_revision(b"changed")
    assert warm.digest == warm_serial.digest and warm.hashed == 1
    assert len(forks) == 2 and all(forks)  # two children swept a share each; the parent the third


def test_cold_tree_with_many_directories_is_hashed_in_parallel(
    fresh_ws: Path, tree, monkeypatch
) -> None:
    import dcx.core.forks as forks_module
    import dcx.core.sweep as sweep_module

    tree(
        fresh_ws,
        {
            "docs": {
                f"d{a}": {f"s{b}": {f"f{c}.md": f"{a}{b}{c}" for c in range(3)} for b in range(5)}
                for a in range(4)
            }
            | {"bin.dat": b"\xff\x00"}
        },
    )
    old = time.time() - 10  # older than any cache write: no racily clean entry
    for path in (fresh_ws / "docs").rglob("*"):
        os.utime(path, (old, old))
    ws = _ws(fresh_ws)
    serial = walk(ws, "serial", {"path": "docs"}, max_scan_bytes=BIG, digest=True)
    monkeypatch.setattr(sweep_module, "PARALLEL_MIN_DIRS", 4)
    monkeypatch.setattr(sweep_module.os, "cpu_count", lambda: 2)
    forks = []
    real_fork = forks_module._fork
    monkeypatch.setattr(
        forks_module, "_fork", lambda work, share: forks.append(share) or real_fork(work, share)
    )
    cold = walk(ws, "parallel", {"path": "docs"}, max_scan_bytes=BIG, digest=True)
    assert len(forks) == 1 and cold.hashed == serial.hashed == 61
    assert cold.files == serial.files and cold.digest == serial.digest
    assert cold.files["bin.dat"].kind == "binary"
    again = walk(
        ws, "parallel", {"path": "docs"}, max_scan_bytes=BIG, digest=True
    )  # the children's hashes were cached
    assert again.hashed == 0 and again.digest == serial.digest
