"""`dcx mcp` lists one tool per command with input schemas derived from the packet specs.

Oracles: the checked-in docs/schemas/ files (generated from the specs, checked
by tests/test_schemas.py) for the documents tools take whole; the jsonschema
library (draft 2020-12) for every tool schema and as a second judge of
malformed arguments; the CLI's command table for which tools must exist.
"""

from __future__ import annotations

import json

import pytest

from tests.support.cycle import PROPOSAL
from tests.support.mcp import connect, error, run
from tests.support.workspace import REPO

# SPEC §14: tools mirror these commands.
SPEC_14 = (
    "status",
    "scan",
    "index",
    "prepare",
    "recall",
    "propose",
    "outcome",
    "writeback",
    "gate",
    "review",
    "commit",
    "feedback",
    "log",
    "show",
    "verify",
    "audit",
    "report",
)
# Commands offered as tools beyond SPEC §14's list (docs/mcp.md says why).
BEYOND_SPEC = ("abandon",)
SCHEMAS = REPO / "docs" / "schemas"


def _schema_file(name: str) -> dict:
    body = json.loads((SCHEMAS / f"{name}.schema.json").read_text())
    return {k: v for k, v in body.items() if k not in ("$schema", "$id", "title")}


def _cli_commands() -> set[str]:
    from typer.main import get_command

    from dcx.cli.app import build_app

    return set(get_command(build_app()).commands)


def _session(example):
    async def main():
        async with connect(example) as client:
            listed = await client.list_tools()
            templates = await client.list_resource_templates()
            calls = {
                "unknown_field": await client.call_tool("log", {"limit": 1, "colour": "red"}),
                "wrong_type": await client.call_tool("log", {"limit": "ten"}),
                "below_minimum": await client.call_tool("log", {"limit": 0}),
                "missing_required": await client.call_tool("show", {}),
                "bad_nested": await client.call_tool(
                    "propose",
                    {
                        "decision_id": "d1",
                        "proposal": {
                            **PROPOSAL,
                            "objective_scores": [
                                {"objective_id": "o", "score": 1.5, "rationale": "r"}
                            ],
                        },
                    },
                ),
                "bad_decision_id": await client.call_tool(
                    "propose", {"decision_id": "Not OK", "proposal": PROPOSAL}
                ),
            }
            unknown = None
            try:
                await client.call_tool("rm_rf", {})
            except Exception as exc:  # the SDK raises the JSON-RPC error as MCPError
                unknown = exc
            after = await client.call_tool("status", {})
            return listed, templates, calls, unknown, after

    return run(main)


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    from tests.support.workspace import copy_example

    root = copy_example(tmp_path_factory.mktemp("mcp-tools") / "example")
    return _session(root)


def test_every_spec_command_that_exists_is_a_tool(session) -> None:
    listed = session[0]
    names = [t.name for t in listed.tools]
    assert len(names) == len(set(names))
    assert set(names) == set(SPEC_14 + BEYOND_SPEC) & _cli_commands()
    for one in listed.tools:
        assert one.description and len(one.description) > 40, one.name
        assert (
            one.input_schema["type"] == "object"
            and one.input_schema["additionalProperties"] is False
        )


def test_input_schemas_are_the_spec_derivation(session) -> None:
    from jsonschema import Draft202012Validator

    from dcx.mcp.tools import BY_NAME

    for one in session[0].tools:
        Draft202012Validator.check_schema(one.input_schema)
        assert one.input_schema == BY_NAME[one.name].args.schema(), one.name
    schemas = {t.name: t.input_schema for t in session[0].tools}
    # documents a tool takes whole are exactly the checked-in schemas of the CLI's input files
    assert schemas["propose"]["properties"]["proposal"] == _schema_file(
        "decision_proposal_input_v0"
    )
    assert schemas["outcome"]["properties"]["outcome"] == _schema_file("decision_outcome_input_v0")
    assert schemas["prepare"]["properties"]["rebase"] == _schema_file("decision_rebase_input_v0")
    # a query and its summary keep the advisory request's bounds; only the description is the tool's
    request = _schema_file("decision_context_advisory_retrieve_request_v0")["properties"]
    for tool_name in ("recall", "prepare"):
        for name in ("query", "query_summary"):
            mine = {
                k: v
                for k, v in schemas[tool_name]["properties"][name].items()
                if k != "description"
            }
            theirs = {k: v for k, v in request[name].items() if k != "description"}
            assert mine == theirs, (tool_name, name)
    event = _schema_file("loopx_rollout_event_v0")["properties"]
    # writeback appends the LoopX kinds; abandon is a stored kind with its own tool, never a writeback
    kinds = schemas["writeback"]["properties"]["kind"]["enum"]
    assert (
        kinds == [k for k in event["event_kind"]["enum"] if k != "abandon"]
        and "validation" in kinds
    )
    assert (
        schemas["writeback"]["properties"]["summary"]["maxLength"] == event["summary"]["maxLength"]
    )
    # required: what the command cannot run without
    assert schemas["propose"]["required"] == ["decision_id", "proposal"]
    assert schemas["recall"]["required"] == ["query", "query_summary"]  # scope: the profile's
    assert schemas["commit"]["required"] == ["decision_id", "event_id"]
    assert schemas["audit"]["properties"] == {}


