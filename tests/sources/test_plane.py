"""The plane's fail-open and contract rules with in-process adapters (SPEC §5.1, §5.2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dcx.core.clock import FixedClock
from dcx.core.workspace import Workspace
from dcx.sources.base import (
    Health,
    ReadResult,
    ScanItem,
    ScanResult,
    scan_contract_problem,
)
from dcx.sources.plane import exact_read_item, scan_sources, select_sources
from dcx.sources.registry import BUILTINS, Providers
from dcx.state.profile import load_profile, load_registry
from tests.support.sources import binding_block, configure, source_block

CLOCK = FixedClock("2026-11-29T18:00:00Z")
NOW = CLOCK.now()


class Scripted:
    """An in-process adapter that answers what a test scripts (or raises it)."""

    version = "9.9"

    def __init__(self, provider_id: str, answer, read=None) -> None:
        self.provider_id = provider_id
        self.answer = answer
        self.read = read

    def health(self) -> Health:
        return Health("healthy")

    def scan(self, source, after_cursor, limit, deadline, observed_at):
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer(source) if callable(self.answer) else self.answer

    def exact_read(self, source, item, max_bytes, deadline, observed_at):
        if isinstance(self.read, Exception):
            raise self.read
        return self.read(item)


def _providers(
    root: Path, tree, adapter: Scripted, *, identity: str | None = None
) -> tuple[Providers, tuple]:
    tree(root, {"docs": {"a.md": "alpha"}})
    configure(
        root,
        binding_block()
        + binding_block("scripted", "scripted")
        + source_block("source:docs", '"docs"')
        + source_block("source:s", '"docs"', provider_id="scripted"),
    )
    ws = Workspace(root)
    profile, registry = load_profile(ws), load_registry(ws)
    if identity is not None:
        adapter.provider_id = identity
    builtins = {**BUILTINS, "scripted": lambda ws, binding, profile, progress: adapter}
    return Providers(ws, profile, registry, builtins=builtins), select_sources(registry)


def _item(source_id: str = "source:s", ref: str = "r1", **changes) -> ScanItem:
    return ScanItem(source_id, ref, "rev1", NOW, "text", "added")._replace(**changes)


def test_raising_adapter_is_unavailable_and_the_other_source_completes(
    fresh_ws: Path, tree
) -> None:
    adapter = Scripted("scripted", RuntimeError("CANARY secret path /home/someone/private"))
    providers, selected = _providers(fresh_ws, tree, adapter)
    docs, scripted = scan_sources(providers, selected, committed={}, clock=CLOCK)
    assert (scripted.status, scripted.reason_code, scripted.cursor_after) == (
        "unavailable",
        "provider_scan_failed",
        None,
    )
    assert "CANARY" not in repr(scripted)
    assert docs.status == "completed"


def test_items_for_another_source_break_the_contract(fresh_ws: Path, tree) -> None:
    adapter = Scripted("scripted", ScanResult("completed", (_item("source:docs"),), "c1"))
    providers, selected = _providers(fresh_ws, tree, adapter)
    scripted = scan_sources(providers, selected, committed={}, clock=CLOCK)[1]
    assert (scripted.status, scripted.reason_code, scripted.items) == (
        "unavailable",
        "provider_contract_invalid",
        (),
    )


def test_instance_answering_under_another_id_is_refused(fresh_ws: Path, tree) -> None:
    adapter = Scripted("scripted", ScanResult("no_change", (), "c1"))
    providers, selected = _providers(fresh_ws, tree, adapter, identity="someone-else")
    scripted = scan_sources(providers, selected, committed={}, clock=CLOCK)[1]
    assert (scripted.status, scripted.reason_code) == (
        "unavailable",
        "runtime_provider_identity_mismatch",
    )


def test_a_good_scripted_scan_passes_through_with_its_version(fresh_ws: Path, tree) -> None:
    adapter = Scripted(
        "scripted",
        ScanResult("completed", (_item(),), "c1"),
        read=lambda item: ReadResult("verified", item.resource_ref, item.revision, NOW, "text"),
    )
    providers, selected = _providers(fresh_ws, tree, adapter)
    scripted = scan_sources(providers, selected, committed={"source:s": "c0"}, clock=CLOCK)[1]
    assert (
        scripted.status,
        scripted.cursor_before,
        scripted.cursor_after,
        scripted.provider_version,
    ) == ("completed", "c0", "c1", "9.9")
    read = exact_read_item(providers, scripted, scripted.items[0], clock=CLOCK)
    assert (read.status, read.content) == ("verified", "text")


@pytest.mark.parametrize(
    ("read", "reason"),
    [
        (RuntimeError("boom"), "exact_read_failed"),
        (
            lambda item: ReadResult("verified", "other", item.revision, NOW, "x"),
            "provider_contract_invalid",
        ),
        (
            lambda item: ReadResult("verified", item.resource_ref, "rev-other", NOW, "x"),
            "provider_contract_invalid",
        ),
        (
            lambda item: ReadResult(
                "verified", item.resource_ref, item.revision, NOW, "x" * 2_000_000
            ),
            "provider_contract_invalid",
        ),
        (
            lambda item: ReadResult("binary", item.resource_ref, item.revision, NOW, "leaked"),
            "provider_contract_invalid",
        ),
    ],
)
def test_exact_read_failures_are_transient_reads_with_a_reason(
    fresh_ws: Path, tree, read, reason: str
) -> None:
    adapter = Scripted("scripted", ScanResult("completed", (_item(),), "c1"), read=read)
    providers, selected = _providers(fresh_ws, tree, adapter)
    scripted = scan_sources(providers, selected, committed={}, clock=CLOCK)[1]
    result = exact_read_item(providers, scripted, scripted.items[0], clock=CLOCK)
    assert (result.status, result.reason_code, result.content) == ("failed", reason, None)


@pytest.mark.parametrize(
    ("result", "problem"),
    [
        ("not a result", "not a ScanResult"),
        (ScanResult("finished"), "unknown status"),
        (ScanResult("unavailable"), "needs a reason_code"),
        (ScanResult("unavailable", (_item(),), None, "x"), "holds items"),
        (ScanResult("no_change", (_item(),)), "no_change scan holds items"),
        (
            ScanResult("completed", (_item(ref="a"), _item(ref="b"), _item(ref="c"))),
            "more items than the limit",
        ),
        (ScanResult("completed", (_item(),), "x" * 257), "cursor_after"),
        (ScanResult("completed", (_item(), _item())), "share a resource_ref"),
        (ScanResult("completed", (_item(change="deleted"),)), "deletion"),
        (ScanResult("completed", (_item(content_kind="pdf"),)), "unknown"),
        (ScanResult("completed", (_item(revision=""),)), "revision"),
        (ScanResult("failed", (), None, "has spaces"), "not a token"),
    ],
)
def test_contract_checker_names_each_violation(result, problem: str) -> None:
    assert problem in (scan_contract_problem(result, "source:s", 2) or "")


def test_contract_checker_accepts_a_valid_answer() -> None:
    good = ScanResult(
        "completed",
        (
            _item(ref="a"),
            _item(ref="b", change="deleted", revision="deleted", content_kind="deleted"),
        ),
        "c1",
    )
    assert scan_contract_problem(good, "source:s", 2) is None
