"""Failure paths of the lifecycle: a concurrent change during the doctor, a crash mid-write."""

from __future__ import annotations

import json
from pathlib import Path

from dcx.core.clock import clock_from_env
from dcx.core.workspace import Workspace
from dcx.ops import ext as ops
from tests.support.cli import run_dcx
from tests.support.extensions import make_extension


def test_a_proof_is_not_recorded_for_a_revision_that_changed_during_the_doctor(
    fresh_ws: Path, tmp_path: Path, monkeypatch
) -> None:
    ws = Workspace(fresh_ws)
    manifest = make_extension(tmp_path / "exts", "good.py")
    ops.install(clock=clock_from_env(), ws=ws, path=str(manifest))
    manifest.write_text(manifest.read_text().replace('version = "1.0.0"', 'version = "1.1.0"'))
    real = ops.run_doctor

    def doctor_while_someone_upgrades(record, rev, **kw):
        outcome = real(record, rev, **kw)
        ops.upgrade(
            clock=clock_from_env(), ws=ws, path=str(manifest), doctor=False
        )  # lands between the probe and the record
        return outcome

    monkeypatch.setattr(ops, "run_doctor", doctor_while_someone_upgrades)
    result = ops.doctor(ws=ws, ext_id="good")
    assert (
        result.exit_code == 1
        and result.data["doctor"]["reason_code"] == "revision_changed_during_doctor"
    )
    row = result.data["extension"]
    assert row["version"] == "1.1.0" and row["doctor_verified"] is False
    assert row["readiness"]["status"] == "extension_doctor_not_ready"


def test_a_crash_while_writing_state_leaves_the_old_state(fresh_ws: Path, tmp_path: Path) -> None:
    first = make_extension(tmp_path / "exts", "good.py")
    assert run_dcx("-C", str(fresh_ws), "ext", "install", str(first)).exit_code == 0
    state = Workspace(fresh_ws).extension_state
    before = state.read_bytes()
    second = make_extension(tmp_path / "exts", "good.py", "second")
    crashed = run_dcx(
        "-C",
        str(fresh_ws),
        "ext",
        "install",
        str(second),
        env={"DCX_FAULT_POINT": "atomic_write.before_replace"},
    )
    assert crashed.exit_code == -9
    assert state.read_bytes() == before
    # SIGKILL may leave the writer's temp file beside it: readers skip it, the next run is unharmed
    again = run_dcx("-C", str(fresh_ws), "ext", "install", str(second), "--format", "json")
    assert again.exit_code == 0
    assert sorted(json.loads(state.read_text())["extensions"]) == ["good", "second"]
