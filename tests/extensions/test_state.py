from __future__ import annotations

import json
from pathlib import Path

import pytest

from dcx.core.workspace import Workspace
from dcx.extensions.manifest import revision_of
from dcx.extensions.state import (
    MAX_REVISIONS,
    StateUnavailable,
    add_revision,
    load_state,
    save_state,
)
from tests.support.extensions import install, make_extension
from tests.support.workspace import tree_listing


def test_absent_state_is_empty_and_reading_creates_nothing(fresh_ws: Path) -> None:
    before = tree_listing(fresh_ws)
    assert load_state(Workspace(fresh_ws)) == {
        "schema_version": "dcx_extension_state_v0",
        "extensions": {},
    }
    assert tree_listing(fresh_ws) == before


def test_saved_state_is_private_and_pretty(fresh_ws: Path, tmp_path: Path) -> None:
    install(fresh_ws, make_extension(tmp_path / "exts", "good.py"))
    path = Workspace(fresh_ws).extension_state
    assert path.stat().st_mode & 0o777 == 0o600
    data = path.read_bytes()
    assert data.endswith(b"}\n") and json.loads(data)["extensions"]["good"]["enabled"] is True
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]


def _tamper(fresh_ws: Path, edit) -> None:
    path = Workspace(fresh_ws).extension_state
    state = json.loads(path.read_text())
    edit(state)
    path.write_text(json.dumps(state))


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param(
            lambda s: s["extensions"]["good"]["revisions"][0]["manifest"]["runtime"].update(
                args=["--evil"]
            ),
            id="snapshot-edited",
        ),
        pytest.param(
            lambda s: s["extensions"]["good"].update(active_revision="0" * 16), id="dangling-active"
        ),
        pytest.param(lambda s: s["extensions"]["good"].update(enabled="yes"), id="bad-type"),
        pytest.param(lambda s: s["extensions"]["good"].update(surprise=1), id="unknown-key"),
        pytest.param(
            lambda s: s.update(schema_version="dcx_extension_state_v9"), id="future-schema"
        ),
        pytest.param(
            lambda s: s["extensions"].update({"Bad_Id": s["extensions"]["good"]}), id="bad-id"
        ),
    ],
)
def test_state_that_does_not_verify_is_unavailable(fresh_ws: Path, tmp_path: Path, edit) -> None:
    install(fresh_ws, make_extension(tmp_path / "exts", "good.py"))
    _tamper(fresh_ws, edit)
    with pytest.raises(StateUnavailable) as err:
        load_state(Workspace(fresh_ws))
    assert (
        err.value.exit_code == 1
        and "state.json" in err.value.message
        and "/" not in err.value.message.split(":")[0][:1]
    )


def test_garbage_state_is_unavailable(fresh_ws: Path) -> None:
    path = Workspace(fresh_ws).extension_state
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\x00not json")
    with pytest.raises(StateUnavailable):
        load_state(Workspace(fresh_ws))


def _rev(n: int) -> dict:
    manifest = {
        "schema_version": "dcx_extension_manifest_v0",
        "id": "x",
        "version": f"1.0.{n}",
        "permissions": ["decision_context.read"],
        "runtime": {
            "protocol": "decision_context_advisory_provider_v0",
            "entrypoint": "x",
            "args": [],
            "doctor_args": ["--doctor"],
            "required_permissions": ["decision_context.read"],
            "timeout_seconds": 5,
            "env": [],
        },
        "implements": [
            {
                "capability_id": "decision-context",
                "protocol": "decision_context_advisory_provider_v0",
            }
        ],
    }
    return {
        "revision": revision_of(manifest),
        "manifest": manifest,
        "entrypoint_path": "/x",
        "installed_at": "2026-11-29T18:00:00Z",
    }


def test_at_most_five_revisions_and_the_rollback_target_is_kept(fresh_ws: Path) -> None:
    revs = [_rev(n) for n in range(8)]
    record = {
        "enabled": True,
        "active_revision": revs[0]["revision"],
        "rollback_revision": None,
        "revisions": [revs[0]],
        "doctor_verified_revision": None,
        "doctor_verified_identity": None,
    }
    for rev in revs[1:]:
        # rollback target pinned to the very first revision: it must survive every prune
        record["rollback_revision"] = revs[0]["revision"]
        record["active_revision"] = rev["revision"]
        add_revision(record, rev)
        assert len(record["revisions"]) <= MAX_REVISIONS
    kept = [r["revision"] for r in record["revisions"]]
    assert revs[0]["revision"] in kept and revs[-1]["revision"] in kept
    assert kept == [revs[0]["revision"], *[r["revision"] for r in revs[4:]]]
    save_state(
        Workspace(fresh_ws),
        {"schema_version": "dcx_extension_state_v0", "extensions": {"x": record}},
    )
    assert load_state(Workspace(fresh_ws))["extensions"]["x"]["revisions"] == record["revisions"]
