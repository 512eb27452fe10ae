"""The fused sweep (``sweep_dirs``) against its plain statement (``sweep(iter_tree(...))``).

Oracle: the generic pipeline — list every file in directory order, then sort
each through ``_Sorter.settle`` with the cache's dict lookup — on the same
tree and the same stat cache. The fused loop finds hits by walking the
cache's sorted paths beside each directory's names in order; the trees here
are built to stress that: names that sort before and after '/', non-ASCII
names, subdirectories whose entries sort between a directory's files, new,
edited and deleted files, links inside and outside, globs under the same and
under other patterns.
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

import pytest

from dcx.core import sweep as sweep_module
from dcx.core.statcache import StatCache
from dcx.core.walk import glob_matcher, hash_and_kind

NAMES = ["a", "a-b", "a.b", "a b", "a0", "aA", "a_", "a~", "b", "é", "z", "A", "-", "a/"]


def _name(rng: random.Random) -> str:
    return rng.choice(NAMES[:-1]) + rng.choice(["", "x", "-1", ".md", ".txt", "é.md"])


def _build(root: Path, rng: random.Random, depth: int = 0) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for _ in range(rng.randint(0, 6)):
        name = _name(rng)
        path = root / name
        if path.exists():
            continue
        if depth < 3 and rng.random() < 0.3:
            _build(path, rng, depth + 1)
        else:
            path.write_text(f"{path.name} {rng.random()}\n")


def _hard_link(root: Path) -> None:
    """``l-link`` and ``m.md``: one file under two names, sorting next to each other; the globs
    reject the first, so the cache holds only the second, whose stat the first shares."""
    (root / "m.md").write_text("one inode, two names\n")
    os.link(root / "m.md", root / "l-link")


def _age(root: Path, seconds: float) -> None:
    past = time.time() - seconds
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            os.utime(path, (past, past))


def _mutate(root: Path, rng: random.Random) -> None:
    files = sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink())
    for path in files:
        if path.parent == root and path.name in ("m.md", "l-link"):
            continue
        roll = rng.random()
        if roll < 0.15:
            path.write_text("edited " + path.read_text())
            past = time.time() - 5
            os.utime(path, (past, past))
        elif roll < 0.25:
            path.unlink()
    dirs = [*sorted(p for p in root.rglob("*") if p.is_dir()), root]
    for directory in rng.sample(dirs, min(4, len(dirs))):
        new = directory / (_name(rng) + "-new")
        if not new.exists():
            if rng.random() < 0.5:
                new.write_text("new\n")
            else:
                (new / "inner.md").parent.mkdir(parents=True, exist_ok=True)
                (new / "inner.md").write_text("inner\n")
    (root / "link-out").symlink_to("/etc/hostname")
    (root / "link-dangling").symlink_to(root / "no-such-file")
    some = next((p for p in sorted(root.rglob("*")) if p.is_file() and not p.is_symlink()), None)
    if some is not None:
        (root / "link-in").symlink_to(some)


def _key(result: sweep_module.Sweep, cache: StatCache) -> tuple:
    return (
        sorted(cache.paths[i] for i in result.hits),
        sorted((rel, revision, kind) for rel, _, revision, kind, _ in result.hashed),
        sorted(result.rejected),
        sorted(result.oversized),
        sorted(result.unreadable),
        result.outside,
        result.done,
        result.timed_out,
    )


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("globs", [None, "same", "other"])
def test_fused_sweep_sorts_every_file_as_the_plain_pipeline(
    tmp_path: Path, seed: int, globs: str | None
) -> None:
    rng = random.Random(seed)
    top = tmp_path / "docs"
    _build(top, rng)
    _hard_link(top)
    _age(top, 60)
    include, exclude = (("**/*.md", "**/a*"), ("**/z*",)) if globs else ((), ())
    match = glob_matcher(include, exclude)
    cache = StatCache(tmp_path / "stat.bin")
    first = sweep_module.sweep(
        sweep_module.iter_tree([(str(top), "")], str(top), frozenset()),
        match=match,
        max_scan_bytes=1 << 20,
        probe=cache.prober(),
        hasher=hash_and_kind,
        deadline=None,
    )
    for rel, key, revision, kind, _ in first.hashed:
        cache.store(rel, key, revision, kind)
    cache.save()
    _mutate(top, rng)
    cache = StatCache(tmp_path / "stat.bin")
    assert cache.loaded_count == len(first.hashed)
    max_bytes = 28  # the edited files and some others are over it
    common = dict(
        match=match,
        max_scan_bytes=max_bytes,
        probe=cache.prober(),
        hasher=hash_and_kind,
        deadline=None,
    )
    plain = sweep_module.sweep(
        sweep_module.iter_tree([(str(top), "")], str(top), frozenset()), **common
    )
    fused = sweep_module.sweep_dirs(
        [(str(top), "")], str(top), frozenset(), cache.known(globs != "other"), **common
    )
    assert _key(fused, cache) == _key(plain, cache)
    EXERCISED[globs].update(
        name
        for name, used in (
            ("hits", plain.hits),
            ("hashed", plain.hashed),
            ("rejected", plain.rejected),
            ("oversized", plain.oversized),
            ("outside", plain.outside),
        )
        if used
    )


EXERCISED: dict[str | None, set[str]] = {None: set(), "same": set(), "other": set()}


def test_the_trees_exercised_every_path() -> None:
    """Runs after the cases above (file order): together they met every kind of file."""
    if not all(EXERCISED.values()):
        pytest.skip("run with the cases above")
    assert EXERCISED[None] == {"hits", "hashed", "oversized", "outside"}
    assert EXERCISED["same"] == EXERCISED["other"] == EXERCISED[None] | {"rejected"}
