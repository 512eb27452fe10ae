"""The local-file adapter through the plane API (SPEC §5.3): each judged behaviour its own test."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from dcx.core import trees
from dcx.core.clock import FixedClock
from dcx.sources.plane import (
    exact_read_item,
    exact_read_scan,
    read_complete,
    scan_source,
    scan_sources,
    select_sources,
)
from dcx.state.cursors import write_cursors
from tests.support.sources import (
    binding_block,
    configure,
    docs_registry,
    file_revision,
    plane,
    source_block,
)

CLOCK = FixedClock("2026-11-29T18:00:00Z")
DOCS = {
    "docs": {"a.md": "alpha", "b.md": "beta", "sub": {"c.md": "gamma"}, "skip.txt": "not markdown"}
}


def _age(root: Path) -> None:
    """Make every file older than any cache write, so the racy rule does not force re-hashing."""
    old = time.time() - 100
    for path in (root / "docs").rglob("*"):
        os.utime(path, (old, old), follow_symlinks=False)


def _scan(
    root: Path, source_id: str = "source:docs", committed: dict[str, str] | None = None, **profile
):
    _ws, _prof, registry, providers = plane(root, **profile)
    source = registry.source(source_id)
    cursor = (committed or {}).get(source_id) if source.scan_mode != "snapshot" else None
    return scan_source(providers, source, cursor_before=cursor, clock=CLOCK), providers


def _commit(root: Path, scan) -> dict[str, str]:
    from dcx.core.workspace import Workspace

    committed = {scan.source_id: scan.cursor_after}
    write_cursors(Workspace(root), committed)  # what the commit path does, under its lock
    return committed


def _changes(scan) -> dict[str, str]:
    return {item.resource_ref: item.change for item in scan.items}


@pytest.fixture
def docs(fresh_ws: Path, tree) -> Path:
    tree(fresh_ws, DOCS)
    _age(fresh_ws)
    docs_registry(fresh_ws)
    return fresh_ws


def test_first_scan_is_completed_with_every_file_an_item(docs: Path) -> None:
    scan, _ = _scan(docs)
    assert scan.status == "completed" and scan.reason_code is None
    assert _changes(scan) == {"a.md": "added", "b.md": "added", "sub/c.md": "added"}
    assert [i.resource_ref for i in scan.items] == ["a.md", "b.md", "sub/c.md"]  # path order
    assert (
        scan.items[0].revision == file_revision(b"alpha")
        and scan.items[0].observed_at == CLOCK.now()
    )
    assert scan.cursor_before is None and scan.cursor_after.startswith("tree:")
    assert trees.load_tree(plane(docs)[0], scan.cursor_after) == {
        "a.md": file_revision(b"alpha"),
        "b.md": file_revision(b"beta"),
        "sub/c.md": file_revision(b"gamma"),
    }


def test_rescan_after_commit_is_no_change(docs: Path) -> None:
    first, _ = _scan(docs)
    committed = _commit(docs, first)
    again, _ = _scan(docs, committed=committed)
    assert again.status == "no_change" and again.items == ()
    assert again.cursor_before == again.cursor_after == first.cursor_after
    assert again.telemetry.hashed == 0  # answered by the stat cache


def test_scanning_alone_marks_nothing_absorbed(docs: Path) -> None:
    first, _ = _scan(docs)
    second, _ = _scan(docs)  # no commit in between
    assert second.status == "completed" and _changes(second) == _changes(first)


def test_touch_without_changing_bytes_is_no_change(docs: Path) -> None:
    committed = _commit(docs, _scan(docs)[0])
    os.utime(docs / "docs" / "a.md")  # new mtime, same bytes
    again, _ = _scan(docs, committed=committed)
    assert again.status == "no_change" and again.telemetry.hashed == 1


def test_edit_add_and_delete_are_reported_as_such(docs: Path) -> None:
    committed = _commit(docs, _scan(docs)[0])
    (docs / "docs" / "a.md").write_text("alpha, edited")
    (docs / "docs" / "new.md").write_text("brand new")
    (docs / "docs" / "b.md").unlink()
    scan, _ = _scan(docs, committed=committed)
    assert scan.status == "completed"
    assert _changes(scan) == {"a.md": "modified", "b.md": "deleted", "new.md": "added"}
    deleted = next(i for i in scan.items if i.change == "deleted")
    assert deleted.revision == "deleted" and deleted.content_kind == "deleted"
    assert trees.load_tree(plane(docs)[0], scan.cursor_after) == {
        "a.md": file_revision(b"alpha, edited"),
        "new.md": file_revision(b"brand new"),
        "sub/c.md": file_revision(b"gamma"),
    }


def test_changes_stay_relative_to_the_committed_cursor(docs: Path) -> None:
    committed = _commit(docs, _scan(docs)[0])
    (docs / "docs" / "a.md").write_text("one")
    _scan(docs, committed=committed)  # scanned but not committed
    (docs / "docs" / "b.md").write_text("two")
    scan, _ = _scan(docs, committed=committed)
    assert _changes(scan) == {"a.md": "modified", "b.md": "modified"}


def test_max_changes_caps_items_in_path_order_and_the_cursor_covers_exactly_them(
    fresh_ws: Path, tree
) -> None:
    tree(fresh_ws, {"docs": {f"f{i}.md": f"file {i}" for i in range(5)}})
    configure(
        fresh_ws, binding_block() + source_block("source:docs", '"docs"', extra="max_changes = 2\n")
    )
    first, _ = _scan(fresh_ws)
    assert first.status == "completed" and first.telemetry.result_cap_applied
    assert [i.resource_ref for i in first.items] == ["f0.md", "f1.md"]
    ws = plane(fresh_ws)[0]
    assert sorted(trees.load_tree(ws, first.cursor_after)) == ["f0.md", "f1.md"]
    committed = _commit(fresh_ws, first)
    second, _ = _scan(fresh_ws, committed=committed)
    assert [i.resource_ref for i in second.items] == [
        "f2.md",
        "f3.md",
    ] and second.telemetry.result_cap_applied
    committed = _commit(fresh_ws, second)
    third, _ = _scan(fresh_ws, committed=committed)
    assert [i.resource_ref for i in third.items] == [
        "f4.md"
    ] and not third.telemetry.result_cap_applied
    committed = _commit(fresh_ws, third)
    assert _scan(fresh_ws, committed=committed)[0].status == "no_change"


def test_snapshot_compares_with_an_empty_cursor_every_time(fresh_ws: Path, tree) -> None:
    tree(fresh_ws, {"docs": {"a.md": "alpha"}})
    configure(
        fresh_ws, binding_block() + source_block("source:snap", '"docs"', scan_mode="snapshot")
    )
    first, _ = _scan(fresh_ws, "source:snap")
    committed = _commit(fresh_ws, first)
    again, _ = _scan(fresh_ws, "source:snap", committed=committed)
    assert again.cursor_before is None and _changes(again) == {"a.md": "added"}


@pytest.mark.parametrize(
    ("locator", "reason"),
    [
        ('"../outside"', "locator_outside_root"),
        ('"escape"', "locator_outside_root"),
        ('".decision-context/private"', "locator_inside_workspace"),
        ('"missing"', "locator_missing"),
    ],
)
def test_locator_outside_the_root_is_refused(
    fresh_ws: Path, tmp_path: Path, tree, locator: str, reason: str
) -> None:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.md").write_text("outside the goal")
    (fresh_ws / "escape").symlink_to(tmp_path / "outside")
    tree(fresh_ws, {"docs": {"a.md": "alpha"}})
    configure(
        fresh_ws,
        binding_block()
        + source_block("source:bad", locator)
        + source_block("source:docs", '"docs"'),
    )
    _ws, _profile, registry, providers = plane(fresh_ws)
    scans = scan_sources(providers, select_sources(registry), committed={}, clock=CLOCK)
    bad, good = scans
    assert (bad.status, bad.reason_code, bad.items, bad.cursor_after) == (
        "unavailable",
        reason,
        (),
        None,
    )
    assert good.status == "completed"


def test_on_demand_source_is_skipped_unless_named(fresh_ws: Path, tree) -> None:
    tree(fresh_ws, {"docs": {"a.md": "alpha"}})
    configure(
        fresh_ws,
        binding_block()
        + source_block("source:docs", '"docs"')
        + source_block("source:later", '"docs"', scan_mode="on_demand")
        + source_block("source:off", '"docs"', extra="enabled = false\n"),
    )
    registry = plane(fresh_ws)[2]
    assert [s.source_id for s in select_sources(registry)] == ["source:docs"]
    assert [s.source_id for s in select_sources(registry, ["source:later"])] == ["source:later"]


def test_file_changed_between_scan_and_exact_read_fails_the_read_and_proposes_no_cursor(
    docs: Path,
) -> None:
    scan, providers = _scan(docs)
    (docs / "docs" / "b.md").write_text("beta, changed after the scan")
    reads = exact_read_scan(providers, scan, clock=CLOCK)
    assert reads["a.md"].status == "verified" and reads["a.md"].content == "alpha"
    assert (reads["b.md"].status, reads["b.md"].reason_code, reads["b.md"].content) == (
        "failed",
        "exact_read_revision_mismatch",
        None,
    )
    assert not read_complete(scan, reads)
    assert not read_complete(scan, reads)  # no cursor to propose
    (docs / "docs" / "b.md").write_text("beta")  # back to the scanned bytes: now it reads
    reads = exact_read_scan(providers, scan, clock=CLOCK)
    assert read_complete(scan, reads)  # scan.cursor_after may be proposed


def test_exact_read_terminal_outcomes_binary_oversize_deleted(fresh_ws: Path, tree) -> None:
    tree(
        fresh_ws,
        {"docs": {"bin.dat": b"\xff\xfe\x00binary", "big.md": "x" * 64, "gone.md": "soon gone"}},
    )
    configure(fresh_ws, binding_block() + source_block("source:docs", '"docs"'), max_read_bytes=32)
    first, providers = _scan(fresh_ws)
    kinds = {i.resource_ref: i.content_kind for i in first.items}
    assert kinds == {"big.md": "text", "bin.dat": "binary", "gone.md": "text"}
    committed = _commit(fresh_ws, first)
    (fresh_ws / "docs" / "gone.md").unlink()
    (fresh_ws / "docs" / "bin.dat").write_bytes(b"\xff\xfe\x00binary, v2")
    (fresh_ws / "docs" / "big.md").write_text("y" * 64)
    scan, providers = _scan(fresh_ws, committed=committed)
    reads = exact_read_scan(providers, scan, clock=CLOCK)
    assert {k: (r.status, r.reason_code, r.content) for k, r in reads.items()} == {
        "big.md": ("oversize", "exact_read_oversize", None),
        "bin.dat": ("binary", "exact_read_not_text", None),
        "gone.md": ("deleted", None, None),
    }
    assert all(r.absorbed for r in reads.values()) and read_complete(scan, reads)


def test_deleted_item_that_came_back_is_a_mismatch(docs: Path) -> None:
    committed = _commit(docs, _scan(docs)[0])
    (docs / "docs" / "a.md").unlink()
    scan, providers = _scan(docs, committed=committed)
    (docs / "docs" / "a.md").write_text("back again")
    read = exact_read_item(providers, scan, scan.items[0], clock=CLOCK)
    assert (read.status, read.reason_code) == ("failed", "exact_read_revision_mismatch")


def test_material_change_policy_skips_deletions_and_never_reads_nothing(
    fresh_ws: Path, tree
) -> None:
    tree(fresh_ws, {"docs": {"a.md": "alpha", "b.md": "beta"}})
    configure(
        fresh_ws,
        binding_block()
        + source_block("source:m", '"docs"', policy="material_change")
        + source_block("source:n", '"docs"', policy="never"),
    )
    committed = _commit(fresh_ws, _scan(fresh_ws, "source:m")[0])
    (fresh_ws / "docs" / "a.md").unlink()
    (fresh_ws / "docs" / "b.md").write_text("beta 2")
    scan, providers = _scan(fresh_ws, "source:m", committed=committed)
    assert sorted(exact_read_scan(providers, scan, clock=CLOCK)) == ["b.md"]
    never, providers = _scan(fresh_ws, "source:n")
    assert exact_read_scan(providers, never, clock=CLOCK) == {}


def test_exact_read_refuses_an_item_escaping_the_locator(docs: Path) -> None:
    scan, providers = _scan(docs)
    forged = scan.items[0]._replace(resource_ref="../../.decision-context/private/key")
    read = exact_read_item(providers, scan, forged, clock=CLOCK)
    assert (read.status, read.reason_code, read.content) == ("failed", "locator_outside_root", None)


def test_exact_read_past_its_deadline_is_a_transient_timeout(docs: Path) -> None:
    scan, providers = _scan(docs)
    read = exact_read_item(
        providers, scan, scan.items[0], clock=CLOCK, deadline=time.monotonic() - 1
    )
    assert (read.status, read.reason_code) == ("failed", "exact_read_timeout")


def test_scan_timeout_is_enforced_and_keeps_the_cursor(fresh_ws: Path, tree) -> None:
    tree(fresh_ws, {"docs": {f"f{i:03d}.md": f"text {i}" for i in range(200)}})
    configure(fresh_ws, binding_block() + source_block("source:docs", '"docs"'))
    scan, _ = _scan(
        fresh_ws, scan_timeout_seconds=0
    )  # the walker checks its deadline cooperatively
    assert (scan.status, scan.reason_code, scan.cursor_after) == (
        "unavailable",
        "scan_timeout",
        None,
    )


def test_unknown_committed_cursor_is_unavailable_not_a_rescan(docs: Path) -> None:
    scan, _ = _scan(docs, committed={"source:docs": "tree:" + "0" * 64})
    assert (scan.status, scan.reason_code) == ("unavailable", "cursor_tree_missing")
    scan, _ = _scan(docs, committed={"source:docs": "seq:12"})
    assert (scan.status, scan.reason_code) == ("unavailable", "cursor_invalid")


def test_local_file_with_config_is_a_configuration_failure(fresh_ws: Path, tree) -> None:
    tree(fresh_ws, {"docs": {"a.md": "alpha"}})
    configure(
        fresh_ws, binding_block(config='{ root = "/etc" }') + source_block("source:docs", '"docs"')
    )
    scan, _ = _scan(fresh_ws)
    assert (scan.status, scan.reason_code) == ("unavailable", "provider_configuration_failed")


def test_oversize_file_is_skipped_never_reported_deleted(fresh_ws: Path, tree) -> None:
    tree(fresh_ws, {"docs": {"a.md": "small", "b.md": "also small"}})
    configure(fresh_ws, binding_block() + source_block("source:docs", '"docs"'))
    committed = _commit(fresh_ws, _scan(fresh_ws)[0])
    (fresh_ws / "docs" / "b.md").write_text("now far too large " * 10)
    scan, _ = _scan(fresh_ws, committed=committed, max_scan_bytes=64)
    assert scan.status == "no_change" and scan.telemetry.skipped_oversize == 1
    assert scan.cursor_after == committed["source:docs"]
