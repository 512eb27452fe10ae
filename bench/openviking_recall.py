"""Benchmark: `ov` processes and wall time of one `dcx recall` through OpenViking, with the
preflight checked afresh against remembered (SPEC §6.4 v4).

    .venv/bin/python bench/openviking_recall.py [--recalls 10]

Each recall is a real `python -m dcx recall` process against the recorded-reply fake
(`fixtures/openviking-0.5.2/fake_ov.py`) answering `version`, `status -o json` and
`find` with the recorded 0.5.2 bytes. Each fake process sleeps so that it costs what
the real `ov` cost when the fixtures were recorded (`meta.json` `wall_ms`: 38 ms for
`version`, 176 ms for `status -o json`, 70 ms for the find) — the sleep is the recorded
time minus this fake's own bare start-up, measured here first.

- **checked afresh**: `private/openviking/ready.json` is removed before each recall, so
  the recall runs the preflight as every recall did before the checks were remembered;
- **remembered**: the file is left, so a recall within its 60 s TTL starts only `find`.

The two kinds alternate, so the machine's load falls on both alike; the script prints
the `ov` processes per recall (counted from the fake's call log), p50 and p95 wall
time, and the ratio of the p50s.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FAKE = REPO / "fixtures" / "openviking-0.5.2" / "fake_ov.py"
CASES = FAKE.parent / "cases"
RECORDED = {
    "version": "version_subcommand",
    "status": "status_json",
    "find": "find_L2_read_content",
}
SCOPE = "viking://resources/catalog-ttl"


def _recorded_ms(case: str) -> float:
    return float(json.loads((CASES / case / "meta.json").read_text())["wall_ms"])


def _bare_start_ms(scenario: Path, env: dict[str, str]) -> float:
    times = []
    for _ in range(7):
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, str(FAKE), "--scenario", str(scenario), "version"],
            env=env,
            capture_output=True,
            check=True,
        )
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def _setup(tmp: Path) -> tuple[Path, Path, Path, dict[str, str]]:
    home = tmp / "home"
    (home / ".openviking").mkdir(parents=True)
    (home / ".openviking" / "ovcli.settings.conf").write_text('{"language": "en"}')
    env = {k: v for k, v in os.environ.items() if not k.startswith("DCX_")}
    env.update(HOME=str(home))  # no DCX_NOW: the receipts' latency_ms is measured
    log = tmp / "calls.jsonl"
    scenario = tmp / "scenario.json"
    scenario.write_text(json.dumps({"log": str(log), "cases": RECORDED}))
    bare = _bare_start_ms(scenario, env)
    sleep = {cmd: max(0.0, _recorded_ms(case) - bare) / 1000 for cmd, case in RECORDED.items()}
    scenario.write_text(json.dumps({"log": str(log), "cases": RECORDED, "sleep": sleep}))
    log.unlink(missing_ok=True)
    binary = tmp / "ov"
    binary.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" --scenario "{scenario}" "$@"\n')
    binary.chmod(0o755)
    root = tmp / "goal"
    root.mkdir()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "dcx",
            "-C",
            str(root),
            "init",
            "--goal-id",
            "bench",
            "--agent-id",
            "a",
        ],
        env=env,
        check=True,
        capture_output=True,
    )
    (root / ".decision-context" / "profile.toml").write_text(
        'schema_version = "decision_context_profile_v0"\ngoal_id = "bench"\nenabled = true\n'
        'enabled_agents = ["a"]\n\n[context_provider]\nprovider = "openviking"\n\n'
        f'[context_provider.config]\nbinary = "{binary}"\nurl = "http://127.0.0.1:1933"\n'
        "result_levels = [2]\n"
    )
    print(f"fake ov bare start-up {bare:.0f} ms; sleeps {json.dumps(sleep)}")
    return root, log, binary, env


def _recall(root: Path, env: dict[str, str]) -> tuple[float, int]:
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "dcx", "-C", str(root), "recall", "--agent-id", "a", "--scope", SCOPE,
         "--query", "how do I roll back the cache TTL change", "--query-summary", "TTL rollback",
         "--format", "json"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )  # fmt: skip
    elapsed = (time.perf_counter() - started) * 1000
    data = json.loads(proc.stdout)["data"]
    assert data["status"] == "completed", data
    return elapsed, data["retrieval"]["telemetry"]["latency_ms"]


def _p(values: list[float], pct: int) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, -(-pct * len(ordered) // 100) - 1))]


def _lines(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recalls", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="dcx-ov-bench-") as tmp_name:
        root, log, _, env = _setup(Path(tmp_name))
        ready = root / ".decision-context" / "private" / "openviking" / "ready.json"
        _recall(root, env)  # warm the interpreter's file cache; leaves ready.json
        runs: dict[str, list[float]] = {"afresh": [], "remembered": []}
        latency: dict[str, list[float]] = {"afresh": [], "remembered": []}
        processes: dict[str, list[int]] = {"afresh": [], "remembered": []}
        for _ in range(args.recalls):
            for kind in ("afresh", "remembered"):
                if kind == "afresh":
                    ready.unlink(missing_ok=True)
                before = _lines(log)
                wall, provider = _recall(root, env)
                runs[kind].append(wall)
                latency[kind].append(provider)
                processes[kind].append(_lines(log) - before)
        for kind, times in runs.items():
            print(
                f"{kind:10s} ov processes per recall {sorted(set(processes[kind]))} · provider "
                f"latency p50/p95 {_p(latency[kind], 50):.0f}/{_p(latency[kind], 95):.0f} ms · "
                f"wall p50/p95 {_p(times, 50):.0f}/{_p(times, 95):.0f} ms"
            )
        for name, values in (("provider latency", latency), ("wall", runs)):
            ratio = _p(values["remembered"], 50) / max(1e-9, _p(values["afresh"], 50))
            print(f"remembered / afresh, {name} p50: {ratio:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
