"""``tests/mcp`` drives the real MCP SDK client: without the ``mcp`` extra, each of its modules
is reported skipped (never an import error), however pytest is pointed at them."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

REASON = "the mcp extra is not installed (pip install -e '.[mcp]')"


class _Skipped(pytest.Module):
    def collect(self) -> Any:
        pytest.skip(REASON, allow_module_level=True)


def pytest_pycollect_makemodule(module_path: Path, parent: Any) -> Any:
    if importlib.util.find_spec("mcp") is None:
        return _Skipped.from_parent(parent, path=module_path)
    return None