def test_the_tool_table_snapshot(session, snapshot_json) -> None:
    dumped = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in session[0].tools]
    assert dumped == snapshot_json


def test_resource_templates(session) -> None:
    uris = sorted(t.uri_template for t in session[1].resource_templates)
    assert uris == ["dcx://decisions/{decision_id}", "dcx://packets/{ref}"]


@pytest.mark.parametrize(
    ("case", "code", "field"),
    [
        ("unknown_field", "unknown_field", "colour"),
        ("wrong_type", "invalid_type", "limit"),
        ("below_minimum", "out_of_range", "limit"),
        ("missing_required", "missing_field", None),
        ("bad_nested", "out_of_range", "proposal.objective_scores[0].score"),
        ("bad_decision_id", "invalid_field", "decision_id"),
    ],
)
def test_malformed_arguments_are_tool_errors_with_dcx_codes(session, case, code, field) -> None:
    err = error(session[2][case])
    assert err["code"] == code and err["exit_code"] == 2, err
    if field is not None:
        assert err["field"] == field


def test_the_schema_agrees_with_the_server_on_malformed_arguments(session) -> None:
    """jsonschema, reading the listed schema alone, rejects what the server rejected."""
    from jsonschema import Draft202012Validator

    schemas = {t.name: t.input_schema for t in session[0].tools}
    sent = {
        "unknown_field": ("log", {"limit": 1, "colour": "red"}),
        "wrong_type": ("log", {"limit": "ten"}),
        "below_minimum": ("log", {"limit": 0}),
        "missing_required": ("show", {}),
        "bad_nested": (
            "propose",
            {
                "decision_id": "d1",
                "proposal": {
                    **PROPOSAL,
                    "objective_scores": [{"objective_id": "o", "score": 1.5, "rationale": "r"}],
                },
            },
        ),
        "bad_decision_id": ("propose", {"decision_id": "Not OK", "proposal": PROPOSAL}),
    }
    for case, (name, arguments) in sent.items():
        assert not Draft202012Validator(schemas[name]).is_valid(arguments), case
    assert Draft202012Validator(schemas["propose"]).is_valid(
        {"decision_id": "d1", "proposal": PROPOSAL}
    )


def test_an_unknown_tool_is_a_protocol_error_and_the_server_goes_on(session) -> None:
    unknown, after = session[3], session[4]
    assert unknown is not None and "unknown tool" in str(unknown)
    assert not after.is_error


def _doc_requests() -> list[dict]:
    import re

    text = (REPO / "docs" / "mcp.md").read_text()
    found = []
    for body in re.findall(r"^```json\n(.*?)^```", text, re.M | re.S):
        doc = json.loads(body)
        if doc.get("method") == "tools/call":
            found.append(doc["params"])
    return found


def test_docs_list_every_tool_and_their_requests_validate() -> None:
    """docs/mcp.md names every tool, and its example requests pass the schema and the server's own check."""
    from jsonschema import Draft202012Validator

    from dcx.mcp.tools import BY_NAME, TOOLS

    text = (REPO / "docs" / "mcp.md").read_text()
    for one in TOOLS:
        assert f"| `{one.name}` |" in text, one.name
        for argument in one.args.fields:
            assert f"`{argument}`" in text, (one.name, argument)
    requests = _doc_requests()
    assert len(requests) >= 2
    for params in requests:
        one = BY_NAME[params["name"]]
        assert Draft202012Validator(one.input_schema()).is_valid(params["arguments"]), params
        one.args.check(params["arguments"])
