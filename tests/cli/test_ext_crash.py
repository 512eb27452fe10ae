"""A crash while `dcx ext install` writes the extension state leaves the old state (a real SIGKILL)."""

from __future__ import annotations

import json
from pathlib import Path

from dcx.workspace import Workspace
from tests.support.cli import run_dcx
from tests.support.extensions import make_extension


def test_a_crash_while_writing_state_leaves_the_old_state(fresh_ws: Path, tmp_path: Path) -> None:
    first = make_extension(tmp_path / "exts", "good.py")
    assert run_dcx("-C", str(fresh_ws), "ext", "install", str(first)).exit_code == 0
    state = Workspace(fresh_ws).extension_state
    before = state.read_bytes()
    second = make_extension(tmp_path / "exts", "good.py", "second")
    crashed = run_dcx("-C", str(fresh_ws), "ext", "install", str(second),
                      env={"DCX_FAULT_POINT": "atomic_write.before_replace"})
    assert crashed.exit_code == -9
    assert state.read_bytes() == before
    # SIGKILL may leave the writer's temp file beside it: readers skip it, the next run is unharmed
    again = run_dcx("-C", str(fresh_ws), "ext", "install", str(second), "--format", "json")
    assert again.exit_code == 0
    assert sorted(json.loads(state.read_text())["extensions"]) == ["good", "second"]
