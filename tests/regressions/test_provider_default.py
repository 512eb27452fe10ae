"""Issue 11 §3: one provider-default rule — bm25 unless `provider` names another — that the
template, docs and `dcx status` agree on; `dcx index` says when recall does not use its index."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.workspace import REPO

PROFILE = Path(".decision-context") / "profile.toml"
TABLE = """[context_provider]
provider = "bm25"
namespace = "decision-context"
max_results = 2
timeout_seconds = 10
"""


def _profile(root: Path, table: str) -> None:
    path = root / PROFILE
    text = path.read_text()
    assert TABLE in text
    path.write_text(text.replace(TABLE, table))


@pytest.mark.parametrize(
    ("table", "provider"),
    [
        ("", "bm25"),  # no table at all
        ("[context_provider]\nmax_results = 2\n", "bm25"),  # a table without `provider`
        (TABLE, "bm25"),
        ('[context_provider]\nprovider = "none"\n', "none"),
    ],
)
def test_status_and_recall_follow_one_rule(dcx, example: Path, table: str, provider: str) -> None:
    _profile(example, table)
    status = dcx("-C", str(example), "status", "--format", "json").json()["data"]["activation"]
    assert status["context_provider"] == provider
    assert dcx("-C", str(example), "index").exit_code == 0
    recall = dcx(
        "-C",
        str(example),
        "recall",
        "--scope",
        "",
        "--query",
        "roll back the TTL",
        "--query-summary",
        "TTL rollback",
        "--format",
        "json",
    ).json()["data"]
    receipt = recall.get("retrieval", recall)
    assert receipt["provider"] == provider, recall


def test_template_and_docs_state_the_same_rule(fresh_ws: Path) -> None:
    template = (fresh_ws / PROFILE).read_text()
    assert "bm25 (default)" in template and re.search(
        r"without the table.*bm25|bm25.*without the table", template, re.S | re.I
    ), template
    assert "Remove the table for none" not in template
    docs = (REPO / "docs" / "workspace.md").read_text()
    row = next(line for line in docs.splitlines() if line.startswith("| `[context_provider]`"))
    assert "absent" in row and "bm25" in row


def test_index_says_when_recall_does_not_use_it(dcx, example: Path) -> None:
    _profile(example, '[context_provider]\nprovider = "none"\n')
    result = dcx("-C", str(example), "index", "--format", "json")
    assert result.exit_code == 0
    body = result.json()
    assert body["data"]["recall_provider"] == "none"
    assert any("provider" in w and "none" in w for w in body["warnings"]), body["warnings"]
    text = dcx("-C", str(example), "index")
    assert "none" in text.stdout + text.stderr and "recall" in text.stdout + text.stderr
