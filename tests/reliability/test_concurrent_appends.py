"""Concurrent appends to the append-only logs (SPEC §3.5, §8.5): no interleaving, no lost line.

16 console-script processes at once:
- ``dcx writeback``: 12 distinct summaries and 4 copies of one more →
  ``events.jsonl`` gains exactly 13 whole lines, every id recomputes, and the
  4 copies collapse into one (the idempotency check runs under the lock);
- ``dcx propose``: 12 distinct proposals and 4 copies of one more →
  ``decisions/<id>.jsonl`` gains exactly 13 proposal lines naming stored
  packets.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.figures import record
from tests.support.reliability import copy_workspace, cycle_template, knob, launch, run_script

DECISION = "ttl-2026-12"
PROCESSES = knob("DCX_APPEND_PROCESSES", 16)
COPIES = 4  # of the last distinct record: they must land once


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    return cycle_template(tmp_path_factory)


def _whole_lines(path: Path) -> tuple[list[str], bool]:
    data = path.read_bytes()
    return data.decode().split("\n")[:-1], data.endswith(b"\n") or not data


def test_sixteen_writebacks_append_whole_lines_and_lose_none(template, tmp_path: Path) -> None:
    from dcx.state import events

    root = copy_workspace(template, tmp_path / "goal")
    log = root / ".decision-context/events.jsonl"
    before, _ = _whole_lines(log)
    distinct = PROCESSES - COPIES
    summaries = [f"Concurrent validation {i:02d} of the TTL decision" for i in range(distinct)]
    summaries += ["Concurrent validation repeated by four agents"] * COPIES
    commands = [
        [
            "-C",
            str(root),
            "writeback",
            "--decision-id",
            DECISION,
            "--kind",
            "validation",
            "--summary",
            s,
            "--wait",
            "30",
            "--format",
            "json",
        ]
        for s in summaries
    ]
    results = launch(commands, template.env())

    lines, ends_whole = _whole_lines(log)
    added = lines[len(before) :]
    parsed = []
    broken = 0
    for line in added:
        try:
            parsed.append(json.loads(line))
        except ValueError:
            broken += 1
    appended_flags = [r["doc"]["data"]["appended"] for r in results if r["code"] == 0]
    record(
        "concurrency",
        "writeback_appends",
        {
            "processes": len(results),
            "exit_0": sum(r["code"] == 0 for r in results),
            "lines_added": len(added),
            "expected_lines": distinct + 1,
            "broken_lines": broken,
            "lost_lines": len(set(summaries) - {e.get("summary") for e in parsed}),
            "duplicates": len(parsed) - len({e.get("event_id") for e in parsed}),
            "max_seconds": round(max(r["elapsed"] for r in results), 3),
        },
    )
    assert all(r["code"] == 0 for r in results), [
        (r["code"], r["doc"], r["stderr"][-200:]) for r in results
    ]
    assert ends_whole and broken == 0 and lines[: len(before)] == before
    assert len(added) == distinct + 1
    assert sorted(e["summary"] for e in parsed) == sorted(set(summaries))
    assert all(events.id_recomputes(e) for e in parsed)
    assert (
        appended_flags.count(True) == distinct + 1
    )  # the copies: one appended, three found it there
    assert run_script(["-C", str(root), "verify"], env=template.env()).code == 0


def test_sixteen_proposals_append_whole_index_lines(template, tmp_path: Path) -> None:
    root = copy_workspace(template, tmp_path / "goal")
    index = root / ".decision-context/decisions" / f"{DECISION}.jsonl"
    before, _ = _whole_lines(index)
    base = json.loads((root / "proposal.json").read_text())
    distinct = PROCESSES - COPIES
    files = []
    for i in range(PROCESSES):
        body = json.loads(json.dumps(base))
        n = min(i, distinct)  # the last COPIES files are the same proposal
        body["recommended_decision"]["rationale"] = f"Variant {n:02d}: the origin absorbs the load."
        path = tmp_path / f"proposal-{i}.json"
        path.write_text(json.dumps(body))
        files.append(path)
    commands = [
        [
            "-C",
            str(root),
            "propose",
            "--decision-id",
            DECISION,
            "--from",
            str(f),
            "--wait",
            "30",
            "--format",
            "json",
        ]
        for f in files
    ]
    results = launch(commands, template.env())

    lines, ends_whole = _whole_lines(index)
    added = [json.loads(line) for line in lines[len(before) :]]
    refs = (
        {r["doc"]["data"]["proposal"]["packet_ref"] for r in results if r["code"] == 0}
        if all(r["code"] == 0 for r in results)
        else set()
    )
    record(
        "concurrency",
        "index_appends",
        {
            "processes": len(results),
            "exit_0": sum(r["code"] == 0 for r in results),
            "lines_added": len(added),
            "expected_lines": distinct + 1,
            "lost_lines": len(refs - {e["ref"] for e in added}),
            "duplicates": len(added) - len({e["ref"] for e in added}),
            "max_seconds": round(max(r["elapsed"] for r in results), 3),
        },
    )
    assert all(r["code"] == 0 for r in results), [
        (r["code"], r["doc"], r["stderr"][-200:]) for r in results
    ]
    assert ends_whole and lines[: len(before)] == before
    assert [e["kind"] for e in added] == ["proposal"] * (distinct + 1)
    assert {e["ref"] for e in added} == refs and len(refs) == distinct + 1
    for entry in added:
        assert (root / ".decision-context/packets/proposal" / f"{entry['ref']}.json").exists()
    assert run_script(["-C", str(root), "verify"], env=template.env()).code == 0
