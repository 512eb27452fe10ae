"""Scan receipt, coverage and freshness packets built from real scans (snapshots: fixed clock and key)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dcx.core.clock import FixedClock
from dcx.core.envelope import PacketContext
from dcx.core.workspace import Workspace
from dcx.evidence import builders
from dcx.packets import scan
from dcx.sources.plane import exact_read_scan, scan_sources, select_sources
from dcx.state.cursors import write_cursors
from dcx.state.keys import load_key
from dcx.state.refmap import RefMinter, reveal
from tests.support.sources import binding_block, configure, plane, source_block

CLOCK = FixedClock("2026-11-29T18:00:00Z")


def _row(cov: dict, priority: str) -> dict:
    return next(
        r for r in cov["priorities"] if r["priority"] == priority
    )  # records sort canonically


@pytest.fixture
def world(fresh_ws: Path, tree):
    tree(
        fresh_ws,
        {
            "docs": {"a.md": "alpha", "b.md": "beta", "c.bin": b"\xff\x00"},
            "notes": {"n.md": "note"},
        },
    )
    configure(
        fresh_ws,
        binding_block()
        + source_block("source:docs", '"docs"')
        + source_block("source:gone", '"nowhere"', priority="p1")
        + source_block("source:later", '"notes"', scan_mode="on_demand")
        + source_block("source:p2", '"notes"', priority="p2", policy="never"),
    )
    ws, _profile, registry, providers = plane(fresh_ws)
    key = load_key(ws)
    return ws, registry, providers, key


def _ctx(key, decision_id=None) -> PacketContext:
    return PacketContext(goal_id="goal-test", key_id=key.key_id, decision_id=decision_id)


def test_receipts_coverage_and_freshness_snapshot(world, snapshot_json) -> None:
    ws, registry, providers, key = world
    scans = scan_sources(providers, select_sources(registry), committed={}, clock=CLOCK)
    docs = scans[0]
    (ws.root / "docs" / "b.md").write_text("beta, changed before the read")
    reads = {docs.source_id: exact_read_scan(providers, docs, clock=CLOCK)}
    with RefMinter(ws, key) as minter:
        receipts = [
            builders.build_scan_receipt(_ctx(key, "d-1"), s, reads.get(s.source_id, {}), minter)
            for s in scans
        ]
    cov = builders.build_coverage(_ctx(key, "d-1"), registry, scans, reads)
    fresh = builders.build_freshness(
        _ctx(key, "d-1"),
        registry,
        scans,
        {"source:docs": "2026-11-29T17:30:00Z", "source:p2": "2026-11-28T00:00:00Z"},
        CLOCK.now(),
    )
    assert {"receipts": receipts, "coverage": cov, "freshness": fresh} == snapshot_json


def test_receipt_counts_verified_reads_and_keeps_refs_resolvable(world) -> None:
    ws, registry, providers, key = world
    docs = scan_sources(
        providers, select_sources(registry, ["source:docs"]), committed={}, clock=CLOCK
    )[0]
    reads = exact_read_scan(providers, docs, clock=CLOCK)
    with RefMinter(ws, key) as minter:
        receipt = builders.build_scan_receipt(_ctx(key), docs, reads, minter)
    assert receipt["changed_count"] == 3 and receipt["exact_read_count"] == 3  # text, text, binary
    assert "decision_id" not in receipt  # goal-level without a decision context
    kinds = sorted(c["content_kind"] for c in receipt["changes"])
    assert kinds == ["binary", "text", "text"]
    assert reveal(ws, receipt["cursor_after_ref"]) == ["source:docs", docs.cursor_after]
    assert reveal(ws, receipt["cursor_before_ref"]) == ["source:docs", None]
    paths = sorted(reveal(ws, c["change_ref"])[1] for c in receipt["changes"])
    assert paths == ["a.md", "b.md", "c.bin"]
    assert scan.SPEC.check_stored(receipt) == receipt


def test_unavailable_receipt_has_a_reason_and_no_cursor_after(world) -> None:
    ws, registry, providers, key = world
    gone = scan_sources(
        providers, select_sources(registry, ["source:gone"]), committed={}, clock=CLOCK
    )[0]
    with RefMinter(ws, key) as minter:
        receipt = builders.build_scan_receipt(_ctx(key), gone, {}, minter)
    assert (receipt["status"], receipt["reason_code"], receipt["changes"]) == (
        "unavailable",
        "locator_missing",
        [],
    )
    assert "cursor_after_ref" not in receipt and receipt["provider_fail_open"] is True
    assert all(receipt[flag] is False for flag in scan.CAPTURE_FLAGS)


def test_coverage_is_complete_only_when_every_p0_source_is_scanned_and_read(world) -> None:
    _ws, registry, providers, key = world
    selected = select_sources(registry, ["source:docs", "source:later"])
    scans = scan_sources(providers, selected, committed={}, clock=CLOCK)
    reads = {s.source_id: exact_read_scan(providers, s, clock=CLOCK) for s in scans}
    cov = builders.build_coverage(_ctx(key), registry, scans, reads)
    assert cov["status"] == "complete" and cov["incomplete_required_source_ids"] == []
    cov = builders.build_coverage(
        _ctx(key), registry, scans[:1], reads
    )  # the on-demand p0 not selected
    assert cov["status"] == "partial" and cov["incomplete_required_source_ids"] == ["source:later"]
    assert _row(cov, "p0")["status_counts"] == {"completed": 1, "not_selected": 1}
    no_reads = builders.build_coverage(_ctx(key), registry, scans, {})
    assert (
        no_reads["status"] == "partial" and _row(no_reads, "p0")["exact_read_incomplete_count"] == 2
    )


def test_committed_no_change_source_is_complete_without_reads(world) -> None:
    ws, registry, providers, _key = world
    first = scan_sources(
        providers, select_sources(registry, ["source:docs"]), committed={}, clock=CLOCK
    )[0]
    write_cursors(ws, {"source:docs": first.cursor_after})
    again = scan_sources(
        providers,
        select_sources(registry, ["source:docs"]),
        committed={"source:docs": first.cursor_after},
        clock=CLOCK,
    )
    row = _row(builders.coverage_values(registry, again, {}), "p0")
    assert row["complete_count"] == 1 and row["status_counts"] == {
        "no_change": 1,
        "not_selected": 1,
    }


def test_freshness_comes_from_reads_never_from_mtimes(world) -> None:
    _ws, registry, providers, _key = world
    scans = scan_sources(
        providers, select_sources(registry, ["source:docs"]), committed={}, clock=CLOCK
    )
    rows = {
        r["source_id"]: r
        for r in builders.freshness_values(registry, scans, {}, CLOCK.now())["sources"]
    }
    assert (
        rows["source:docs"]["status"] == "never_read"
    )  # files exist and are new, but nothing was read
    assert rows["source:p2"]["status"] == "not_scanned" and rows["source:p2"]["alert"]
    later = builders.freshness_values(
        registry, scans, {"source:docs": "2026-11-29T16:59:59Z"}, CLOCK.now()
    )
    docs = next(r for r in later["sources"] if r["source_id"] == "source:docs")
    assert (docs["status"], docs["staleness_seconds"], docs["alert"]) == ("stale", 3601, True)
    assert "source:docs" in later["alert_source_ids"]


def test_packets_hold_no_private_values(world) -> None:
    ws, registry, providers, key = world
    scans = scan_sources(providers, select_sources(registry), committed={}, clock=CLOCK)
    reads = {s.source_id: exact_read_scan(providers, s, clock=CLOCK) for s in scans}
    with RefMinter(ws, key) as minter:
        text = json.dumps(
            [
                builders.build_scan_receipt(_ctx(key), s, reads.get(s.source_id, {}), minter)
                for s in scans
            ]
        )
    for s in scans:
        for item in s.items:
            assert item.revision not in text and f'"{item.resource_ref}"' not in text
        assert s.cursor_after is None or s.cursor_after not in text
    assert "alpha" not in text and "a.md" not in text and str(Workspace(ws.root).root) not in text
