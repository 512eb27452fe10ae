"""Bad profile or registry input: exit 2, the key and its line named, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

GOOD_SOURCE = """\
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
locator = {{ path = "docs", include = ["**/*.md"] }}
{extra}"""

HEAD = """\
schema_version = "decision_source_registry_v0"

[[bindings]]
provider_id = "files"
adapter = "local-file"

"""

CASES = {
    "unknown_key": (
        HEAD + GOOD_SOURCE.format(extra='colour = "red"\n'),
        "sources[0].colour, line 18",
        "unknown field",
    ),
    "wrong_type": (
        HEAD + GOOD_SOURCE.format(extra="").replace("3600", '"an hour"'),
        "sources[0].freshness_seconds, line 16",
        "expected an integer",
    ),
    "bad_token": (
        HEAD
        + GOOD_SOURCE.format(extra="").replace('source_id = "docs"', 'source_id = "has space"'),
        "sources[0].source_id, line 8",
        "expected a token",
    ),
    "duplicate_source": (
        HEAD + GOOD_SOURCE.format(extra="") + "\n" + GOOD_SOURCE.format(extra=""),
        "sources[1].source_id, line 20",
        "duplicate id 'docs'",
    ),
    "missing_binding": (
        HEAD
        + GOOD_SOURCE.format(extra="").replace(
            'provider_id = "files"\nsource_kind', 'provider_id = "mail"\nsource_kind'
        ),
        "sources[0].provider_id, line 9",
        "no [[bindings]] entry declares 'mail'",
    ),
    "invalid_toml": (HEAD + "[[sources]\nsource_id = 1\n", "invalid TOML", "line 7"),
    "out_of_range": (
        HEAD + GOOD_SOURCE.format(extra="max_changes = 0\n"),
        "sources[0].max_changes, line 18",
        "outside 1..10000",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_registry_is_exit_2_with_key_and_line(dcx, fresh_ws: Path, case: str) -> None:
    body, where, problem = CASES[case]
    (fresh_ws / ".decision-context" / "sources.toml").write_text(body)
    before = sorted(p.relative_to(fresh_ws) for p in fresh_ws.rglob("*"))
    result = dcx("-C", str(fresh_ws), "sources", "--write")
    assert result.exit_code == 2, result.stdout + result.stderr
    first = result.stderr.splitlines()[0]
    assert first.startswith("error: .decision-context/sources.toml")
    assert where in first and problem in first, first
    assert "Traceback" not in result.stderr
    assert sorted(p.relative_to(fresh_ws) for p in fresh_ws.rglob("*")) == before


PROFILE_CASES = {
    "unknown_key": (
        'enabled = true\nenabled_agents = ["a"]\n[context_provider]\nprovider = "bm25"\nmax_result = 3\n',
        "context_provider.max_result, line 7",
    ),
    "wrong_type": ('enabled = "yes"\n', "enabled, line 3"),
    "bad_token": ('enabled_agents = ["agent a"]\n', "enabled_agents[0], line 3"),
    "max_results_bool": (
        "[context_provider]\nmax_results = true\n",
        "context_provider.max_results, line 4",
    ),
    "timeout_range": (
        "[context_provider]\ntimeout_seconds = 121\n",
        "context_provider.timeout_seconds, line 4",
    ),
    "enabled_without_agents": ("enabled = true\n", "enabled_agents"),
}


@pytest.mark.parametrize("case", sorted(PROFILE_CASES))
def test_bad_profile_is_exit_2_with_key_and_line(dcx, fresh_ws: Path, case: str) -> None:
    extra, where = PROFILE_CASES[case]
    profile = fresh_ws / ".decision-context" / "profile.toml"
    profile.write_text(
        'schema_version = "decision_context_profile_v0"\ngoal_id = "goal-test"\n' + extra
    )
    result = dcx("-C", str(fresh_ws), "status", "--agent-id", "a")
    assert result.exit_code == 2
    assert where in result.stdout, result.stdout
    assert "Traceback" not in result.stdout + result.stderr


def test_unknown_provider_config_key_is_exit_2_with_line(dcx, fresh_ws: Path) -> None:
    profile = fresh_ws / ".decision-context" / "profile.toml"
    profile.write_text(
        'schema_version = "decision_context_profile_v0"\ngoal_id = "goal-test"\nenabled = true\n'
        'enabled_agents = ["a"]\n[context_provider]\nprovider = "extension"\n[context_provider.config]\n'
        'extension_id = "x"\ncolour = "red"\n'
    )
    result = dcx("-C", str(fresh_ws), "status", "--agent-id", "a")
    assert result.exit_code == 2
    assert "context_provider.config.colour, line 9" in result.stdout
