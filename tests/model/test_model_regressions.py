"""Failing examples the model-based test (``test_cycle_model.py``) found, kept as plain regression tests."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli import invoker

PROFILE = """schema_version = "decision_context_profile_v0"
goal_id = "goal-model"
enabled = true
enabled_agents = ["agent-a"]
[context_provider]
provider = "bm25"
"""
SOURCE = """[[sources]]
source_id = "{sid}"
provider_id = "files"
source_kind = "document"
priority = "p0"
evidence_level = "s1"
objectives = ["latency"]
scan_mode = "incremental"
exact_read_policy = "always"
freshness_seconds = 86400
locator = "{sid}"
"""


def _goal(tmp_path: Path) -> tuple[Path, object]:
    dcx = invoker()
    root = tmp_path / "goal"
    for sid in ("docs", "vanish"):
        (root / sid).mkdir(parents=True)
        (root / sid / "a.md").write_text(
            f"# {sid}\n\nThe catalog TTL rule holds for the storefront edge.\n"
        )
    assert (
        dcx("-C", str(root), "init", "--goal-id", "goal-model", "--agent-id", "agent-a").exit_code
        == 0
    )
    (root / ".decision-context" / "profile.toml").write_text(PROFILE)
    (root / ".decision-context" / "sources.toml").write_text(
        'schema_version = "decision_source_registry_v0"\n[[bindings]]\nprovider_id = "files"\n'
        'adapter = "local-file"\n' + "".join(SOURCE.format(sid=sid) for sid in ("docs", "vanish"))
    )
    return root, dcx


def test_a_baseline_is_partial_coverage_since_it_reads_nothing(tmp_path: Path) -> None:
    """`--baseline` adopts without reading (SPEC §8.2), so no exact read confirmed what it adopted:
    coverage is `partial` and says so (docs/decision-cycle.md), never "every required source was
    scanned and read completely" with 0 exact reads. Once nothing changed, a baseline is complete."""
    root, dcx = _goal(tmp_path)
    env = {"DCX_AGENT_ID": "agent-a"}
    out = dcx(
        "-C", str(root), "prepare", "--decision-id", "d0", "--baseline", "--format", "json", env=env
    )
    assert out.exit_code == 0, out.stdout
    data = json.loads(out.stdout)
    coverage = data["data"]["assembly"]["coverage"]
    assert coverage["status"] == "partial"
    assert sorted(coverage["incomplete_required_source_ids"]) == ["docs", "vanish"]
    p0 = next(row for row in coverage["priorities"] if row["priority"] == "p0")
    assert p0["exact_read_incomplete_count"] == 2 and p0["complete_count"] == 0
    assert data["status"] == "partial"
    assert any("baseline adopts the current state without reading" in w for w in data["warnings"])
    rows = data["data"]["assembly"]["checkpoint"]["rows"]
    assert {r["reason_code"] for r in rows} == {"baseline_adopted"}  # still committable
    # a p0 source that did fail still makes a baseline partial
    (root / "vanish" / "a.md").unlink()
    (root / "vanish").rmdir()
    out = dcx(
        "-C",
        str(root),
        "prepare",
        "--decision-id",
        "d1",
        "--baseline",
        "--format",
        "json",
        env={"DCX_AGENT_ID": "agent-a"},
    )
    coverage = json.loads(out.stdout)["data"]["assembly"]["coverage"]
    assert (
        coverage["status"] == "partial" and "vanish" in coverage["incomplete_required_source_ids"]
    )
    p0 = next(row for row in coverage["priorities"] if row["priority"] == "p0")
    assert p0["status_counts"].get("unavailable") == 1  # the vanished source failed its scan


