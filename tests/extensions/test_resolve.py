from __future__ import annotations

import json
from pathlib import Path

import pytest

from dcx.core.workspace import Workspace
from dcx.extensions.manifest import revision_of
from dcx.extensions.resolve import resolve
from dcx.ops.ext import doctor, set_enabled
from dcx.packets.advisory import READINESS
from tests.support.extensions import install, make_extension
from tests.support.workspace import tree_listing


def _status(root: Path, ext_id: str | None = None) -> dict:
    packet, binding = resolve(Workspace(root), ext_id)
    READINESS.check(packet)
    assert (binding is not None) == (packet["status"] == "ready")
    return packet


def test_nothing_installed(fresh_ws: Path) -> None:
    assert _status(fresh_ws)["status"] == "extension_provider_not_installed"
    assert _status(fresh_ws)["next_action"] == "install_or_select_extension"
    named = _status(fresh_ws, "good")
    assert (named["status"], named["next_action"], named["installed"]) == (
        "extension_not_installed",
        "install_extension",
        False,
    )


def test_ready_after_install_with_or_without_an_id(
    fresh_ws: Path, tmp_path: Path, snapshot_json
) -> None:
    install(fresh_ws, make_extension(tmp_path / "exts", "good.py"))
    assert _status(fresh_ws) == _status(fresh_ws, "good")
    packet, binding = resolve(Workspace(fresh_ws), "good")
    assert binding is not None and binding.version == "1.0.0" and binding.timeout_seconds == 10
    assert packet == snapshot_json


def test_disabled_and_back(fresh_ws: Path, tmp_path: Path, snapshot_json) -> None:
    install(fresh_ws, make_extension(tmp_path / "exts", "good.py"))
    set_enabled(ws=Workspace(fresh_ws), ext_id="good", enabled=False)
    packet = _status(fresh_ws)
    assert (packet["status"], packet["next_action"]) == ("extension_disabled", "enable_extension")
    assert packet["doctor_verified"] is True and packet["enabled"] is False
    assert packet == snapshot_json
    set_enabled(ws=Workspace(fresh_ws), ext_id="good", enabled=True)
    assert _status(fresh_ws)["status"] == "ready"


def test_replaced_bytes_make_the_proof_stale_until_doctor(fresh_ws: Path, tmp_path: Path) -> None:
    manifest = make_extension(tmp_path / "exts", "good.py")
    install(fresh_ws, manifest)
    script = manifest.parent / "good.py"
    script.write_text(script.read_text() + "\n# replaced\n")
    packet = _status(fresh_ws, "good")
    assert (packet["status"], packet["next_action"]) == (
        "extension_doctor_not_ready",
        "run_extension_doctor",
    )
    assert doctor(ws=Workspace(fresh_ws), ext_id="good").exit_code == 0
    assert _status(fresh_ws, "good")["status"] == "ready"


def test_two_ready_without_an_id_is_ambiguous(
    fresh_ws: Path, tmp_path: Path, snapshot_json
) -> None:
    install(fresh_ws, make_extension(tmp_path / "exts", "good.py"))
    install(fresh_ws, make_extension(tmp_path / "exts", "good.py", "good-two"))
    packet = _status(fresh_ws)
    assert (packet["status"], packet["next_action"], packet["extension_id"]) == (
        "extension_provider_ambiguous",
        "select_extension_id",
        None,
    )
    assert packet == snapshot_json
    assert _status(fresh_ws, "good-two")["status"] == "ready"  # an explicit id settles it
    set_enabled(ws=Workspace(fresh_ws), ext_id="good", enabled=False)
    assert _status(fresh_ws)["extension_id"] == "good-two"  # exactly one ready is chosen


def test_two_installed_none_ready(fresh_ws: Path, tmp_path: Path) -> None:
    install(fresh_ws, make_extension(tmp_path / "exts", "good.py"))
    install(fresh_ws, make_extension(tmp_path / "exts", "good.py", "good-two"))
    for ext_id in ("good", "good-two"):
        set_enabled(ws=Workspace(fresh_ws), ext_id=ext_id, enabled=False)
    packet = _status(fresh_ws)
    assert (packet["status"], packet["next_action"], packet["enabled"]) == (
        "extension_provider_not_ready",
        "select_or_repair_extension",
        False,
    )


def test_an_incompatible_stored_revision(fresh_ws: Path, tmp_path: Path) -> None:
    install(fresh_ws, make_extension(tmp_path / "exts", "good.py"))
    path = Workspace(fresh_ws).extension_state
    state = json.loads(path.read_text())
    record = state["extensions"]["good"]
    rev = record["revisions"][0]
    rev["manifest"]["runtime"]["protocol"] = "decision_context_advisory_provider_v1"
    rev["manifest"]["implements"][0]["protocol"] = "decision_context_advisory_provider_v1"
    rev["revision"] = revision_of(rev["manifest"])
    record["active_revision"] = record["doctor_verified_revision"] = rev["revision"]
    path.write_text(json.dumps(state))  # as a newer dcx might have left it
    packet = _status(fresh_ws, "good")
    assert (packet["status"], packet["next_action"]) == (
        "extension_incompatible",
        "install_compatible_extension",
    )


@pytest.mark.parametrize("garbage", [b"{", b"[]", b'{"schema_version": "dcx_extension_state_v0"}'])
def test_unreadable_state(fresh_ws: Path, garbage: bytes) -> None:
    path = Workspace(fresh_ws).extension_state
    path.parent.mkdir(parents=True)
    path.write_bytes(garbage)
    for ext_id in (None, "good"):
        packet = _status(fresh_ws, ext_id)
        assert (packet["status"], packet["next_action"]) == (
            "extension_state_unavailable",
            "repair_extension_state",
        )


def test_resolving_creates_no_file(fresh_ws: Path, tmp_path: Path) -> None:
    before = tree_listing(fresh_ws)
    _status(fresh_ws)
    _status(fresh_ws, "good")
    assert tree_listing(fresh_ws) == before  # not even private/extensions/
    install(fresh_ws, make_extension(tmp_path / "exts", "good.py"))
    lock = Workspace(fresh_ws).extension_state.with_name("state.json.lock")
    lock.unlink()
    before = tree_listing(fresh_ws)
    _status(fresh_ws)
    assert tree_listing(fresh_ws) == before


def test_an_edited_manifest_without_upgrade_makes_the_proof_stale(
    fresh_ws: Path, tmp_path: Path
) -> None:
    manifest = make_extension(tmp_path / "exts", "good.py")
    install(fresh_ws, manifest)
    manifest.write_text(
        manifest.read_text().replace("timeout_seconds = 10", "timeout_seconds = 20")
    )
    assert _status(fresh_ws)["status"] == "extension_doctor_not_ready"
    result = doctor(ws=Workspace(fresh_ws), ext_id="good")
    assert result.exit_code == 1 and result.data["doctor"]["reason_code"] == "manifest_changed"
    manifest.unlink()  # moved away: nothing claims a newer revision, the stored one is dispatched
    assert doctor(ws=Workspace(fresh_ws), ext_id="good").exit_code == 0
    assert _status(fresh_ws)["status"] == "ready"
