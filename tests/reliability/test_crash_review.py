"""Crash injection and races on `dcx review` (SPEC §3.5, §8.6, §10), like the commit path's.

One template per module: the session's cycle template (tests.support.reliability) with a
person's approve gate recorded on ``ttl-2026-12`` (``dcx gate``), so one
``dcx review --gate-event`` writes the review receipt, its validation event,
the cursor file and the commit receipt. Each run copies it and kills the
review with SIGKILL — at each named fault step (``DCX_FAULT_POINT``) or
after a random delay, in warm forked children (tests/support/forkrun.py). After every
kill the cursor file is byte for byte the old or the new one (mode 0600), and
the next ``dcx review`` of the same gate finishes the settlement: cursors =
NEW, exactly one review receipt (indexed once), one validation event, one
commit receipt (indexed once), no pending companion, and ``dcx verify``
exits 0. Then 16 console scripts review the same gate at once: exactly one
settles, every other replays it or is refused lock busy (``--wait 0``).

Knobs: ``DCX_CRASH_REVIEW_RUNS`` (random runs, default 12),
``DCX_RACE_PROCESSES`` (default 16). Figures go to bench/reliability.py.
"""

from __future__ import annotations

import json
import random
import statistics
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.support.figures import record
from tests.support.reliability import (
    ForkRunner,
    commit_receipts,
    copy_workspace,
    cycle_template,
    dcx_ok,
    index_lines,
    knob,
    launch,
    pending_exists,
    remove_tree,
    run_script,
    temp_files,
)
from tests.support.workspace import cursor_bytes

DECISION = "ttl-2026-12"
RUNS = knob("DCX_CRASH_REVIEW_RUNS", 12)
PROCESSES = knob("DCX_RACE_PROCESSES", 16)

# step -> (cursor file right after the kill, how the next review finishes); the review writes the
# review packet (atomic write 1), its index line and the validation event (appends), then the
# cursor file (atomic write 2) and the commit receipt (atomic write 3), all under the cursor lock.
STEPS = {
    "atomic_write.before_replace": ("old", "advanced"),
    "atomic_write.after_replace": ("old", "advanced"),
    "review.after_receipt": ("old", "advanced"),
    "review.after_event": ("old", "advanced"),
    "commit.before_cursor_write": ("old", "advanced"),
    "atomic_write.before_replace@2": ("old", "advanced"),
    "atomic_write.after_replace@2": ("new", "finished"),
    "commit.after_cursor_write": ("new", "finished"),
    "atomic_write.before_replace@3": ("new", "finished"),
    "atomic_write.after_replace@3": ("new", "replayed"),
    "commit.after_receipt": ("new", "replayed"),
    "commit.after_index": ("new", "replayed"),
}


class Gated:
    def __init__(self, template, root: Path, gate_id: str) -> None:
        self.template, self.root, self.gate_id = template, root, gate_id

    def env(self, **extra: str) -> dict[str, str]:
        return self.template.env(**extra)


@pytest.fixture(scope="module")
def gated(tmp_path_factory) -> Gated:
    template = cycle_template(tmp_path_factory)
    root = copy_workspace(template, tmp_path_factory.mktemp("gated") / "goal")
    doc = dcx_ok(
        [
            "-C",
            str(root),
            "gate",
            "--decision-id",
            DECISION,
            "--approve",
            "--by",
            "storefront-platform-lead",
            "--summary",
            "Approved by the owner",
        ],
        template.env(),
    )
    return Gated(template, root, doc["data"]["event"]["event_id"])


def _review_args(root: Path, gated: Gated, *extra: str) -> list[str]:
    return [
        "-C",
        str(root),
        "review",
        "--decision-id",
        DECISION,
        "--gate-event",
        gated.gate_id,
        "--format",
        "json",
        *extra,
    ]


@pytest.fixture(scope="module")
def new_cursors(gated: Gated, tmp_path_factory) -> bytes:
    root = copy_workspace_from(gated.root, tmp_path_factory.mktemp("review-reference") / "goal")
    out = run_script(_review_args(root, gated), env=gated.env())
    assert out.code == 0, out.stdout + out.stderr
    assert out.json()["data"]["commit"]["status"] == "committed"
    data = cursor_bytes(root)
    assert data is not None and data != gated.template.old_cursors
    assert json.loads(data)["cursors"] == gated.template.decisions[DECISION].proposed
    return data


