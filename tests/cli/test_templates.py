"""`dcx propose --template` / `dcx outcome --template`: a commented skeleton that validates.

Oracles: the checked-in JSON Schemas (jsonschema, not dcx's checker) for the skeleton with its
comment lines taken off by the test's own rule, and the real `--from` of a real cycle for the
skeleton as printed, comments and all.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from tests.support.cycle import D
from tests.support.workspace import REPO

KINDS = {"propose": "decision_proposal_input_v0", "outcome": "decision_outcome_input_v0"}


def _schema(name: str) -> dict:
    return json.loads((REPO / "docs" / "schemas" / f"{name}.schema.json").read_text())


def _uncommented(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not re.match(r"\s*//", line))


def _names(schema: dict, root: dict) -> set[str]:
    """Every property name the schema defines, at any depth (following $ref into $defs)."""
    out: set[str] = set()
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if "$ref" in node:
                stack.append(root["$defs"][node["$ref"].rsplit("/", 1)[1]])
            out |= set(node.get("properties", {}))
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return out


@pytest.mark.parametrize("verb", sorted(KINDS))
def test_the_skeleton_validates_against_the_schema_and_names_every_field(dcx, verb) -> None:
    out = dcx(verb, "--template")  # no workspace and no --decision-id needed
    assert out.exit_code == 0, out.stdout + out.stderr
    schema = _schema(KINDS[verb])
    document = json.loads(_uncommented(out.stdout))
    Draft202012Validator(schema).validate(document)
    assert out.stdout.startswith(f"// {KINDS[verb]}")
    said = set(re.findall(r"//(?: \(optional\))? ([a-z_]+):", out.stdout))
    assert _names(schema, schema) <= said  # every field, optional ones too, has its comment
    again = dcx(verb, "--template", "--format", "json").json()
    assert again["data"]["schema"] == KINDS[verb] and again["data"]["content"] == out.stdout


def test_the_printed_skeletons_go_through_a_real_cycle(dcx, example: Path) -> None:
    """Unedited, comments and all: the proposal binds the evidence and the outcome accepts its
    recommended option (the two skeletons share the option id)."""
    root = ("-C", str(example))
    assert dcx(*root, "prepare", "--decision-id", D, "--auto-rebase").exit_code == 0
    for verb in ("propose", "outcome"):
        path = example / f"{verb}.json"
        path.write_text(dcx(verb, "--template").stdout)
        result = dcx(*root, verb, "--decision-id", D, "--from", str(path), "--format", "json")
        assert result.exit_code == 0, result.stdout
    outcome = result.json()["data"]["outcome"]
    assert outcome["accepted_decision"]["option_id"] == "option-1"


def test_a_missing_from_file_names_the_template_and_the_schema(dcx, example: Path) -> None:
    for verb, schema in KINDS.items():
        out = dcx(
            "-C", str(example), verb, "--decision-id", D, "--from", "nope.json", "--format", "json"
        )
        error = out.json()["error"]
        assert out.exit_code == 2 and "nope.json does not exist" in error["message"]
        assert f"dcx {verb} --template" in error["hint"]
        assert f"docs/schemas/{schema}.schema.json" in error["hint"]


def test_comment_lines_keep_the_line_numbers_of_errors(dcx, example: Path) -> None:
    text = dcx("propose", "--template").stdout.splitlines()
    bad = next(i for i, line in enumerate(text) if '"score"' in line)
    text[bad] = text[bad].replace("0.5", "0.5 oops")
    path = example / "broken.json"
    path.write_text("\n".join(text) + "\n")
    out = dcx(
        "-C", str(example), "propose", "--decision-id", D, "--from", str(path), "--format", "json"
    )
    assert out.exit_code == 2
    assert f"line {bad + 1} column" in out.json()["error"]["message"]


def test_decision_id_is_still_needed_to_propose(dcx, example: Path) -> None:
    out = dcx("-C", str(example), "propose", "--from", "x.json", "--format", "json")
    assert out.exit_code == 2 and "--decision-id" in out.json()["error"]["message"]
