"""An mcp source without the MCP SDK (the ``mcp`` extra): unavailable, ``mcp_sdk_missing``
(SPEC §15.1). Runs with or without the extra: the SDK is hidden from this process."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from dcx.core.clock import FixedClock
from dcx.sources.plane import scan_source
from tests.support.mcpsource import SID, register
from tests.support.sources import plane
from tests.support.workspace import write_tree

CLOCK = FixedClock("2026-11-29T18:00:00Z")


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    folder = tmp_path / "notes"
    write_tree(folder, {"a.md": "alpha\n"})
    return folder


def test_without_the_sdk_the_source_is_unavailable(fresh_ws, notes, monkeypatch):
    for name in [m for m in sys.modules if m == "mcp" or m.startswith("mcp.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "mcp", None)  # `import mcp` raises ImportError
    register(fresh_ws, notes)
    _ws, _prof, registry, providers = plane(fresh_ws)
    assert providers.get("notes").health() == ("unavailable", "mcp_sdk_missing")
    result = scan_source(providers, registry.source(SID), cursor_before=None, clock=CLOCK)
    assert (result.status, result.reason_code) == ("unavailable", "mcp_sdk_missing")
