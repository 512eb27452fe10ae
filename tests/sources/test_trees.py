"""Tree maps behind local-file cursors, and the stat cache's format."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dcx.core import trees
from dcx.core.canonical import canonical_bytes
from dcx.core.statcache import StatCache, stat_key
from dcx.core.workspace import Workspace

NAMES = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=20)


@given(
    st.dictionaries(NAMES, st.text(alphabet="0123456789abcdef", min_size=1, max_size=8), max_size=8)
)
def test_fast_tree_bytes_equal_rfc8785(entries: dict[str, str]) -> None:
    assert trees.pairs_bytes(entries) == canonical_bytes([list(p) for p in sorted(entries.items())])


def test_tree_is_stored_write_once_and_verified_on_load(fresh_ws: Path) -> None:
    ws = Workspace(fresh_ws)
    cursor = trees.store_tree(ws, {"b.md": "2" * 64, "a.md": "1" * 64})
    assert (
        cursor == "tree:" + trees.tree_digest({"a.md": "1" * 64, "b.md": "2" * 64})
        and len(cursor) <= 256
    )
    path = trees.tree_path(ws, trees.digest_of(cursor))
    assert path.stat().st_mode & 0o777 == 0o600
    assert trees.load_tree(ws, cursor) == {"a.md": "1" * 64, "b.md": "2" * 64}
    assert trees.load_tree(ws, None) == {}
    path.write_bytes(path.read_bytes().replace(b"1111", b"3333"))
    with pytest.raises(trees.TreeError) as err:
        trees.load_tree(ws, cursor)
    assert err.value.reason_code == "cursor_tree_missing"
    with pytest.raises(trees.TreeError) as err:
        trees.load_tree(ws, "tree:xyz")
    assert err.value.reason_code == "cursor_invalid"


def test_stat_cache_round_trips_and_survives_damage(tmp_path: Path) -> None:
    path = tmp_path / "stat.bin"
    st_a = os.stat(tmp_path)
    cache = StatCache(path)
    cache.store("a.md", stat_key(st_a), "ab" * 32, "text")
    cache.store("dir/bin", stat_key(st_a), "cd" * 32, "binary")
    cache.save(memo={"digest": "d"})
    again = StatCache(path)
    assert again.entries() == {
        "a.md": (st_a.st_size, st_a.st_mtime_ns, st_a.st_ino, st_a.st_ctime_ns, "ab" * 32, "text"),
        "dir/bin": (
            st_a.st_size,
            st_a.st_mtime_ns,
            st_a.st_ino,
            st_a.st_ctime_ns,
            "cd" * 32,
            "binary",
        ),
    }
    assert again.memo == {"digest": "d"}
    path.write_bytes(path.read_bytes()[:-3])  # truncated: a cold cache, never an error
    assert StatCache(path).entries() == {}


def test_changing_the_cache_drops_its_memo(tmp_path: Path) -> None:
    path = tmp_path / "stat.bin"
    st_a = os.stat(tmp_path)
    cache = StatCache(path)
    cache.store("a.md", stat_key(st_a), "ab" * 32)
    cache.save(memo={"digest": "d"})
    cache = StatCache(path)
    cache.store("b.md", stat_key(st_a), "cd" * 32)
    cache.save(seen={"a.md", "b.md"})
    assert StatCache(path).memo == {}
