"""Crash injection on `dcx commit` (SPEC §3.5, §8.6): kill it, then prove nothing is torn or lost.

One template workspace is prepared per session (tests.support.reliability.cycle_template): a base
decision is committed (the OLD cursors) and ``ttl-2026-12`` is prepared,
proposed, decided and written back, ready to advance both sources (the NEW
cursors). Each run copies it and runs ``dcx commit`` in a subprocess that dies
by SIGKILL — at each named fault step (``DCX_FAULT_POINT``, the console
script) or after a random delay (mostly warm forked children, see
tests/support/forkrun.py; some console scripts). After every kill:

- ``private/cursors.json`` parses and is byte-for-byte the OLD or the NEW file
  (mode 0600), and for a named step exactly the one that step implies;
- temp files a kill left are ``.*.tmp`` names that readers skip;
- the next ``dcx commit`` completes (committed, or replayed when the dead one
  got past its cursor write), leaving cursors = NEW, exactly one receipt, one
  index line and no pending companion; ``dcx verify`` exits 0.

A quarter of the random runs kill the recovering commit too (a second crash)
before the final one. ``DCX_CRASH_RUNS`` (default 200) sets the total;
figures go to bench/reliability.py.
"""

from __future__ import annotations

import json
import random
import statistics
import threading
from collections import Counter, deque
from pathlib import Path
from typing import Any

import pytest

from tests.support.figures import record
from tests.support.reliability import (
    ForkRunner,
    Outcome,
    commit_receipts,
    copy_workspace,
    cycle_template,
    index_lines,
    knob,
    pending_exists,
    remove_tree,
    run_script,
    temp_files,
)
from tests.support.workspace import cursor_bytes

DECISION = "ttl-2026-12"
RUNS = knob("DCX_CRASH_RUNS", 200)
STEP_REPEATS = knob("DCX_CRASH_STEP_REPEATS", 2)
SCRIPT_SHARE = 10  # every n-th random run kills the console script instead of a warm fork
WORKERS = 2

# step -> (cursor file right after the kill, how the next commit finishes)
#   advanced: the next commit advances the cursors itself (receipt "committed")
#   finished: cursors were already NEW, no receipt yet: the next commit writes one ("replayed")
#   replayed: the receipt exists: the next commit prints it (data.replayed) and tidies up
STEPS = {
    "commit.before_cursor_write": ("old", "advanced"),
    "atomic_write.before_replace": ("old", "advanced"),
    "atomic_write.after_replace": ("new", "finished"),
    "commit.after_cursor_write": ("new", "finished"),
    "atomic_write.before_replace@2": ("new", "finished"),
    "atomic_write.after_replace@2": ("new", "replayed"),
    "commit.after_receipt": ("new", "replayed"),
    "commit.after_index": ("new", "replayed"),
}


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    return cycle_template(tmp_path_factory)


@pytest.fixture(scope="module")
def new_cursors(template, tmp_path_factory) -> bytes:
    """The cursor file an uninterrupted commit writes (the reference run)."""
    root = copy_workspace(template, tmp_path_factory.mktemp("reference") / "goal")
    out = run_script(_commit_args(root, template), env=template.env())
    assert out.code == 0, out.stdout + out.stderr
    receipt = out.json()["data"]["receipt"]
    assert receipt["status"] == "committed"
    assert {row["result"] for row in receipt["sources"]} == {"advanced"}
    data = cursor_bytes(root)
    assert data is not None and data != template.old_cursors
    assert json.loads(data)["cursors"] == template.decisions[DECISION].proposed
    return data


def _commit_args(root: Path, template) -> list[str]:
    decision = template.decisions[DECISION]
    return [
        "-C",
        str(root),
        "commit",
        "--decision-id",
        DECISION,
        "--event-id",
        decision.event_id,
        "--format",
        "json",
    ]


