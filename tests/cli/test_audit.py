from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.cycle import PROPOSAL, seed_evidence, write_json

D = "ttl-2026-12"
SENTENCE = "Set the edge setting catalog_ttl_seconds back to 900 and stale_while_revalidate_seconds back to 0"


@pytest.fixture
def proposed(dcx, example: Path) -> Path:
    seed_evidence(example, D)
    result = dcx(
        "-C",
        str(example),
        "propose",
        "--decision-id",
        D,
        "--from",
        str(write_json(example / "p.json", PROPOSAL)),
    )
    assert result.exit_code == 0
    return example


def _edit_proposal(root: Path, field: str, value: str) -> None:
    path = next((root / ".decision-context" / "packets" / "proposal").glob("*.json"))
    os.chmod(path, 0o644)
    body = json.loads(path.read_text())
    body["recommended_decision"][field] = value
    path.write_text(json.dumps(body, indent=2, sort_keys=True) + "\n")


def test_clean_example_has_no_findings(dcx, proposed: Path) -> None:
    result = dcx("-C", str(proposed), "audit", "--format", "json")
    assert result.exit_code == 0, result.stdout
    assert result.json()["data"]["findings"] == []


@pytest.mark.parametrize(
    ("planted", "problem"),
    [
        ("see {root}/docs for details", "goal root path"),
        ("quoting: " + SENTENCE, "a run of 12+ words of source text"),
        ("call with Bearer abcdefghijklmnop1234", "unsafe text (bearer token)"),
        ("ask ops-lead@example.com", "unsafe text (email)"),
    ],
)
def test_audit_finds_planted_leaks_without_printing_them(
    dcx, proposed: Path, planted: str, problem: str
) -> None:
    value = planted.format(root=proposed.resolve())
    _edit_proposal(proposed, "rationale", value)
    result = dcx("-C", str(proposed), "audit", "--format", "json")
    assert result.exit_code == 1
    findings = result.json()["data"]["findings"]
    assert {"file", "field", "problem"} <= set(findings[0])
    assert any(
        f["problem"] == problem and f["field"] == "recommended_decision.rationale" for f in findings
    )
    assert value not in result.stdout
    text = dcx("-C", str(proposed), "audit")
    assert text.exit_code == 1 and value not in text.stdout + text.stderr


def test_audit_finds_cursor_and_key_values(dcx, proposed: Path) -> None:
    from dcx.core.fsutil import atomic_write

    cursor = "tree:" + "e" * 64
    atomic_write(
        proposed / ".decision-context" / "private" / "cursors.json",
        json.dumps(
            {"schema_version": "dcx_cursors_v0", "cursors": {"source:authority:docs": cursor}}
        ).encode(),
    )
    _edit_proposal(proposed, "summary", "cursor " + cursor)
    found = dcx("-C", str(proposed), "audit", "--format", "json").json()["data"]["findings"]
    assert [f["problem"] for f in found] == ["cursor value"]
    _edit_proposal(proposed, "summary", bytes(range(32)).hex())
    found = dcx("-C", str(proposed), "audit", "--format", "json").json()["data"]["findings"]
    assert [f["problem"] for f in found] == ["workspace key"]
