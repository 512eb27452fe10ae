"""Issue 11 §3: `dcx init` inside a folder an enclosing workspace's source covers, and nested
`.decision-context/` folders, which are never authority at any depth."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.workspace import install_key


def _changed(dcx, root: Path) -> int:
    result = dcx("-C", str(root), "scan", "--format", "json")
    assert result.exit_code == 0, result.stderr
    return sum(r["changed_count"] for r in result.json()["data"]["receipts"])


def test_init_inside_a_covered_folder_is_refused(dcx, example: Path) -> None:
    inner = example / "docs" / "team"
    inner.mkdir()
    result = dcx("-C", str(inner), "init", "--goal-id", "team-goal", "--format", "json")
    assert result.exit_code == 2, result.stdout
    error = result.json()["error"]
    assert error["code"] == "nested_workspace"
    assert "source:authority:docs" in error["message"] and "--nested" in error["hint"]
    assert not (inner / ".decision-context").exists()
    text = dcx("-C", str(inner), "init")
    assert text.exit_code == 2 and "Traceback" not in text.stderr


def test_init_beside_the_sources_of_an_enclosing_workspace_is_allowed(dcx, example: Path) -> None:
    outside = example / "tools"  # the example's only source is docs/
    outside.mkdir()
    assert dcx("-C", str(outside), "init", "--goal-id", "tools").exit_code == 0


@pytest.mark.parametrize("nested", ["init", "planted"])
def test_nested_decision_context_is_never_scanned(dcx, example: Path, nested: str) -> None:
    before = _changed(dcx, example)
    inner = example / "docs" / "team" / "deeper"
    inner.mkdir(parents=True)
    if nested == "init":
        install_key(inner)
        result = dcx("-C", str(inner), "init", "--goal-id", "team-goal", "--nested")
        assert result.exit_code == 0, result.stderr
    else:
        (inner / ".decision-context").mkdir(exist_ok=True)
        (inner / ".decision-context" / "README.md").write_text("# not authority\n")
    assert (inner / ".decision-context" / "README.md").exists()
    assert _changed(dcx, example) == before
    from dcx.core.walk import walk
    from dcx.core.workspace import Workspace

    walked = walk(
        Workspace(example),
        "source:authority:docs",
        {"path": "docs"},
        max_scan_bytes=1 << 20,
        save_cache=False,
    )
    assert walked.files and not any(".decision-context" in rel.split("/") for rel in walked.files)