class Tally:
    """Figures of all runs (threads add to it under a lock)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.counts: Counter[str] = Counter()
        self.phases: Counter[str] = Counter()
        self.failures: list[str] = []

    def add(self, **counts: int) -> None:
        with self.lock:
            self.counts.update(counts)

    def fail(self, what: str) -> None:
        with self.lock:
            self.failures.append(what)


def _state(root: Path, template, new: bytes) -> str:
    data = cursor_bytes(root)
    if data == template.old_cursors:
        return "old"
    if data == new:
        return "new"
    return "torn"


def _phase(root: Path, template, state: str) -> str:
    """How far the killed commit got, read from what it left."""
    decision = template.decisions[DECISION]
    if state != "new":
        return "before_cursor_write" if state == "old" else "torn"
    if not commit_receipts(root, DECISION):
        return "cursor_written"
    if not index_lines(root, DECISION, "commit"):
        return "receipt_written"
    return "indexed" if pending_exists(root, decision.assembly_ref) else "finished"


def _check_after_kill(root: Path, template, new: bytes, tally: Tally, label: str) -> str:
    path = root / ".decision-context/private/cursors/agent-a.json"
    state = _state(root, template, new)
    try:
        json.loads(path.read_bytes())
    except ValueError:
        tally.add(unparsable=1)
        tally.fail(f"{label}: cursors.json does not parse")
    if state == "torn":
        tally.add(torn=1)
        tally.fail(f"{label}: cursors.json is neither the old nor the new file")
    if path.stat().st_mode & 0o777 != 0o600:
        tally.add(bad_mode=1)
        tally.fail(f"{label}: cursors.json mode {oct(path.stat().st_mode & 0o777)}")
    temps = temp_files(root)
    tally.add(temp_files_left=len(temps))
    for temp in temps:
        if not (temp.name.startswith(".") and temp.name.endswith(".tmp")):
            tally.fail(f"{label}: leftover {temp.name} is not a skipped temp name")
    return state


def _recover(
    run, root: Path, template, new: bytes, tally: Tally, label: str
) -> dict[str, Any] | None:
    """The next commit must finish the job; verify must pass. Returns the commit's data."""
    decision = template.decisions[DECISION]
    out: Outcome = run(_commit_args(root, template))
    if out.code != 0:
        tally.add(recovery_failed=1)
        tally.fail(
            f"{label}: next commit exit {out.code}: {out.stdout.strip()[:300]} {out.stderr.strip()[:300]}"
        )
        return None
    if "Traceback" in out.stdout + out.stderr:
        tally.add(tracebacks=1)
    data = out.json()["data"]
    if data["receipt"]["status"] not in ("committed", "replayed"):
        tally.fail(f"{label}: receipt status {data['receipt']['status']}")
    if cursor_bytes(root) != new:
        tally.add(lost_updates=1)
        tally.fail(f"{label}: cursors after the next commit are not the new state")
    receipts = commit_receipts(root, DECISION)
    if len(receipts) != 1:
        tally.add(duplicate_receipts=1)
        tally.fail(f"{label}: {len(receipts)} commit receipts")
    if len(index_lines(root, DECISION, "commit")) != 1:
        tally.fail(f"{label}: {len(index_lines(root, DECISION, 'commit'))} commit index lines")
    if pending_exists(root, decision.assembly_ref):
        tally.fail(f"{label}: the pending companion is still there")
    verify = run(["-C", str(root), "verify", "--format", "json"])
    if verify.code != 0:
        tally.add(verify_failed=1)
        tally.fail(f"{label}: verify exit {verify.code}: {verify.stdout.strip()[:300]}")
    return data


def _kind(data: dict[str, Any]) -> str:
    if data["replayed"]:
        return "replayed"
    return "advanced" if data["receipt"]["status"] == "committed" else "finished"