def copy_workspace_from(src: Path, dest: Path) -> Path:
    import shutil

    shutil.copytree(src, dest, symlinks=True)
    return dest


def _files(root: Path, kind: str) -> list[Path]:
    folder = root / ".decision-context/packets" / kind
    return (
        [p for p in folder.glob("*.json") if not p.name.startswith(".")] if folder.is_dir() else []
    )


def _validation_lines(root: Path) -> list[dict[str, Any]]:
    lines = (root / ".decision-context/events.jsonl").read_text().splitlines()
    return [
        e
        for e in map(json.loads, lines)
        if (e.get("details") or {}).get("capability") == "decision_context"
    ]


def _state(root: Path, old: bytes, new: bytes) -> str:
    data = cursor_bytes(root)
    return "old" if data == old else "new" if data == new else "torn"


def _check(root: Path, gated: Gated, new: bytes, problems: list[str], label: str) -> str:
    path = root / ".decision-context/private/cursors/agent-a.json"
    state = _state(root, gated.template.old_cursors, new)
    if state == "torn":
        problems.append(f"{label}: cursors.json is neither the old nor the new file")
    if path.stat().st_mode & 0o777 != 0o600:
        problems.append(f"{label}: cursors.json mode {oct(path.stat().st_mode & 0o777)}")
    for temp in temp_files(root):
        if not (temp.name.startswith(".") and temp.name.endswith(".tmp")):
            problems.append(f"{label}: leftover {temp.name} is not a skipped temp name")
    return state


def _recover(run, root: Path, gated: Gated, new: bytes, problems: list[str], label: str) -> str:
    out = run(_review_args(root, gated))
    if out.code != 0:
        problems.append(
            f"{label}: next review exit {out.code}: {out.stdout[:300]} {out.stderr[:300]}"
        )
        return "failed"
    data = out.json()["data"]
    if cursor_bytes(root) != new:
        problems.append(f"{label}: cursors after the next review are not the new state")
    counts = {
        "review packets": len(_files(root, "review")),
        "review index lines": len(index_lines(root, DECISION, "review")),
        "validation events": len({e["event_id"] for e in _validation_lines(root)}),
        "validation lines": len(_validation_lines(root)),
        "commit receipts": len(commit_receipts(root, DECISION)),
        "commit index lines": len(index_lines(root, DECISION, "commit")),
    }
    for what, count in counts.items():
        if count != 1:
            problems.append(f"{label}: {count} {what}")
    if pending_exists(root, gated.template.decisions[DECISION].assembly_ref):
        problems.append(f"{label}: the pending companion is still there")
    if run(["-C", str(root), "verify", "--format", "json"]).code != 0:
        problems.append(f"{label}: verify failed after recovery")
    if data["replayed"]:
        return "replayed"
    return "advanced" if data["commit"]["status"] == "committed" else "finished"


def test_kill_review_at_each_named_fault_step(
    gated: Gated, new_cursors: bytes, tmp_path: Path
) -> None:
    problems: list[str] = []
    seen: dict[str, tuple[str, str]] = {}
    kills = 0
    runner = ForkRunner(tmp_path / "scratch")
    try:
        for step in STEPS:
            root = copy_workspace_from(gated.root, tmp_path / step.replace("@", "-"))
            # a warm forked child (forkrun.py) killed by its own fault hook: the same entry point as the
            # console script, without its imports (the commit tests kill the console script at each step)
            killed = runner.run(
                _review_args(root, gated), env=gated.env(DCX_FAULT_POINT=step), cwd=root
            )
            kills += int(killed.code == -9)
            if killed.code != -9:
                problems.append(
                    f"{step}: the fault step was not reached (exit {killed.code}) {killed.stdout[:200]}"
                )
            state = _check(root, gated, new_cursors, problems, step)

            def warm(args: list[str], root: Path = root):
                return runner.run(args, env=gated.env(), cwd=root)

            if warm(["-C", str(root), "verify", "--format", "json"]).code != 0:
                problems.append(f"{step}: verify failed right after the crash")
            seen[step] = (state, _recover(warm, root, gated, new_cursors, problems, step))
            remove_tree(root)
    finally:
        runner.close()
    record(
        "crash",
        "review_named_steps",
        {"steps": sorted(STEPS), "runs": len(STEPS), "kills": kills, "failures": len(problems)},
    )
    assert not problems, problems[:10]
    assert seen == STEPS


