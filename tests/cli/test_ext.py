"""``dcx ext`` end to end: the judged lifecycle, dry runs, bad manifests, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import run_dcx
from tests.support.extensions import make_extension, manifest_text, retrieve
from tests.support.workspace import tree_listing


@pytest.fixture
def ext(dcx, fresh_ws: Path, tmp_path: Path):
    """Run `dcx -C <goal> ext ... --format json`; check no absolute path leaks into the output."""

    def go(*args: str, code: int = 0) -> dict:
        result = dcx("-C", str(fresh_ws), "ext", *args, "--format", "json")
        assert result.exit_code == code, (result.stdout, result.stderr)
        assert str(tmp_path) not in result.stdout and "Traceback" not in result.stderr
        return result.json()

    return go


@pytest.fixture
def exts(tmp_path: Path) -> Path:
    return tmp_path / "exts"


def _readiness(out: dict) -> tuple[str, str | None]:
    ready = out["data"]["extension"]["readiness"]
    return ready["status"], ready["next_action"]


def test_install_makes_a_good_extension_ready(ext, exts, snapshot_json) -> None:
    out = ext("install", str(make_extension(exts, "good.py")))
    assert out["ok"] and out["data"]["action"] == "install" and out["data"]["doctor"]["passed"]
    assert _readiness(out) == ("ready", None)
    assert out == snapshot_json


def test_list_snapshot(ext, exts, snapshot_json) -> None:
    ext("install", str(make_extension(exts, "good.py")))
    ext("install", str(make_extension(exts, "good.py", "second", version="2.0.0")), "--disabled")
    out = ext("list")
    assert [e["extension_id"] for e in out["data"]["extensions"]] == ["good", "second"]
    assert out["data"]["resolution"]["extension_id"] == "good"
    assert out == snapshot_json


def test_disable_then_enable_recovers_without_a_profile_edit(ext, exts, fresh_ws: Path) -> None:
    ext("install", str(make_extension(exts, "good.py")))
    profile = (fresh_ws / ".decision-context" / "profile.toml").read_bytes()
    assert _readiness(ext("disable", "good")) == ("extension_disabled", "enable_extension")
    _, result = retrieve(fresh_ws)
    assert (result.status, result.reason_code) == ("unavailable", "extension_disabled")
    assert result.provider_readiness["next_action"] == "enable_extension"
    assert _readiness(ext("enable", "good")) == ("ready", None)
    assert retrieve(fresh_ws)[1].status == "completed"
    assert (fresh_ws / ".decision-context" / "profile.toml").read_bytes() == profile


def test_replaced_executable_needs_the_doctor_again(ext, exts, fresh_ws: Path) -> None:
    manifest = make_extension(exts, "good.py")
    ext("install", str(manifest))
    script = manifest.parent / "good.py"
    script.write_bytes(script.read_bytes().replace(b"Fixture match one", b"Fixture match uno"))
    listed = ext("list")["data"]["extensions"][0]
    assert listed["doctor_verified"] is False
    assert listed["readiness"]["status"] == "extension_doctor_not_ready"
    assert retrieve(fresh_ws)[1].reason_code == "extension_doctor_not_ready"
    out = ext("doctor", "good")
    assert out["data"]["doctor"]["passed"] and _readiness(out) == ("ready", None)
    assert retrieve(fresh_ws)[1].items[0].summary == "Fixture match uno"


def test_two_ready_without_an_id_is_ambiguous(ext, exts, fresh_ws: Path) -> None:
    ext("install", str(make_extension(exts, "good.py")))
    ext("install", str(make_extension(exts, "good.py", "other")))
    resolution = ext("list")["data"]["resolution"]
    assert (resolution["status"], resolution["next_action"]) == (
        "extension_provider_ambiguous",
        "select_extension_id",
    )
    assert retrieve(fresh_ws)[1].reason_code == "extension_provider_ambiguous"
    assert retrieve(fresh_ws, {"extension_id": "other"})[1].status == "completed"


def test_dry_run_install_creates_no_state_or_lock_file(ext, exts, fresh_ws: Path) -> None:
    before = tree_listing(fresh_ws)
    out = ext("install", str(make_extension(exts, "good.py")), "--dry-run")
    assert (
        out["data"]["dry_run"]
        and out["data"]["action"] == "install"
        and out["data"]["extension"] is None
    )
    assert tree_listing(fresh_ws) == before
    assert not (fresh_ws / ".decision-context" / "private" / "extensions").exists()


@pytest.mark.parametrize(
    "args",
    [
        ("enable", "good"),
        ("disable", "good"),
        ("doctor", "good"),
        ("doctor", "--all"),
        ("rollback", "good"),
        ("upgrade", "NEW"),
        ("install", "OTHER"),
        ("list",),
    ],
)
def test_every_dry_run_changes_and_creates_nothing(ext, exts, fresh_ws: Path, args) -> None:
    manifest = make_extension(exts, "good.py")
    ext("install", str(manifest))
    manifest.write_text(manifest.read_text().replace('version = "1.0.0"', 'version = "1.1.0"'))
    ext("upgrade", str(manifest))  # now there is a rollback target
    ext("disable", "good") if args[0] == "enable" else None
    state_dir = fresh_ws / ".decision-context" / "private" / "extensions"
    (state_dir / "state.json.lock").unlink()
    before = {p: p.read_bytes() for p in fresh_ws.rglob("*") if p.is_file()}
    listing = tree_listing(fresh_ws)
    replace = {"NEW": str(manifest), "OTHER": str(make_extension(exts, "good.py", "other"))}
    ext(*[replace.get(a, a) for a in args], "--dry-run")
    assert tree_listing(fresh_ws) == listing
    assert {p: p.read_bytes() for p in fresh_ws.rglob("*") if p.is_file()} == before


BAD_MANIFESTS = {
    "unknown key": (
        "homepage",
        lambda t: t.replace('version = "1.0.0"\n', 'version = "1.0.0"\nhomepage = "x"\n'),
    ),
    "bad id": ("id", lambda t: t.replace('id = "good"', 'id = "Good_Ext"')),
    "missing permission": (
        "permissions",
        lambda t: t.replace(
            'permissions = ["decision_context.read"]', 'permissions = ["net.read"]'
        ),
    ),
    "protocol mismatch": (
        "implements[0].protocol",
        lambda t: t[: t.rindex("protocol")] + 'protocol = "other_v0"\n',
    ),
    "timeout 0": (
        "runtime.timeout_seconds",
        lambda t: t.replace("timeout_seconds = 10", "timeout_seconds = 0"),
    ),
    "timeout 121": (
        "runtime.timeout_seconds",
        lambda t: t.replace("timeout_seconds = 10", "timeout_seconds = 121"),
    ),
    "timeout true": (
        "runtime.timeout_seconds",
        lambda t: t.replace("timeout_seconds = 10", "timeout_seconds = true"),
    ),
}


@pytest.mark.parametrize("case", list(BAD_MANIFESTS))
def test_bad_manifest_is_exit_2_naming_the_key(dcx, exts, fresh_ws: Path, case: str) -> None:
    key, edit = BAD_MANIFESTS[case]
    manifest = make_extension(exts, "good.py")
    manifest.write_text(edit(manifest.read_text()))
    before = tree_listing(fresh_ws)
    text = dcx("-C", str(fresh_ws), "ext", "install", str(manifest))
    assert text.exit_code == 2 and text.stderr.startswith(f"error: extension.toml: {key}, line ")
    assert "Traceback" not in text.stderr and str(exts) not in text.stderr
    out = dcx("-C", str(fresh_ws), "ext", "install", str(manifest), "--format", "json")
    assert out.exit_code == 2 and f"extension.toml: {key}, line " in out.json()["error"]["message"]
    assert tree_listing(fresh_ws) == before


def test_failed_doctor_leaves_it_installed_not_ready_and_exits_1(ext, exts) -> None:
    out = ext("install", str(make_extension(exts, "doctor_fails.py")), code=1)
    assert out["ok"] is False and out["status"] == "error"
    assert out["data"]["doctor"] == {
        "passed": False,
        "reason_code": "doctor_exit_nonzero",
        "revision": out["data"]["revision"],
    }
    assert _readiness(out) == ("extension_doctor_not_ready", "run_extension_doctor")
    assert ext("doctor", "doctor-fails", code=1)["data"]["doctor"]["passed"] is False


def test_doctor_timeout_is_a_failed_doctor(ext, exts) -> None:
    manifest = make_extension(exts, "hang.py", timeout=1)
    manifest.write_text(
        manifest.read_text().replace('doctor_args = ["--doctor"]', 'doctor_args = ["--sleep"]')
    )
    out = ext("install", str(manifest), code=1)
    assert out["data"]["doctor"]["reason_code"] == "doctor_timeout"


def test_install_is_idempotent_and_refuses_another_revision(ext, exts) -> None:
    manifest = make_extension(exts, "good.py")
    first = ext("install", str(manifest))
    again = ext("install", str(manifest))
    assert (
        again["data"]["action"] == "none"
        and again["data"]["changed"] is False
        and again["data"]["doctor"] is None
    )
    assert again["data"]["extension"] == first["data"]["extension"]
    manifest.write_text(
        manifest.read_text().replace("timeout_seconds = 10", "timeout_seconds = 20")
    )
    refused = ext("install", str(manifest), code=1)
    assert (
        refused["error"]["code"] == "extension_already_installed"
        and "upgrade" in refused["error"]["hint"]
    )


def test_upgrade_rollback_and_the_revision_cap(ext, exts) -> None:
    manifest = make_extension(exts, "good.py")
    first = ext("install", str(manifest))["data"]["revision"]
    ext("rollback", "good", code=1)  # nothing to roll back to yet
    revisions = [first]
    for minor in range(1, 7):
        manifest.write_text(
            manifest.read_text().replace(f'version = "1.{minor - 1}.0"', f'version = "1.{minor}.0"')
        )
        out = ext("upgrade", str(manifest))
        revisions.append(out["data"]["revision"])
        row = out["data"]["extension"]
        assert row["active_revision"] == revisions[-1] and row["rollback_revision"] == revisions[-2]
        assert row["readiness"]["status"] == "ready" and len(row["revisions"]) <= 5
    assert ext("list")["data"]["extensions"][0]["revisions"] == revisions[-5:]
    # the manifest on disk now holds the newest revision; rolling back is not "a changed manifest"
    back = ext("rollback", "good")["data"]["extension"]
    assert (back["active_revision"], back["rollback_revision"], back["version"]) == (
        revisions[-2],
        revisions[-1],
        "1.5.0",
    )
    assert back["readiness"]["status"] == "ready" and back["manifest_changed"] is False
    forth = ext("rollback", "good")["data"]["extension"]
    assert forth["active_revision"] == revisions[-1]
    assert ext("upgrade", str(manifest))["data"]["action"] == "none"


def test_rollback_keeps_a_target_beyond_the_cap(ext, exts) -> None:
    manifest = make_extension(exts, "good.py")
    ext("install", str(manifest))
    versions = []
    for minor in range(1, 4):
        manifest.write_text(
            manifest.read_text().replace(f'version = "1.{minor - 1}.0"', f'version = "1.{minor}.0"')
        )
        versions.append(ext("upgrade", str(manifest))["data"]["revision"])
    assert ext("rollback", "good")["data"]["extension"]["active_revision"] == versions[-2]


def test_unknown_id_and_usage_errors(ext, exts) -> None:
    for verb in ("enable", "disable", "doctor", "rollback"):
        assert ext(verb, "nope", code=2)["error"]["code"] == "extension_not_installed"
    assert (
        ext("upgrade", str(make_extension(exts, "good.py")), code=2)["error"]["code"]
        == "extension_not_installed"
    )
    assert ext("doctor", code=2)["error"]["code"] == "usage_error"
    assert ext("install", str(exts / "missing.toml"), code=2)["error"]["code"] == "manifest_missing"


def test_doctor_all(ext, exts) -> None:
    ext("install", str(make_extension(exts, "good.py")))
    ext("install", str(make_extension(exts, "doctor_fails.py")), code=1)
    out = ext("doctor", "--all", code=1)
    assert [(r["extension_id"], r["doctor"]["passed"]) for r in out["data"]["results"]] == [
        ("doctor-fails", False),
        ("good", True),
    ]


def test_corrupt_state_is_reported_not_repaired(ext, exts, fresh_ws: Path) -> None:
    ext("install", str(make_extension(exts, "good.py")))
    state = fresh_ws / ".decision-context" / "private" / "extensions" / "state.json"
    state.write_text("{ torn")
    out = ext("list", code=1)
    assert (
        out["error"]["code"] == "extension_state_unavailable"
        and "state.json" in out["error"]["message"]
    )
    assert ext("install", str(make_extension(exts, "good.py", "other")), code=1)["error"][
        "code"
    ] == ("extension_state_unavailable")
    assert state.read_text() == "{ torn"
    assert retrieve(fresh_ws)[1].reason_code == "extension_state_unavailable"


def test_busy_lock_is_exit_4(ext, exts, fresh_ws: Path) -> None:
    import portalocker

    ext("install", str(make_extension(exts, "good.py")))
    lock_path = fresh_ws / ".decision-context" / "private" / "extensions" / "state.json.lock"
    with portalocker.Lock(str(lock_path), mode="a", flags=portalocker.LockFlags.EXCLUSIVE):
        out = ext("disable", "good", "--wait", "0.2", code=4)
    assert out["error"]["code"] == "lock_busy"
    assert ext("list")["data"]["extensions"][0]["enabled"] is True


def test_text_output(dcx, exts, fresh_ws: Path) -> None:
    manifest = make_extension(exts, "good.py")
    out = dcx("-C", str(fresh_ws), "ext", "install", str(manifest))
    assert out.exit_code == 0
    assert "good: install revision " in out.stdout and "good 1.0.0: ready" in out.stdout
    listed = dcx("-C", str(fresh_ws), "ext", "list")
    assert "good" in listed.stdout and "verified" in listed.stdout
    assert "recall without extension_id: ready → good" in listed.stdout


def test_installed_script_runs_the_lifecycle(tmp_path: Path, fresh_ws: Path) -> None:
    manifest = make_extension(tmp_path / "exts", "good.py")
    installed = run_dcx("-C", str(fresh_ws), "ext", "install", str(manifest), "--format", "json")
    assert installed.exit_code == 0, installed.stderr
    listed = run_dcx("-C", str(fresh_ws), "ext", "list", "--format", "json")
    assert listed.json()["data"]["resolution"]["status"] == "ready"
    bad = tmp_path / "bad" / "extension.toml"
    bad.parent.mkdir()
    bad.write_text(manifest_text("bad", "./x.py", timeout=True))
    refused = run_dcx("-C", str(fresh_ws), "ext", "install", str(bad))
    assert refused.exit_code == 2 and "runtime.timeout_seconds, line" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_json_outputs_hold_no_path_or_content(ext, exts, fresh_ws: Path) -> None:
    manifest = make_extension(exts, "stderr_canary.py")
    outputs = [ext("install", str(manifest)), ext("doctor", "stderr-canary"), ext("list")]
    text = json.dumps(outputs)
    assert "STDERR-CANARY" not in text and "/" not in text.replace("\\/", "")


def test_no_canary_reaches_a_public_file(ext, exts, fresh_ws: Path, monkeypatch) -> None:
    monkeypatch.setenv("PARENT_SECRET_CANARY", "parent-secret-value")
    for script in (
        "stderr_canary.py",
        "not_json.py",
        "extra_field.py",
        "summary_path.py",
        "env_probe.py",
    ):
        ext("install", str(make_extension(exts, script)))
        retrieve(fresh_ws, {"extension_id": script.removesuffix(".py").replace("_", "-")})
    ext("doctor", "--all")
    dc = fresh_ws / ".decision-context"
    private = {dc / "private", dc / "profile.toml", dc / "sources.toml"}
    public = [
        p
        for p in dc.rglob("*")
        if p.is_file() and not any(p == q or q in p.parents for q in private)
    ]
    assert public  # README, workspace.toml, ... exist
    for path in public:
        data = path.read_bytes()
        assert (
            b"CANARY" not in data
            and str(exts).encode() not in data
            and b"parent-secret" not in data
        )