def test_auto_rebase_with_recall_over_a_plain_folder_source(tmp_path: Path) -> None:
    """Found by the model (no_internal_error), and listed in issue 11 §3: a folder source with no
    include/exclude made `prepare --auto-rebase` exit 5 (TypeError) when a recalled claim pointed at an
    unchanged file. (The smallest fix, in dcx/evidence/assembler.py; the §3 branch may fix it too.)"""
    root, dcx = _goal(tmp_path)
    env = {"DCX_AGENT_ID": "agent-a"}
    assert dcx("-C", str(root), "index", env=env).exit_code == 0
    query = ("--query", "catalog TTL rule storefront", "--query-summary", "TTL rule")
    # commit a first decision, so the files are unchanged against the cursors
    assert (
        dcx("-C", str(root), "prepare", "--decision-id", "d0", "--baseline", env=env).exit_code == 0
    )
    fixtures = Path(__file__).resolve().parents[2] / "fixtures" / "cycle"
    for verb in ("propose", "outcome"):
        name = "proposal" if verb == "propose" else "outcome"
        out = dcx(
            "-C",
            str(root),
            verb,
            "--decision-id",
            "d0",
            "--from",
            str(fixtures / f"{name}.json"),
            env=env,
        )
        assert out.exit_code == 0, out.stdout
    event = json.loads(
        dcx(
            "-C",
            str(root),
            "writeback",
            "--decision-id",
            "d0",
            "--kind",
            "validation",
            "--summary",
            "baseline adopted",
            "--format",
            "json",
            env=env,
        ).stdout
    )["data"]["event"]
    assert (
        dcx(
            "-C",
            str(root),
            "commit",
            "--decision-id",
            "d0",
            "--event-id",
            event["event_id"],
            env=env,
        ).exit_code
        == 0
    )
    again = dcx(
        "-C",
        str(root),
        "prepare",
        "--decision-id",
        "d1",
        "--auto-rebase",
        *query,
        "--format",
        "json",
        env=env,
    )
    assert again.exit_code == 0, again.stdout
    accepted = json.loads(again.stdout)["data"]["assembly"]["evidence"]["recalled_claims"]
    assert accepted  # the unchanged authority confirms what the index holds


def test_a_file_leaving_the_include_glob_is_a_confirmed_deletion(tmp_path: Path) -> None:
    """Found by the model once it had a git source (coverage_partial_iff_p0_failed): a file that an
    edited `include` no longer admits is a deletion in the scan, but its exact read found the file still
    on disk and called it `exact_read_revision_mismatch` ("it came back"), so the p0 source never
    became complete. Out of the locator's view is deleted, for the read as for the scan."""
    root, dcx = _goal(tmp_path)
    env = {"DCX_AGENT_ID": "agent-a"}
    (root / "docs" / "moved.txt").write_text(
        "plain text, in view while the locator has no include\n"
    )
    assert (
        dcx("-C", str(root), "prepare", "--decision-id", "d0", "--baseline", env=env).exit_code == 0
    )
    fixtures = Path(__file__).resolve().parents[2] / "fixtures" / "cycle"
    for verb, name in (("propose", "proposal"), ("outcome", "outcome")):
        assert (
            dcx(
                "-C",
                str(root),
                verb,
                "--decision-id",
                "d0",
                "--from",
                str(fixtures / f"{name}.json"),
                env=env,
            ).exit_code
            == 0
        )
    event = json.loads(
        dcx(
            "-C",
            str(root),
            "writeback",
            "--decision-id",
            "d0",
            "--kind",
            "validation",
            "--summary",
            "baseline adopted",
            "--format",
            "json",
            env=env,
        ).stdout
    )["data"]["event"]
    assert (
        dcx(
            "-C",
            str(root),
            "commit",
            "--decision-id",
            "d0",
            "--event-id",
            event["event_id"],
            env=env,
        ).exit_code
        == 0
    )
    registry = root / ".decision-context" / "sources.toml"
    registry.write_text(
        registry.read_text().replace(
            'locator = "docs"', 'locator = { path = "docs", include = ["**/*.md"] }'
        )
    )
    out = dcx(
        "-C",
        str(root),
        "prepare",
        "--decision-id",
        "d1",
        "--auto-rebase",
        "--format",
        "json",
        env=env,
    )
    assert out.exit_code == 0, out.stdout
    assembly = json.loads(out.stdout)["data"]["assembly"]
    assert assembly["coverage"]["status"] == "complete", assembly["coverage"]
    rows = {r["source_id"]: r["disposition"] for r in assembly["checkpoint"]["rows"]}
    assert rows["docs"] == "ready_after_writeback"