def test_kill_at_each_named_fault_step(template, new_cursors, tmp_path: Path) -> None:
    tally = Tally()
    env = template.env()
    seen: dict[str, list[tuple[str, str]]] = {}
    runner = ForkRunner(tmp_path / "scratch")
    try:
        for step in STEPS:
            for repeat in range(STEP_REPEATS):
                root = copy_workspace(template, tmp_path / f"{step}-{repeat}")
                label = f"{step} #{repeat}"
                # the console script, killed by its own fault hook
                killed = run_script(
                    _commit_args(root, template), env={**env, "DCX_FAULT_POINT": step}
                )
                tally.add(runs=1, named_runs=1, kills=int(killed.code == -9))
                if killed.code != -9:
                    tally.fail(f"{label}: the fault step was not reached (exit {killed.code})")
                state = _check_after_kill(root, template, new_cursors, tally, label)
                tally.phases[_phase(root, template, state)] += 1

                def warm(args: list[str], root: Path = root):
                    return runner.run(args, env=env, cwd=root)

                # a crashed commit leaves a workspace that still verifies
                if warm(["-C", str(root), "verify", "--format", "json"]).code != 0:
                    tally.fail(f"{label}: verify failed right after the crash")
                data = _recover(warm, root, template, new_cursors, tally, label)
                seen.setdefault(step, []).append((state, _kind(data) if data else "failed"))
                remove_tree(root)
    finally:
        runner.close()
    record(
        "crash",
        "named_steps",
        {
            "steps": sorted(STEPS),
            "runs": tally.counts["runs"],
            "kills": tally.counts["kills"],
            "torn": tally.counts["torn"],
            "lost_updates": tally.counts["lost_updates"],
            "temp_files_left": tally.counts["temp_files_left"],
            "failures": len(tally.failures),
            "phases": dict(tally.phases),
        },
    )
    assert not tally.failures, tally.failures[:10]
    for step, (want_state, want_kind) in STEPS.items():
        assert seen[step] == [(want_state, want_kind)] * STEP_REPEATS, (step, seen[step])
    # every named step leaves the state its table row says, so each really is a distinct point
    assert {s for s, _ in STEPS.values()} == {"old", "new"}


class Pace:
    """How long a warm commit takes now: the median of the last runs that finished on their own.

    Seeded by the calibration and fed by every random run that completed, so the kill
    delays follow the load the run meets (other test workers starting and stopping),
    not only the load of the moment it was calibrated.
    """

    def __init__(self, seed: list[float]) -> None:
        self._recent = deque(seed, maxlen=9)
        self._lock = threading.Lock()

    def now(self) -> float:
        with self._lock:
            return statistics.median(self._recent)

    def finished(self, elapsed: float) -> None:
        with self._lock:
            self._recent.append(elapsed)


def _calibrate(runner: ForkRunner, template, base: Path, step: str | None = None) -> float:
    """Median time a warm commit takes (to the end, or to ``step``): the random kills spread over it."""
    return statistics.median(_durations(runner, template, base, step))


def _durations(runner: ForkRunner, template, base: Path, step: str | None = None) -> list[float]:
    """Five timed warm commits (after two that warm the page cache and the runner)."""
    durations = []
    env = template.env(DCX_FAULT_POINT=step) if step else template.env()
    for i in range(7):
        root = copy_workspace(template, base / f"calibrate-{i}")
        out = runner.run(_commit_args(root, template), env=env, cwd=root)
        assert out.code == (-9 if step else 0), out.stdout + out.stderr
        if i >= 2:  # the first runs warm the page cache and the runner: not typical
            durations.append(out.elapsed)
        remove_tree(root)
    return durations


def _calibrate_script(template, base: Path) -> float:
    durations = []
    for i in range(2):
        root = copy_workspace(template, base / f"calibrate-script-{i}")
        out = run_script(_commit_args(root, template), env=template.env())
        assert out.code == 0, out.stdout + out.stderr
        durations.append(out.elapsed)
        remove_tree(root)
    return min(durations)


