"""Bad plans: one clear line naming the file and the line, exit 2, nothing written (SPEC §11, §3.6)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.compare import tiny_plan


@pytest.fixture
def plan() -> Path:
    return tiny_plan(Path.cwd() / "p")


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def _fails(dcx: Callable, plan: Path, *extra: str) -> str:
    result = dcx("compare", "p/plan.toml", "--freeze", "--report", "p/out", *extra)
    assert result.exit_code == 2, result.stdout + result.stderr
    assert not (plan.parent / "corpus.lock").exists() and not (plan.parent / "out").exists()
    lines = result.stderr.splitlines()
    assert lines[0].startswith("error: ") and "Traceback" not in result.stderr
    return lines[0].removeprefix("error: ")


def test_unknown_plan_key_names_file_and_line(dcx, plan: Path) -> None:
    _edit(plan, 'qrels = "qrels.txt"\n', 'qrels = "qrels.txt"\ncolour = "red"\n')
    assert _fails(dcx, plan) == "p/plan.toml: colour, line 4: unknown field(s): colour"


def test_unknown_key_in_a_profile_entry(dcx, plan: Path) -> None:
    _edit(plan, 'profile = "bm25.toml"\n', 'profile = "bm25.toml"\nweight = 2\n')
    assert _fails(dcx, plan) == "p/plan.toml: profiles[1].weight, line 19: unknown field(s): weight"


def test_k_over_8(dcx, plan: Path) -> None:
    _edit(plan, "k = [1, 2, 3]", "k = [1, 9]")
    assert (
        _fails(dcx, plan)
        == "p/plan.toml: k[1], line 4: 9 is outside 1..8 (recall returns at most 8 items)"
    )


def test_invalid_profile_file(dcx, plan: Path) -> None:
    (plan.parent / "bm25.toml").write_text(
        (plan.parent / "bm25.toml").read_text() + "max_results = 9\n"
    )
    assert _fails(dcx, plan) == (
        "p/plan.toml: profiles[1].profile, line 18: not a valid profile "
        "(p/bm25.toml: context_provider.max_results, line 8: 9 is outside 1..8)"
    )


def test_disabled_profile_cannot_be_compared(dcx, plan: Path) -> None:
    _edit(plan.parent / "bm25.toml", "enabled = true", "enabled = false")
    assert _fails(dcx, plan).startswith(
        "p/plan.toml: profiles[1].profile, line 18: p/bm25.toml is not enabled"
    )


def test_qrels_naming_an_unknown_query(dcx, plan: Path) -> None:
    (plan.parent / "qrels.txt").write_text(
        (plan.parent / "qrels.txt").read_text() + "q9 0 a.md 1\n"
    )
    assert _fails(dcx, plan) == "p/qrels.txt, line 8: unknown query 'q9' (not in p/queries.jsonl)"


def test_qrels_naming_an_unknown_document(dcx, plan: Path) -> None:
    _edit(plan.parent / "qrels.txt", "q2 0 c.md 1", "q2 0 corpus/c.md 1")
    assert _fails(dcx, plan) == (
        "p/qrels.txt, line 3: unknown document 'corpus/c.md' "
        "(a docid is a path relative to corpus.path)"
    )


def test_section_docids_need_a_heading_slug(dcx, plan: Path) -> None:
    _edit(plan, 'granularity = "file"', 'granularity = "section"')
    assert _fails(dcx, plan) == (
        "p/qrels.txt, line 1: unknown document 'a.md' (a docid is path#heading-slug)"
    )
    (plan.parent / "qrels.txt").write_text("q1 0 a.md#detail 2\nq1 0 a.md#alpha 1\n")
    result = dcx("compare", "p/plan.toml", "--format", "json")
    assert (
        result.exit_code == 1 and result.json()["error"]["code"] == "corpus_not_frozen"
    )  # the qrels passed


def test_duplicate_query_ids(dcx, plan: Path) -> None:
    queries = plan.parent / "queries.jsonl"
    lines = queries.read_text().splitlines()
    queries.write_text(
        "\n".join([*lines[:2], lines[0].replace("which fruit", "what fruit"), *lines[2:]]) + "\n"
    )
    assert _fails(dcx, plan) == "p/queries.jsonl, line 3: duplicate query_id 'q1' (first on line 1)"


def test_unknown_field_in_a_query_line(dcx, plan: Path) -> None:
    queries = plan.parent / "queries.jsonl"
    row = {"query_id": "q6", "query": "x", "query_summary": "x", "lang": "en"}
    queries.write_text(queries.read_text() + json.dumps(row) + "\n")
    assert _fails(dcx, plan) == "p/queries.jsonl, line 6: unknown field(s): lang"


def test_unsafe_query_summary_is_refused(dcx, plan: Path) -> None:
    queries = plan.parent / "queries.jsonl"
    row = {"query_id": "q6", "query": "x", "query_summary": "see /home/alice/notes.md"}
    queries.write_text(queries.read_text() + json.dumps(row) + "\n")
    message = _fails(dcx, plan)
    assert message.startswith("p/queries.jsonl, line 6: query_summary") and "alice" not in message


def test_json_error_envelope(dcx, plan: Path) -> None:
    _edit(plan, "k = [1, 2, 3]", "k = [3, 3]")
    result = dcx("compare", "p/plan.toml", "--format", "json")
    assert result.exit_code == 2
    error = result.json()["error"]
    assert (
        error["code"] == "duplicate_id"
        and error["message"] == "p/plan.toml: k, line 4: holds the same cut-off twice"
    )


def test_missing_plan_and_missing_lock(dcx, plan: Path) -> None:
    result = dcx("compare", "p/nope.toml")
    assert (
        result.exit_code == 2
        and result.stderr.splitlines()[0] == "error: p/nope.toml: no such plan file"
    )
    result = dcx("compare", "p/plan.toml")
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        "error: p/corpus.lock: the corpus is not frozen yet",
        "hint: freeze it once and keep the lock with the plan: dcx compare p/plan.toml --freeze",
    ]


def test_missing_compare_extra_is_one_clear_line(
    dcx, plan: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.setitem(
        sys.modules, "ir_measures", None
    )  # as if `pip install 'dcx[compare]'` never ran
    result = dcx("compare", "p/plan.toml", "--freeze")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "error: dcx compare needs ir-measures and pytrec-eval-terrier",
        "hint: pip install 'dcx[compare]' (make install does)",
    ]
    assert not (plan.parent / "corpus.lock").exists()
