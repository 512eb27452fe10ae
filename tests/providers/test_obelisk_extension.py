"""dcx + the dcx-obelisk distribution + a fake `obelisk` on PATH, end to end (without `dcx recall`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.support.cli import run_dcx
from tests.support.extensions import retrieve
from tests.support.workspace import REPO

PACKAGE = REPO / "packages" / "dcx-obelisk"
FAKE_BIN = REPO / "fixtures" / "obelisk" / "bin"
VENV_BIN = Path(sys.executable).parent


@pytest.fixture
def obelisk_path(monkeypatch) -> str:
    path = os.pathsep.join([str(FAKE_BIN), str(VENV_BIN), os.environ["PATH"]])
    monkeypatch.setenv("PATH", path)
    return path


def _calls() -> list[dict]:
    log = Path(os.environ["HOME"]) / ".fake-obelisk" / "calls.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_install_then_retrieve_only_that_sessions_visible_turns(
    dcx, fresh_ws: Path, obelisk_path
) -> None:
    out = dcx(
        "-C", str(fresh_ws), "ext", "install", str(PACKAGE / "extension.toml"), "--format", "json"
    )
    assert out.exit_code == 0, out.stdout
    assert out.json()["data"]["extension"]["readiness"]["status"] == "ready"
    assert [c["argv"] for c in _calls()] == [["--version"]]  # the doctor ran obelisk --version only

    provider, result = retrieve(fresh_ws, {"extension_id": "dcx-obelisk"})
    assert provider.version == "0.1.0" and result.status == "completed"
    assert [i.content for i in result.items] == [
        "KEEP user: should we raise the cache TTL to 600 seconds?",
        "KEEP assistant: the runbook says 300 seconds; raising it needs owner sign-off.",
    ]
    assert [i.resource_ref for i in result.items] == [
        "obelisk:codex:thread-a:codex:thread-a:000012",
        "obelisk:codex:thread-a:codex:thread-a:000013",
    ]
    assert all(i.summary.startswith("Codex ") for i in result.items)
    query_call = _calls()[-1]
    assert query_call["argv"][0] == "--query" and not Path(query_call["argv"][1]).exists()
    assert not any({"--build", "--attune"} & set(c["argv"]) for c in _calls())


def test_another_session_scope_gets_its_own_rows_only(dcx, fresh_ws: Path, obelisk_path) -> None:
    assert (
        dcx("-C", str(fresh_ws), "ext", "install", str(PACKAGE / "extension.toml")).exit_code == 0
    )
    _, result = retrieve(fresh_ws, scope_ref="host-session:codex:thread-b")
    assert [i.content for i in result.items] == [
        "DROP other session: the TTL is 60 seconds in staging"
    ]
    _, result = retrieve(
        fresh_ws, scope_ref="codex://threads/thread-a"
    )  # dcx normalises before the boundary
    assert (result.status, result.reason_code) == ("unavailable", "scope_unsupported")


def test_obelisk_missing_means_the_doctor_fails(dcx, fresh_ws: Path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", os.pathsep.join([str(VENV_BIN), "/usr/bin", "/bin"]))
    out = dcx(
        "-C", str(fresh_ws), "ext", "install", str(PACKAGE / "extension.toml"), "--format", "json"
    )
    assert (
        out.exit_code == 1 and out.json()["data"]["doctor"]["reason_code"] == "doctor_exit_nonzero"
    )


def test_installed_console_scripts_end_to_end(fresh_ws: Path, obelisk_path) -> None:
    env = {"PATH": obelisk_path}
    assert (
        run_dcx(
            "-C", str(fresh_ws), "ext", "install", str(PACKAGE / "extension.toml"), env=env
        ).exit_code
        == 0
    )
    listed = run_dcx("-C", str(fresh_ws), "ext", "list", "--format", "json", env=env).json()
    assert listed["data"]["resolution"]["extension_id"] == "dcx-obelisk"


def test_the_distribution_builds_with_its_console_script(tmp_path: Path) -> None:
    import shutil

    source = tmp_path / "src"  # build a copy: setuptools leaves build/ beside the sources
    shutil.copytree(
        PACKAGE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__")
    )
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--disable-pip-version-check",
            "-w",
            str(tmp_path),
            str(source),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    (wheel,) = tmp_path.glob("dcx_obelisk-0.1.0-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        entry_points = next(
            archive.read(n).decode() for n in names if n.endswith("entry_points.txt")
        )
    assert {"dcx_obelisk/cli.py", "dcx_obelisk/rows.py"} <= set(names)
    assert "dcx-obelisk = dcx_obelisk.cli:main" in entry_points