def test_random_kills_of_review(gated: Gated, new_cursors: bytes, tmp_path: Path) -> None:
    rng = random.Random(knob("DCX_CRASH_SEED", 20261129))
    runner = ForkRunner(tmp_path / "scratch")
    problems: list[str] = []
    phases: Counter[str] = Counter()
    try:
        durations = []
        for i in range(5):
            root = copy_workspace_from(gated.root, tmp_path / f"calibrate-{i}")
            out = runner.run(_review_args(root, gated), env=gated.env(), cwd=root)
            assert out.code == 0, out.stdout + out.stderr
            if i >= 2:
                durations.append(out.elapsed)
            remove_tree(root)
        warm_time = statistics.median(durations)
        kills = 0
        for i in range(RUNS):
            root = copy_workspace_from(gated.root, tmp_path / f"run-{i}")
            delay = rng.random() * warm_time * 1.1
            out = runner.run(_review_args(root, gated), env=gated.env(), cwd=root, kill_after=delay)
            kills += int(out.killed)
            if not out.killed and out.code != 0:
                problems.append(
                    f"random #{i}: the review failed on its own (exit {out.code}): {out.stdout[:300]}"
                )
            state = _check(root, gated, new_cursors, problems, f"random #{i}")
            phases[state if out.killed else "completed"] += 1

            def warm(args: list[str], root: Path = root):
                return runner.run(args, env=gated.env(), cwd=root)

            _recover(warm, root, gated, new_cursors, problems, f"random #{i}")
            remove_tree(root)
    finally:
        runner.close()
    record(
        "crash",
        "review_random",
        {
            "runs": RUNS,
            "kills": kills,
            "phases": dict(phases),
            "warm_review_seconds": round(warm_time, 4),
            "failures": len(problems),
        },
    )
    assert not problems, problems[:10]
    if RUNS >= 12:
        assert kills >= RUNS // 3, dict(phases)


def test_sixteen_processes_review_the_same_gate(gated: Gated, tmp_path: Path) -> None:
    root = copy_workspace_from(gated.root, tmp_path / "goal")
    commands = [
        _review_args(root, gated, "--wait", "10" if i % 2 else "0") for i in range(PROCESSES)
    ]
    results = launch(commands, gated.env())
    settled = [r for r in results if r["code"] == 0 and not r["doc"]["data"]["replayed"]]
    replayed = [r for r in results if r["code"] == 0 and r["doc"]["data"]["replayed"]]
    busy = [
        r
        for r in results
        if r["code"] == 4 and r["doc"] and r["doc"]["error"]["code"] == "lock_busy"
    ]
    other = [r for r in results if r not in settled + replayed + busy]
    record(
        "concurrency",
        "same_gate_review",
        {
            "processes": len(results),
            "settled": len(settled),
            "replayed": len(replayed),
            "lock_busy": len(busy),
            "other": len(other),
            "hung": sum(r["code"] is None for r in results),
            "max_seconds": round(max(r["elapsed"] for r in results), 3),
        },
    )
    assert not other, [(r["code"], r["doc"], r["stderr"][-300:]) for r in other]
    assert len(settled) == 1 and settled[0]["doc"]["data"]["commit"]["status"] == "committed"
    winner = settled[0]["doc"]["data"]
    for r in replayed:
        data = r["doc"]["data"]
        assert (data["review"], data["commit"]) == (winner["review"], winner["commit"])
    assert all(
        r["args"][-1] == "0" for r in busy
    )  # only a process that would not wait is turned away
    assert json.loads(cursor_bytes(root))["cursors"] == gated.template.decisions[DECISION].proposed
    assert len(_files(root, "review")) == 1 and len(index_lines(root, DECISION, "review")) == 1
    assert len(_validation_lines(root)) == 1 and len(commit_receipts(root, DECISION)) == 1
    assert run_script(["-C", str(root), "verify"], env=gated.env()).code == 0