def test_random_kills(template, new_cursors, tmp_path: Path) -> None:
    random_runs = max(0, RUNS - len(STEPS) * STEP_REPEATS)
    tally = Tally()
    env = template.env()
    rng = random.Random(knob("DCX_CRASH_SEED", 20261129))
    plans = []
    for i in range(random_runs):
        plans.append(
            {
                "i": i,
                "script": i % SCRIPT_SHARE == SCRIPT_SHARE - 1,
                "u": rng.random(),
                "tail": rng.random() < 0.5,
                "second": rng.random() < 0.25,
                "u2": rng.random(),
            }
        )

    runners = [ForkRunner(tmp_path / f"scratch-{w}") for w in range(WORKERS)]
    try:
        pace = Pace(_durations(runners[0], template, tmp_path))
        fork_time = pace.now()
        # the cursor write comes late in a commit (after every check): aim half the kills at the tail
        to_write = min(
            fork_time, _calibrate(runners[0], template, tmp_path, "commit.before_cursor_write")
        )
        tail_share = to_write / fork_time * 0.9
        script_time = _calibrate_script(template, tmp_path)
        startup = max(
            0.0, script_time - fork_time
        )  # the console script's imports, before any commit work
        delays: list[float] = []

        def one(runner: ForkRunner, plan: dict[str, Any]) -> None:
            label = f"random #{plan['i']}"
            root = copy_workspace(template, tmp_path / f"run-{plan['i']}")

            def warm(args: list[str], kill_after: float | None = None) -> Outcome:
                return runner.run(args, env=env, cwd=root, kill_after=kill_after)

            whole = pace.now()
            tail = whole * tail_share
            # a tail plan: uniform over [cursor write - 10%, end], the steps after the write are
            # brief; else uniform over the whole commit, and a little past it
            delay = tail + plan["u"] * (whole - tail) if plan["tail"] else plan["u"] * whole * 1.2
            if plan["script"]:
                # the console script imports first: shift the kill past its start-up
                delay += startup
                out = run_script(_commit_args(root, template), env=env, kill_after=delay)
            else:
                out = warm(_commit_args(root, template), kill_after=delay)
            with tally.lock:
                delays.append(delay)
            tally.add(
                runs=1,
                random_runs=1,
                script_runs=int(plan["script"]),
                kills=int(out.killed),
                first_kills=int(out.killed),
                finished_before_kill=int(not out.killed and out.code == 0),
            )
            if not out.killed and out.code == 0 and not plan["script"]:
                pace.finished(out.elapsed)
            if not out.killed and out.code != 0:
                tally.fail(
                    f"{label}: the commit failed on its own (exit {out.code}): {out.stdout[:300]}"
                )
            state = _check_after_kill(root, template, new_cursors, tally, label)
            with tally.lock:
                tally.phases[_phase(root, template, state) if out.killed else "completed"] += 1
            if plan["second"]:
                # crash the recovering commit too, then recover for real
                again = warm(_commit_args(root, template), kill_after=plan["u2"] * whole * 1.3)
                tally.add(second_crashes=1, kills=int(again.killed))
                _check_after_kill(root, template, new_cursors, tally, label + " (second crash)")
            _recover(lambda args: warm(args), root, template, new_cursors, tally, label)
            remove_tree(root)

        def worker(w: int) -> None:
            for plan in plans[w::WORKERS]:
                try:
                    one(runners[w], plan)
                except Exception as exc:  # a harness error is a failure too, never a silent skip
                    tally.fail(f"random #{plan['i']}: {type(exc).__name__}: {exc}")

        threads = [threading.Thread(target=worker, args=(w,)) for w in range(WORKERS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        for runner in runners:
            runner.close()

    counts = tally.counts
    record(
        "crash",
        "random",
        {
            "runs": counts["runs"],
            "kills": counts["kills"],
            "first_kills": counts["first_kills"],
            "script_runs": counts["script_runs"],
            "second_crashes": counts["second_crashes"],
            "finished_before_kill": counts["finished_before_kill"],
            "torn": counts["torn"],
            "unparsable": counts["unparsable"],
            "lost_updates": counts["lost_updates"],
            "duplicate_receipts": counts["duplicate_receipts"],
            "recovery_failed": counts["recovery_failed"],
            "verify_failed": counts["verify_failed"],
            "tracebacks": counts["tracebacks"],
            "temp_files_left": counts["temp_files_left"],
            "failures": len(tally.failures),
            "phases": dict(tally.phases),
            "warm_commit_seconds": round(fork_time, 4),
            "warm_commit_seconds_at_the_end": round(pace.now(), 4),
            "script_commit_seconds": round(script_time, 4),
            "warm_seconds_to_cursor_write": round(to_write, 4),
            "max_delay_seconds": round(max(delays, default=0.0), 4),
        },
    )
    assert not tally.failures, tally.failures[:10]
    assert counts["runs"] == random_runs
    if random_runs >= 50:
        # the random delays really do land inside the commit, across its phases
        assert counts["first_kills"] >= random_runs // 3, dict(tally.phases)
        assert (
            tally.phases["before_cursor_write"] > 0
            and tally.phases["cursor_written"]
            + tally.phases["receipt_written"]
            + tally.phases["indexed"]
            + tally.phases["finished"]
            > 0
        ), dict(tally.phases)
