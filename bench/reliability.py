"""The reliability report: the figures the reliability and fuzz tests measured, ready to quote.

    .venv/bin/python bench/reliability.py            # figures of the last test run (`make test` in CI)
    .venv/bin/python bench/reliability.py --run      # run tests/reliability + tests/fuzz now, then print
    .venv/bin/python bench/reliability.py --run --crash-runs 2000 --race-rounds 10 --deep

The tests record what they counted in `.reliability/<section>.json` (or
$DCX_RELIABILITY_FIGURES) before they assert, so a failing run is reported
too. `--run` passes the size knobs on as DCX_CRASH_RUNS, DCX_RACE_ROUNDS and
DCX_HYPOTHESIS_PROFILE=deep (docs/reliability.md). `--json` prints the raw
figures instead. Exit status 1 when a goal of issue 8 is missed or a
section is missing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
FIGURES = Path(os.environ.get("DCX_RELIABILITY_FIGURES") or REPO / ".reliability")
SECTIONS = ("crash", "concurrency", "fuzz", "leaks", "hostile")
GRACE = 1.0


def load() -> dict[str, dict[str, Any]]:
    out = {}
    for name in SECTIONS:
        try:
            out[name] = json.loads((FIGURES / f"{name}.json").read_text())
        except (FileNotFoundError, ValueError):
            out[name] = {}
    return out


def _get(data: dict[str, Any], *path: str, default: Any = 0) -> Any:
    for key in path:
        if not isinstance(data, dict) or key not in data:
            return default
        data = data[key]
    return data


def report(fig: dict[str, dict[str, Any]]) -> list[tuple[str, bool]]:
    """Print the figures; return (goal, met) pairs."""
    goals: list[tuple[str, bool]] = []
    crash = fig["crash"]
    named, rnd = crash.get("named_steps", {}), crash.get("random", {})
    runs = _get(named, "runs") + _get(rnd, "runs")
    kills = _get(named, "kills") + _get(rnd, "kills")
    torn = _get(named, "torn") + _get(rnd, "torn") + _get(rnd, "unparsable")
    lost = _get(named, "lost_updates") + _get(rnd, "lost_updates")
    print("crash injection on `dcx commit` (SIGKILL)")
    print(
        f"  runs {runs} ({_get(named, 'runs')} at {len(_get(named, 'steps', default=[]))} named fault steps, "
        f"{_get(rnd, 'runs')} at random times, {_get(rnd, 'script_runs')} of them the console script)"
    )
    print(
        f"  kills {kills} (incl. {_get(rnd, 'second_crashes')} second crashes of the recovering commit; "
        f"{_get(rnd, 'finished_before_kill')} commits finished before their kill)"
    )
    phases = {**_get(named, "phases", default={})}
    for key, value in _get(rnd, "phases", default={}).items():
        phases[key] = phases.get(key, 0) + value
    print(f"  where the kills landed: {', '.join(f'{k} {v}' for k, v in sorted(phases.items()))}")
    print(
        f"  torn or unparsable cursor files {torn} · lost updates {lost} · duplicate receipts "
        f"{_get(rnd, 'duplicate_receipts')} · failed recoveries {_get(rnd, 'recovery_failed')} · "
        f"failed verifies {_get(rnd, 'verify_failed')}"
    )
    print(
        f"  temp files left by kills {_get(named, 'temp_files_left') + _get(rnd, 'temp_files_left')} "
        "(all .*.tmp, skipped by readers; none broke the next run)"
    )
    goals += [
        ("crash: >= 200 runs", runs >= 200),
        ("crash: 0 torn or lost cursor files", runs > 0 and torn == 0),
        ("crash: 0 lost updates", runs > 0 and lost == 0),
        (
            "crash: every run recovered",
            runs > 0 and _get(named, "failures") + _get(rnd, "failures") == 0,
        ),
    ]

    rnamed, rrand = crash.get("review_named_steps", {}), crash.get("review_random", {})
    rgate = fig["concurrency"].get("same_gate_review", {})
    print("\ncrash injection and races on `dcx review` (issue 14)")
    print(
        f"  runs {_get(rnamed, 'runs') + _get(rrand, 'runs')} ({_get(rnamed, 'runs')} at "
        f"{len(_get(rnamed, 'steps', default=[]))} named fault steps, {_get(rrand, 'runs')} at random times) · "
        f"kills {_get(rnamed, 'kills') + _get(rrand, 'kills')} · cursor file after the kill: "
        f"{', '.join(f'{k} {v}' for k, v in sorted(_get(rrand, 'phases', default={}).items()))} · "
        f"failures {_get(rnamed, 'failures') + _get(rrand, 'failures')}"
    )
    print(
        f"  one gate, {_get(rgate, 'processes')} processes: settled {_get(rgate, 'settled')}, replayed "
        f"{_get(rgate, 'replayed')}, lock busy {_get(rgate, 'lock_busy')}, other {_get(rgate, 'other')}, hung "
        f"{_get(rgate, 'hung')}, slowest {_get(rgate, 'max_seconds')} s"
    )
    goals += [
        (
            "review: every killed review recovered",
            bool(rnamed) and _get(rnamed, "failures") + _get(rrand, "failures") == 0,
        ),
        (
            "review: exactly one of concurrent reviews of one gate settles",
            bool(rgate)
            and _get(rgate, "settled") == 1
            and _get(rgate, "other") + _get(rgate, "hung") == 0,
        ),
    ]

    conc = fig["concurrency"]
    same, two = conc.get("same_assembly", {}), conc.get("two_decisions", {})
    print("\nconcurrent commits")
    print(
        f"  one assembly, {_get(same, 'processes')} processes: advanced {_get(same, 'advanced')}, replayed "
        f"{_get(same, 'replayed')}, lock busy {_get(same, 'lock_busy')}, other {_get(same, 'other')}, "
        f"hung {_get(same, 'hung')}, lost updates {_get(same, 'lost_updates')}, slowest {_get(same, 'max_seconds')} s"
    )
    print(
        f"  two decisions, same sources, {_get(two, 'rounds')} rounds x {_get(two, 'processes') // max(1, _get(two, 'rounds'))} "
        f"processes: advanced {_get(two, 'advanced')}, replayed {_get(two, 'replayed')}, cursor_moved "
        f"{_get(two, 'cursor_moved')}, lock busy {_get(two, 'lock_busy')}, other {_get(two, 'other')}, hung "
        f"{_get(two, 'hung')}, lost updates {_get(two, 'lost_updates')}, slowest {_get(two, 'max_seconds')} s"
    )
    for part, title in (
        ("writeback_appends", "events.jsonl"),
        ("index_appends", "decisions/<id>.jsonl"),
    ):
        row = conc.get(part, {})
        print(
            f"  {title}: {_get(row, 'processes')} processes, lines added {_get(row, 'lines_added')}/"
            f"{_get(row, 'expected_lines')}, broken {_get(row, 'broken_lines')}, lost {_get(row, 'lost_lines')}, "
            f"duplicates {_get(row, 'duplicates')}"
        )
    lost_conc = (
        _get(same, "lost_updates")
        + _get(two, "lost_updates")
        + sum(
            _get(conc, p, "lost_lines")
            + _get(conc, p, "duplicates")
            + _get(conc, p, "broken_lines")
            for p in ("writeback_appends", "index_appends")
        )
    )
    winners_ok = (
        bool(same)
        and _get(same, "advanced") == 1
        and _get(two, "advanced") == _get(two, "rounds") > 0
    )
    goals += [
        ("concurrency: exactly one commit advances each cursor", winners_ok),
        ("concurrency: 0 lost updates or lines", bool(conc) and lost_conc == 0),
        (
            "concurrency: no deadlock (every process ended)",
            bool(conc) and _get(same, "hung") + _get(two, "hung") == 0,
        ),
        (
            "concurrency: only replayed / cursor_moved / lock busy",
            bool(conc) and _get(same, "other") + _get(two, "other") == 0,
        ),
    ]

    fuzz = fig["fuzz"]
    cases = {name: _get(fuzz, name, "cases") for name in ("inputs", "advisory", "cli")}
    tracebacks = sum(_get(fuzz, name, "tracebacks") for name in cases)
    print("\nfuzzing")
    print(
        f"  cases {sum(cases.values())}: inputs (proposal, outcome, rebase, events, profile, registry) "
        f"{cases['inputs']}, advisory responses {cases['advisory']}, CLI (propose, outcome, prepare --rebase) "
        f"{cases['cli']}"
    )
    print(
        f"  tracebacks {tracebacks} · partial writes {_get(fuzz, 'cli', 'partial_writes')} · refusals without a "
        f"field {_get(fuzz, 'cli', 'unnamed_fields')}"
    )
    goals += [
        ("fuzz: >= 10,000 cases", sum(cases.values()) >= 10_000),
        (
            "fuzz: 0 tracebacks, 0 partial files",
            all(cases.values()) and tracebacks == 0 and _get(fuzz, "cli", "partial_writes") == 0,
        ),
    ]

    leaks = fig["leaks"].get("cycle", {})
    found = _get(leaks, "canaries_in_public_files") + _get(leaks, "canaries_in_outputs")
    print("\nleak canaries through the whole cycle")
    print(
        f"  canaries planted {_get(leaks, 'canaries')} · public files swept {_get(leaks, 'public_files')} · "
        f"JSON outputs swept {_get(leaks, 'json_outputs')} · canaries found {found} · audit findings "
        f"{_get(leaks, 'audit_findings')}"
    )
    print(
        f"  (present where they belong: {', '.join(_get(leaks, 'transient_outputs_carrying_canaries', default=[]))})"
    )
    goals.append(("leaks: 0 canaries in public files or outputs", bool(leaks) and found == 0))

    hostile = fig["hostile"]
    rows = dict(_get(hostile, "sources", "figures", default={}))
    for part in ("sparse_hashing", "extension hang.py", "extension flood.py"):
        if part in hostile:
            rows[part] = hostile[part]
    print("\nhostile sources and providers (deadline + 1 s allowed)")
    worst = 0.0
    for name, row in sorted(rows.items()):
        worst = max(worst, row.get("overrun_s", 0.0))
        outcome = row.get("reason") or ", ".join(row.get("failed", [])) or row.get("status") or "ok"
        print(
            f"  {name:<44} {row.get('elapsed_s', 0):6.3f} s of {row.get('deadline_s', 0):.1f} s   {outcome}"
        )
    within = sum(1 for row in rows.values() if row.get("overrun_s", 0.0) <= GRACE)
    print(f"  stopped within deadline + 1 s: {within}/{len(rows)} · max overrun {worst:.3f} s")
    prep = hostile.get("prepare", {})
    if prep:
        print(
            f"  one prepare over all {prep.get('sources')} sources: {prep.get('elapsed_s')} s, ready "
            f"{', '.join(prep.get('ready', []))}"
        )
    goals.append(
        ("hostile: every one stopped within deadline + 1 s", bool(rows) and within == len(rows))
    )
    return goals


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--run", action="store_true", help="run tests/reliability and tests/fuzz first"
    )
    parser.add_argument("--crash-runs", type=int, help="DCX_CRASH_RUNS (default 200)")
    parser.add_argument("--race-rounds", type=int, help="DCX_RACE_ROUNDS (default 2)")
    parser.add_argument("--deep", action="store_true", help="DCX_HYPOTHESIS_PROFILE=deep")
    parser.add_argument("--json", action="store_true", help="print the raw figures")
    args = parser.parse_args()
    if args.run:
        env = dict(os.environ)
        if args.crash_runs:
            env["DCX_CRASH_RUNS"] = str(args.crash_runs)
        if args.race_rounds:
            env["DCX_RACE_ROUNDS"] = str(args.race_rounds)
        if args.deep:
            env["DCX_HYPOTHESIS_PROFILE"] = "deep"
        for name in SECTIONS:
            (FIGURES / f"{name}.json").unlink(missing_ok=True)
        subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "tests/reliability", "tests/fuzz"],
            cwd=REPO,
            env=env,
            check=False,
        )
        print()
    figures = load()
    if args.json:
        print(json.dumps(figures, indent=2, sort_keys=True))
        return 0
    missing = [name for name, data in figures.items() if not data]
    if missing:
        print(
            f"no figures for: {', '.join(missing)} (run `make test`, or this script with --run)\n"
        )
    stamps = sorted(
        row.get("recorded_at", "")
        for data in figures.values()
        for row in data.values()
        if isinstance(row, dict)
    )
    if stamps:
        print(f"figures recorded {stamps[0]} .. {stamps[-1]} (in {FIGURES})\n")
    goals = report(figures)
    print("\ngoals (issue 8)")
    for goal, met in goals:
        print(f"  {'met   ' if met else 'MISSED'} {goal}")
    return 0 if all(met for _, met in goals) and not missing else 1


if __name__ == "__main__":
    sys.exit(main())
