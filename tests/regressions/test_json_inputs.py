"""Issue 11 §3: hostile JSON inputs — deep nesting, duplicate keys, two readers of stdin."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cycle import PROPOSAL, D, seed_evidence


@pytest.fixture
def with_evidence(example: Path) -> Path:
    seed_evidence(example, D)
    return example


@pytest.mark.parametrize("depth", [200, 100_000])
@pytest.mark.parametrize("verb", ["propose", "outcome", "prepare"])
def test_deeply_nested_json_is_invalid_json(
    dcx, with_evidence: Path, verb: str, depth: int
) -> None:
    path = with_evidence / "deep.json"
    path.write_text('{"a": ' + "[" * depth + "]" * depth + "}")
    flag = "--rebase" if verb == "prepare" else "--from"
    result = dcx(
        "-C", str(with_evidence), verb, "--decision-id", D, flag, str(path), "--format", "json"
    )
    assert result.exit_code == 2, result.stdout
    error = result.json()["error"]
    assert (
        error["code"] == "invalid_json"
        and "deep.json" in error["message"]
        and "nested" in error["message"]
    )


def test_duplicate_keys_are_refused_naming_the_key(dcx, with_evidence: Path) -> None:
    text = json.dumps(PROPOSAL)
    inner = '"recommended_decision": {'
    assert inner in text
    dup = text.replace(inner, inner + '"confidence": 0.1, ', 1)  # the same key twice in one object
    path = with_evidence / "dup.json"
    path.write_text(dup)
    result = dcx(
        "-C",
        str(with_evidence),
        "propose",
        "--decision-id",
        D,
        "--from",
        str(path),
        "--format",
        "json",
    )
    assert result.exit_code == 2, result.stdout
    error = result.json()["error"]
    assert (
        error["code"] == "invalid_json"
        and "'confidence'" in error["message"]
        and "duplicate" in error["message"]
    )
    assert not (with_evidence / ".decision-context" / "packets" / "proposal").exists() or not any(
        (with_evidence / ".decision-context" / "packets" / "proposal").iterdir()
    )


def test_two_readers_of_stdin_are_refused(dcx, example: Path) -> None:
    rebase = json.dumps({"semantic_no_change": True})
    result = dcx(
        "-C",
        str(example),
        "prepare",
        "--decision-id",
        D,
        "--rebase",
        "-",
        "--query-file",
        "-",
        "--query-summary",
        "TTL rollback criteria",
        "--format",
        "json",
        input=rebase,
    )
    assert result.exit_code == 2, result.stdout
    error = result.json()["error"]
    assert (
        error["code"] == "stdin_twice"
        and "--rebase" in error["message"]
        and "--query-file" in error["message"]
    )
