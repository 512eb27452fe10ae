from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import run_dcx

PROFILE = Path(".decision-context/profile.toml")


def _profile(root: Path, body: str) -> None:
    (root / ".decision-context" / "profile.toml").write_text(body)


ENABLED = """\
schema_version = "decision_context_profile_v0"
goal_id = "goal-test"
enabled = true
enabled_agents = ["agent-a", "agent-b"]
"""

REGISTRY_PLUGIN = """\
schema_version = "decision_source_registry_v0"
[[bindings]]
provider_id = "files"
adapter = "local-file"
[[bindings]]
provider_id = "mail"
adapter = "imap-not-installed"
[[sources]]
source_id = "docs"
provider_id = "files"
source_kind = "document"
priority = "p0"
evidence_level = "s1"
objectives = ["latency"]
scan_mode = "incremental"
exact_read_policy = "always"
freshness_seconds = 3600
locator = "docs"
"""


def test_status_of_example_is_available(dcx, example: Path, snapshot_json) -> None:
    result = dcx("-C", str(example), "status", "--format", "json")
    assert result.exit_code == 0
    assert result.json()["data"]["activation"]["status"] == "available"
    assert result.json() == snapshot_json


def test_status_text_names_goal_and_status(dcx, example: Path) -> None:
    result = dcx("-C", str(example), "status")
    assert result.exit_code == 0
    assert "catalog-cache-ttl" in result.stdout and "available" in result.stdout


@pytest.mark.parametrize(
    ("setup", "agent", "status", "reason"),
    [
        ("no_profile", "agent-a", "disabled", "profile_missing"),
        ("invalid", "agent-a", "profile_invalid", "profile_unavailable_or_invalid"),
        ("goal_mismatch", "agent-a", "profile_invalid", "goal_scope_mismatch"),
        ("default_off", "agent-a", "disabled", "profile_disabled"),
        ("enabled", "agent-z", "agent_not_enabled", "agent_not_enabled"),
        ("enabled", None, "agent_not_enabled", "agent_id_required"),
        (
            "plugin_missing",
            "agent-a",
            "provider_unavailable",
            "source_provider_adapter_unavailable",
        ),
        ("enabled", "agent-b", "available", None),
    ],
)
def test_activation_statuses_in_order(dcx, fresh_ws: Path, setup, agent, status, reason) -> None:
    dc = fresh_ws / ".decision-context"
    if setup == "no_profile":
        (dc / "profile.toml").unlink()
    elif setup == "invalid":
        _profile(fresh_ws, ENABLED + "surprise = 1\n")
    elif setup == "goal_mismatch":
        _profile(fresh_ws, ENABLED.replace('"goal-test"', '"other-goal"'))
    elif setup in ("enabled", "plugin_missing"):
        _profile(fresh_ws, ENABLED)
    if setup == "plugin_missing":
        (dc / "sources.toml").write_text(REGISTRY_PLUGIN)
    args = ["-C", str(fresh_ws), "status", "--format", "json"]
    if agent:
        args += ["--agent-id", agent]
    result = dcx(*args)
    activation = result.json()["data"]["activation"]
    assert (activation["status"], activation["reason_code"]) == (status, reason)
    assert result.exit_code == (2 if status == "profile_invalid" else 0)
    if setup == "plugin_missing":
        assert activation["unavailable_adapter_count"] == 1
        assert activation["active"] is True
        # adapters show only as local-file or plugin, never the plugin's name
        assert "imap-not-installed" not in result.stdout
        assert sorted(a["adapter"] for a in activation["adapters"]) == ["local-file", "plugin"]


def test_status_shows_invalid_profile_then_exits_2(dcx, fresh_ws: Path, snapshot_json) -> None:
    _profile(fresh_ws, ENABLED + "surprise = 1\n")
    result = dcx("-C", str(fresh_ws), "status", "--format", "json", "--agent-id", "agent-a")
    assert result.exit_code == 2
    assert "profile.toml: surprise, line 5: unknown field(s): surprise" in result.stdout
    assert result.json() == snapshot_json
    text = dcx("-C", str(fresh_ws), "status", "--agent-id", "agent-a")
    assert text.exit_code == 2 and "profile_invalid" in text.stdout


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_fast_path_matches_typer_path(dcx, example: Path, fmt: str) -> None:
    typer_out = dcx("-C", str(example), "status", "--format", fmt)
    fast_out = run_dcx("-C", str(example), "status", "--format", fmt)
    assert fast_out.exit_code == typer_out.exit_code == 0
    assert fast_out.stdout == typer_out.stdout
    assert "\x1b[" not in fast_out.stdout  # not a terminal: no colour codes


def test_status_check_runs_live_checks(dcx, example: Path) -> None:
    before = dcx("-C", str(example), "status", "--check", "--format", "json").json()["data"][
        "checks"
    ]
    assert before["sources"] == [
        {"source_id": "source:authority:docs", "status": "ok", "reason_code": None}
    ]
    assert before["recall"] == {
        "provider": "bm25",
        "status": "unavailable",
        "reason_code": "index_missing",
    }
    assert dcx("-C", str(example), "index").exit_code == 0
    (example / "docs").rename(example / "moved-docs")
    after = dcx("-C", str(example), "status", "--check", "--format", "json").json()["data"][
        "checks"
    ]
    assert after["recall"]["status"] == "ready"
    assert after["sources"][0]["reason_code"] == "locator_missing"
    assert "checks" not in dcx("-C", str(example), "status", "--format", "json").json()["data"]


def test_every_activation_reason_code_has_one_message() -> None:
    """Codes collected from activation.py's source (the 4th argument of each Activation(...))."""
    import ast

    from dcx.cli._status_text import MESSAGES
    from tests.support.workspace import REPO

    tree = ast.parse((REPO / "dcx" / "state" / "activation.py").read_text())
    codes = {
        node.args[3].value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", "") == "Activation"
        and len(node.args) >= 4
        and isinstance(node.args[3], ast.Constant)
        and isinstance(node.args[3].value, str)
    }
    assert "goal_scope_mismatch" in codes and "agent_not_enabled" in codes
    assert codes == set(MESSAGES)


def test_status_names_the_code_once_with_its_meaning(dcx, example) -> None:
    out = dcx("-C", str(example), "status", "--agent-id", "agent-z").stdout
    line = next(line for line in out.splitlines() if line.startswith("status"))
    assert line.count("agent_not_enabled") == 1
    assert "dcx enable --agent" in line
