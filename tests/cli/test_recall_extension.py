"""`dcx recall` through the extension provider, end to end (issue 5, judged items)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.support.extensions import install, make_extension
from tests.support.workspace import REPO

PACKAGE = REPO / "packages" / "dcx-obelisk"
FAKE_OBELISK = REPO / "fixtures" / "obelisk" / "bin"


def enable_extension(root: Path, extension_id: str | None = None, timeout: int = 10) -> None:
    config = (
        f'\n[context_provider.config]\nextension_id = "{extension_id}"\n' if extension_id else ""
    )
    (root / ".decision-context" / "profile.toml").write_text(
        'schema_version = "decision_context_profile_v0"\ngoal_id = "goal-test"\nenabled = true\n'
        f'enabled_agents = ["agent-a"]\n[context_provider]\nprovider = "extension"\ntimeout_seconds = {timeout}\n'
        + config
    )


def recall(dcx, root: Path, *extra: str):
    return dcx(
        "-C",
        str(root),
        "recall",
        "--scope",
        "codex://threads/thread-a",
        "--query",
        "cache ttl QUERY-CANARY",
        "--query-summary",
        "Cache TTL question",
        "--format",
        "json",
        *extra,
    )


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_good_extension_content_reaches_recall_but_no_file(
    dcx, fresh_ws: Path, tmp_path: Path
) -> None:
    install(fresh_ws, make_extension(tmp_path / "exts", "good.py"))
    enable_extension(fresh_ws)
    before = _tree(fresh_ws / ".decision-context")
    result = recall(dcx, fresh_ws)
    assert result.exit_code == 0, result.stdout
    packet = result.json()["data"]
    assert "CONTENT-CANARY-good-1" in json.dumps(packet)
    receipt = packet["receipt"] if "receipt" in packet else packet["retrieval"]
    assert "CONTENT-CANARY" not in json.dumps(receipt) and "QUERY-CANARY" not in json.dumps(receipt)
    assert _tree(fresh_ws / ".decision-context") == before
    # the request the extension saw carried the normalised scope, never the deep link
    assert "host-session:codex:thread-a" in json.dumps(packet) and "codex://" not in json.dumps(
        packet
    )


def test_disable_then_enable_recovers_without_profile_edit(
    dcx, fresh_ws: Path, tmp_path: Path
) -> None:
    install(fresh_ws, make_extension(tmp_path / "exts", "good.py"))
    enable_extension(fresh_ws)
    profile = (fresh_ws / ".decision-context" / "profile.toml").read_bytes()
    assert dcx("-C", str(fresh_ws), "ext", "disable", "good").exit_code == 0
    off = recall(dcx, fresh_ws).json()["data"]
    text = json.dumps(off)
    assert '"extension_disabled"' in text and '"enable_extension"' in text
    assert dcx("-C", str(fresh_ws), "ext", "enable", "good").exit_code == 0
    on = recall(dcx, fresh_ws).json()["data"]
    assert on["status"] == "completed"
    assert (fresh_ws / ".decision-context" / "profile.toml").read_bytes() == profile


def test_replaced_executable_needs_doctor(dcx, fresh_ws: Path, tmp_path: Path) -> None:
    manifest = make_extension(tmp_path / "exts", "good.py")
    install(fresh_ws, manifest)
    enable_extension(fresh_ws)
    script = manifest.parent / "good.py"
    script.write_text(script.read_text() + "\n# changed\n")
    stale = json.dumps(recall(dcx, fresh_ws).json()["data"])
    assert '"extension_doctor_not_ready"' in stale and '"run_extension_doctor"' in stale
    assert dcx("-C", str(fresh_ws), "ext", "doctor", "good").exit_code == 0
    assert recall(dcx, fresh_ws).json()["data"]["status"] == "completed"


def test_two_ready_extensions_without_id_are_ambiguous(dcx, fresh_ws: Path, tmp_path: Path) -> None:
    install(fresh_ws, make_extension(tmp_path / "exts", "good.py"))
    install(fresh_ws, make_extension(tmp_path / "exts", "good.py", ext_id="good-two"))
    enable_extension(fresh_ws)
    text = json.dumps(recall(dcx, fresh_ws).json()["data"])
    assert '"extension_provider_ambiguous"' in text and '"select_extension_id"' in text
    enable_extension(fresh_ws, "good-two")
    assert recall(dcx, fresh_ws).json()["data"]["status"] == "completed"


HOSTILE = {
    "hang.py": "extension_timeout",
    "flood.py": "response_too_large",
    "not_json.py": "response_not_json",
    "exit_nonzero.py": "extension_exit_nonzero",
    "extra_field.py": "provider_contract_invalid",
    "missing_field.py": "provider_contract_invalid",
    "nan_score.py": "provider_contract_invalid",
    "nine_items.py": "provider_contract_invalid",
    "completed_reason.py": "provider_contract_invalid",
    "unavailable_items.py": "provider_contract_invalid",
    "summary_path.py": "provider_contract_invalid",
}


@pytest.mark.parametrize("script", sorted(HOSTILE))
def test_hostile_extension_fails_open_with_its_reason(
    dcx, fresh_ws: Path, tmp_path: Path, script: str
) -> None:
    install(fresh_ws, make_extension(tmp_path / "exts", script, timeout=2))
    enable_extension(fresh_ws, timeout=2)
    result = recall(dcx, fresh_ws)
    assert result.exit_code == 0 and result.json()["status"] == "partial"
    data = result.json()["data"]
    assert data["status"] == "unavailable" and data["reason_code"] == HOSTILE[script]
    assert "CANARY" not in json.dumps(data).replace("QUERY-CANARY", "")


def test_profile_timeout_below_manifest_reaches_the_request(
    dcx, fresh_ws: Path, tmp_path: Path
) -> None:
    install(fresh_ws, make_extension(tmp_path / "exts", "good.py", timeout=30))
    enable_extension(fresh_ws, timeout=3)
    content = json.dumps(recall(dcx, fresh_ws).json()["data"])
    assert '\\"timeout_seconds\\": 3' in content  # the good fixture echoes its request into content


def test_parent_secret_does_not_reach_the_extension(
    dcx, fresh_ws: Path, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("DCX_TEST_PARENT_SECRET", "parent-secret-canary")
    install(fresh_ws, make_extension(tmp_path / "exts", "env_probe.py"))
    enable_extension(fresh_ws)
    result = recall(dcx, fresh_ws)
    assert result.exit_code == 0
    assert "parent-secret-canary" not in result.stdout


def test_unknown_extension_config_key_is_refused(dcx, fresh_ws: Path) -> None:
    enable_extension(fresh_ws, "good")
    profile = fresh_ws / ".decision-context" / "profile.toml"
    profile.write_text(profile.read_text() + 'colour = "red"\n')
    result = recall(dcx, fresh_ws)
    assert result.exit_code == 3 and "context_provider.config.colour" in result.stdout


def test_obelisk_end_to_end_returns_only_that_sessions_visible_turns(
    dcx, fresh_ws: Path, monkeypatch
) -> None:
    monkeypatch.setenv(
        "PATH",
        os.pathsep.join([str(FAKE_OBELISK), str(Path(sys.executable).parent), os.environ["PATH"]]),
    )
    out = dcx(
        "-C", str(fresh_ws), "ext", "install", str(PACKAGE / "extension.toml"), "--format", "json"
    )
    assert out.exit_code == 0, out.stdout
    enable_extension(fresh_ws, "dcx-obelisk")
    result = recall(dcx, fresh_ws)
    assert result.exit_code == 0, result.stdout
    contents = [r["content"] for r in result.json()["data"]["results"]]
    assert contents == [
        "KEEP user: should we raise the cache TTL to 600 seconds?",
        "KEEP assistant: the runbook says 300 seconds; raising it needs owner sign-off.",
    ]
