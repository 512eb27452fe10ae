"""`dcx gc` and `dcx abandon`, end to end.

gc's oracle is a digest of every public file (never touched) and a listing of
private/ written from SPEC's layout, not from gc's own helpers.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

from tests.support.cycle import D, prepared, through_writeback

DC = ".decision-context"


def _public_digest(root: Path) -> dict[str, str]:
    out = {}
    dc = root / DC
    for path in sorted(dc.rglob("*")):
        rel = path.relative_to(dc).as_posix()
        if (
            rel.startswith("private/")
            or rel == "private"
            or path.is_dir()
            or path.name.endswith((".tmp", ".lock"))
        ):
            continue
        out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def _age(path: Path, seconds: float = 3600) -> None:
    past = time.time() - seconds
    os.utime(path, (past, past))


def _private(root: Path, folder: str) -> list[str]:
    base = root / DC / "private" / folder
    return sorted(p.name for p in base.iterdir()) if base.is_dir() else []


def test_gc_after_a_commit_removes_its_pending_and_unreferenced_trees_never_public_files(
    dcx, example: Path
) -> None:
    prepared(dcx, example)
    event_id = through_writeback(dcx, example)
    assert (
        dcx("-C", str(example), "commit", "--decision-id", D, "--event-id", event_id).exit_code == 0
    )
    # plant the leftovers of a crashed run the way they would lie
    trees = example / DC / "private" / "trees"
    orphan_tree = trees / ("ab" * 32 + ".json")
    orphan_tree.write_text("{}")
    temp = example / DC / "packets" / ".evidence-x.tmp"
    temp.parent.mkdir(parents=True, exist_ok=True)
    temp.write_text("half")
    fresh_temp = example / DC / ".profile.toml.tmp"
    fresh_temp.write_text("in flight")
    for path in (orphan_tree, temp):
        _age(path)
    before_public = _public_digest(example)
    before_trees = _private(example, "trees")

    dry = dcx("-C", str(example), "gc", "--dry-run", "--format", "json").json()["data"]
    assert dry["dry_run"] is True
    assert {item["path"] for item in dry["removed"]["temp"]} == {f"{DC}/packets/.evidence-x.tmp"}
    assert f"{DC}/private/trees/{orphan_tree.name}" in {
        item["path"] for item in dry["removed"]["trees"]
    }
    assert dry["kept_recent"] >= 1  # the fresh temp file
    assert _private(example, "trees") == before_trees and temp.exists()  # a dry run removes nothing

    done = dcx("-C", str(example), "gc", "--format", "json").json()["data"]
    assert done["removed"] == dry["removed"]
    assert not temp.exists() and not orphan_tree.exists() and fresh_temp.exists()
    assert _public_digest(example) == before_public
    # the committed cursor's tree map stays
    cursors = json.loads((example / DC / "private" / "cursors" / "agent-a.json").read_text())
    named = {
        v.split(":", 1)[1] for v in (cursors.get("cursors", cursors)).values() if isinstance(v, str)
    }
    assert named and all((trees / f"{digest}.json").exists() for digest in named)
    assert dcx("-C", str(example), "verify").exit_code == 0
    again = dcx("-C", str(example), "gc").stdout
    assert again.startswith("nothing to remove")


def test_gc_removes_the_companion_of_a_superseded_unproposed_assembly_only(
    dcx, example: Path
) -> None:
    first = prepared(dcx, example)
    (example / "docs" / "origin-rate-limits.md").write_text("# Origin rate limits\nNow 2500 rps.\n")
    second = dcx(
        "-C", str(example), "prepare", "--decision-id", D, "--auto-rebase", "--format", "json"
    ).json()["data"]
    pending = example / DC / "private" / "pending"
    names = sorted(p.stem for p in pending.glob("*.json"))
    assert (
        first["assembly"]["assembly_ref"] in names and second["assembly"]["assembly_ref"] in names
    )
    result = dcx("-C", str(example), "gc", "--format", "json").json()["data"]
    assert [(item["reason"]) for item in result["removed"]["pending"]] == ["superseded"]
    assert sorted(p.stem for p in pending.glob("*.json")) == [second["assembly"]["assembly_ref"]]
    # the live one still commits
    event_id = through_writeback(dcx, example)
    assert (
        dcx("-C", str(example), "commit", "--decision-id", D, "--event-id", event_id).exit_code == 0
    )


def test_gc_drops_the_stat_cache_of_a_removed_source(dcx, example: Path) -> None:
    assert dcx("-C", str(example), "scan").exit_code == 0
    caches = [n for n in _private(example, "cache") if n.startswith("stat-")]
    assert caches
    for name in caches:
        _age(example / DC / "private" / "cache" / name)
    assert (
        dcx("-C", str(example), "gc", "--format", "json").json()["data"]["removed"]["stat_caches"]
        == []
    )
    assert dcx("-C", str(example), "source", "rm", "source:authority:docs").exit_code == 0
    removed = dcx("-C", str(example), "gc", "--format", "json").json()["data"]["removed"][
        "stat_caches"
    ]
    assert [item["reason"] for item in removed] == ["source_removed"] * len(caches)
    # what is left is no source's: the cache of verified statements (SPEC §18)
    assert _private(example, "cache") == ["statements-verified.txt"]


def test_abandon_stops_next_steps_and_refuses_commit(dcx, example: Path) -> None:
    prepared(dcx, example)
    event_id = through_writeback(dcx, example)
    status = dcx("-C", str(example), "status", "--format", "json").json()["data"]["workspace"][
        "decisions"
    ]
    assert status[0]["next_step"] == "commit"
    result = dcx(
        "-C",
        str(example),
        "abandon",
        "--decision-id",
        D,
        "--summary",
        "superseded by the CDN move",
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.stdout
    event = result.json()["data"]["event"]
    assert event["event_kind"] == "abandon" and event["artifact_refs"]
    again = dcx(
        "-C",
        str(example),
        "abandon",
        "--decision-id",
        D,
        "--summary",
        "superseded by the CDN move",
        "--format",
        "json",
    ).json()["data"]
    assert again["appended"] is False
    status = dcx("-C", str(example), "status", "--format", "json").json()["data"]["workspace"][
        "decisions"
    ]
    assert (status[0]["next_step"], status[0]["abandoned"]) == (None, True)
    log = dcx("-C", str(example), "log", "--format", "json").json()["data"]["decisions"]
    assert (log[0]["next_step"], log[0]["abandoned"]) == (None, True)
    assert log[0]["last_observed_at"] == status[0]["last_observed_at"]
    text = dcx("-C", str(example), "log").stdout
    assert f"{D}" in text and "abandoned" in text and "next: dcx" not in text
    assert "abandoned" in dcx("-C", str(example), "status").stdout
    commit = dcx(
        "-C", str(example), "commit", "--decision-id", D, "--event-id", event_id, "--format", "json"
    )
    assert commit.exit_code == 1 and commit.json()["error"]["code"] == "decision_abandoned"
    # the abandon event itself is never a commit event
    commit = dcx(
        "-C",
        str(example),
        "commit",
        "--decision-id",
        D,
        "--event-id",
        event["event_id"],
        "--format",
        "json",
    )
    assert commit.exit_code == 1
    assert dcx("-C", str(example), "verify").exit_code == 0


def test_abandon_refuses_unknown_decisions_and_unsafe_summaries(dcx, example: Path) -> None:
    result = dcx(
        "-C", str(example), "abandon", "--decision-id", "nope", "--summary", "x", "--format", "json"
    )
    assert result.exit_code == 2 and result.json()["error"]["code"] == "unknown_decision"
    prepared(dcx, example)
    before = (example / DC / "events.jsonl").read_bytes()
    result = dcx(
        "-C",
        str(example),
        "abandon",
        "--decision-id",
        D,
        "--summary",
        "key AKIAIOSFODNN7EXAMPLE",
        "--format",
        "json",
    )
    assert result.exit_code == 2 and result.json()["error"]["field"] == "--summary"
    assert (example / DC / "events.jsonl").read_bytes() == before


def test_status_and_log_agree_on_the_last_observed_time_of_a_union_merged_index(
    dcx, example: Path
) -> None:
    prepared(dcx, example)
    index = example / DC / "decisions" / f"{D}.jsonl"
    lines = index.read_text().splitlines()
    # a union merge can leave an older line last
    entry = json.loads(lines[0])
    late = dict(entry, observed_at="2030-01-01T00:00:00Z")
    index.write_text("\n".join([json.dumps(late, sort_keys=True), *lines[1:], lines[0]]) + "\n")
    status = dcx("-C", str(example), "status", "--format", "json").json()["data"]["workspace"][
        "decisions"
    ][0]
    log = dcx("-C", str(example), "log", "--format", "json").json()["data"]["decisions"][0]
    assert status["last_observed_at"] == log["last_observed_at"] == "2030-01-01T00:00:00Z"
