"""The workbench's ops (SPEC §12): a posted profile judged and recalled through, in-process."""

from __future__ import annotations

from pathlib import Path

import pytest

from dcx.core.clock import clock_from_env
from dcx.core.errors import InvalidInput, NoWorkspace
from dcx.core.workspace import Workspace
from dcx.ops import workbench


def _profile(root: Path) -> str:
    return (root / ".decision-context" / "profile.toml").read_text()


def test_inspect_projection_snapshot(example: Path, snapshot_json) -> None:
    ws = Workspace(example)
    result = workbench.inspect(ws=ws, agent_id="agent-a", body={"profile_toml": _profile(example)})
    assert result.data == snapshot_json


def test_the_object_and_the_toml_forms_judge_alike(example: Path) -> None:
    import tomllib

    ws = Workspace(example)
    text = _profile(example)
    as_text = workbench.inspect(ws=ws, agent_id="agent-a", body={"profile_toml": text}).data
    as_object = workbench.inspect(
        ws=ws, agent_id="agent-a", body={"profile": tomllib.loads(text)}
    ).data
    assert as_text == as_object


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "profile"),
        ({"profile": {}, "profile_toml": ""}, "profile"),
        ({"profile": "text"}, "profile"),
        ({"profile_toml": 3}, "profile_toml"),
        ({"profile_toml": "goal_id = ["}, None),
        (
            {
                "profile_toml": 'schema_version = "decision_context_profile_v0"\ngoal_id = "catalog-cache-ttl"\nextra = 1\n'
            },
            "extra",
        ),
    ],
)
def test_bad_posted_profiles_name_the_field(example: Path, body: dict, field: str | None) -> None:
    with pytest.raises(InvalidInput) as caught:
        workbench.inspect(ws=Workspace(example), agent_id="agent-a", body=body)
    assert caught.value.field == field


def test_start_fixes_the_agent_and_reads_the_editor_text(example: Path) -> None:
    session = workbench.start(ws=Workspace(example), agent_id=None)
    assert session.agent_id == "agent-a"  # the profile's only enabled agent
    assert session.profile_text == _profile(example)


def test_start_without_a_profile_offers_a_template_and_needs_an_agent(fresh_ws: Path) -> None:
    ws = Workspace(fresh_ws)
    (fresh_ws / ".decision-context" / "profile.toml").unlink()
    with pytest.raises(NoWorkspace) as caught:
        workbench.start(ws=ws, agent_id=None)
    assert caught.value.code == "agent_id_required"
    session = workbench.start(ws=ws, agent_id="agent-a")
    assert 'goal_id = "goal-test"' in session.profile_text
    with pytest.raises(InvalidInput):
        workbench.start(ws=ws, agent_id="not a token")


def test_recall_missing_query_is_named(example: Path) -> None:
    with pytest.raises(InvalidInput) as caught:
        workbench.recall(
            ws=Workspace(example),
            agent_id="agent-a",
            body={"profile_toml": _profile(example), "query_summary": "s"},
            clock=clock_from_env(),
        )
    assert (caught.value.field, caught.value.code) == ("query", "missing_field")
