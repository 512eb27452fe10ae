#!/usr/bin/env python3
"""Benchmark: what signed statements cost (SPEC §18).

    .venv/bin/python bench/signatures.py [--packets 2000] [--runs 5]

1. `dcx verify` of ``--packets`` packets with their signed statements against
   `dcx verify` of the very same packets without any (statements.jsonl and
   signers/ removed) — the installed console script in a subprocess, median of
   ``--runs``. "cold": the private cache of verified statements removed before
   each run (every signature checked); "warm": the cache a previous verify
   left. Goal: cold ≤ 1.3x the unsigned verify.
   Two workloads: real decisions (the example's whole story, run one decision
   after another until there are ``--packets`` packets: 12 packets, one event
   and 6 statements a decision), and a synthetic worst case (tiny evidence
   packets, 6 statements for every 10).
2. A writing command's extra cost: the real `dcx writeback` op in a fresh
   process, timed with its statement and with the statement left out (the
   bench replaces the recorder's close by a no-op), median of at least 7
   processes each, interleaved: the difference is the crypto library's import,
   the key, RFC 8785, Ed25519, the locked append with its fsync, the cache
   line. And the steady state (library loaded), median of 200 in one process.
   Goal: ≤ 5 ms.

Figures are same-run ratios; the machine is shared, so read them as such.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
DCX = str(Path(sys.executable).with_name("dcx"))
NOW = "2026-11-29T18:00:00Z"
STORY = (("prepare", 5), ("propose", 1), ("outcome", 1), ("writeback", 1), ("commit", 1), ("feedback", 1))  # fmt: skip


def build_synthetic(root: Path, packets: int) -> None:
    """Tiny evidence packets, 6 statements for every 10: the worst case for the ratio."""
    from dcx.core.workspace import Workspace
    from dcx.ops._common import packet_context
    from dcx.ops.init import init
    from dcx.packets import evidence
    from dcx.state import decisions, statements
    from dcx.state.store import Store

    root.mkdir(parents=True)
    init(root=root, goal_id="bench-signatures", agent_id="agent-a")
    ws = Workspace(root)
    store = Store(ws)
    per = sum(n for _, n in STORY)
    made = 0
    for d in range(packets // per):
        decision = f"d{d:04d}"
        for command, count in STORY:
            with statements.recording(command) as rec:
                for _ in range(count):
                    packet = store.put(
                        evidence.SPEC,
                        packet_context(ws, decision, "agent-a"),
                        {
                            "observed_at": f"2026-11-{1 + made % 28:02d}T18:00:{made % 60:02d}Z",
                            "visibility": "public_safe",
                            "changed_facts": [],
                            "recalled_claims": [],
                            "stale_or_rejected_claims": [],
                            "conflicts": [],
                            "provider_health": [],
                            "source_revisions": [],
                        },
                    )
                    decisions.append(
                        ws, decision, "evidence", packet["packet_ref"], packet["observed_at"]
                    )
                    made += 1
            statements.append(ws, rec, "agent-a", NOW)


def build_real(root: Path, packets: int) -> None:
    """Real decisions: the example goal's whole story (tests.support.cycle.run_cycle: prepare,
    propose, outcome, writeback, commit, feedback), one decision after another, through the typer
    app in this process, until ``packets`` packets are stored: 6 statements for every 12 packets
    and one event."""
    from tests.support.cycle import run_cycle
    from tests.support.workspace import copy_example

    copy_example(root)
    home = root.parent / "home"
    home.mkdir(exist_ok=True)
    index = 0
    while sum(1 for _ in (root / ".decision-context" / "packets").glob("*/*.json")) < packets:
        run_cycle(root, f"d-{index:04d}", edit_authority=False, env={"HOME": str(home)})
        index += 1


def _time(cmd: list[str], env: dict[str, str], before=None) -> tuple[float, float]:
    """(wall, CPU) seconds of the command: CPU (user + system of the process and its threads)
    is what a loaded machine inflates least."""
    import resource

    if before:
        before()
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    took = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{cmd[2:]} failed: {proc.stdout[-500:]} {proc.stderr[-500:]}")
    return took, (after.ru_utime - used.ru_utime) + (after.ru_stime - used.ru_stime)


WRITEBACK = """
import sys, time
from pathlib import Path
import dcx.cli.app  # what the console script has loaded before it runs the op
from dcx.core.clock import FixedClock
from dcx.core.workspace import Workspace
from dcx.ops.writeback import writeback
from dcx.state import statements
if sys.argv[2] == "unsigned":
    statements._close = lambda rec, kwargs: None  # the same op, its statement left out
ws = Workspace(Path(sys.argv[1]))
start, cpu = time.perf_counter(), time.process_time()
writeback(ws=ws, decision_id="d0000", kind="todo_add", summary=sys.argv[3], artifacts=[sys.argv[4]],
          agent_id="agent-a", clock=FixedClock("2026-11-29T18:00:00Z"), wait=5.0)
print(time.perf_counter() - start, time.process_time() - cpu)
"""


def write_cost(root: Path, runs: int, env: dict[str, str]) -> dict[str, tuple[float, float]]:
    """{"signed"|"unsigned": (median wall, median CPU)} of the writeback op in a fresh process."""
    index = (root / ".decision-context" / "decisions" / "d0000.jsonl").read_text()
    evidence = json.loads(index.splitlines()[0])["ref"]
    rows: dict[str, list[tuple[float, float]]] = {"signed": [], "unsigned": []}
    for i in range(runs):
        for mode in ("unsigned", "signed"):
            out = subprocess.run(
                [sys.executable, "-c", WRITEBACK, str(root), mode, f"todo {mode} {i}", evidence],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            wall, cpu = out.stdout.split()
            rows[mode].append((float(wall), float(cpu)))
    return {
        mode: (statistics.median(r[0] for r in runs_), statistics.median(r[1] for r in runs_))
        for mode, runs_ in rows.items()
    }


def steady_cost(root: Path) -> float:
    """One statement signed and appended with the library already loaded: median of 200."""
    from dcx.core.workspace import Workspace
    from dcx.state import statements

    ws = Workspace(root)
    warm = []
    for i in range(200):
        rec = statements.Recorder("writeback")
        rec.products = {f"dcx-event-{i:032x}"}
        rec.materials = {f"decision-evidence-{k:032x}" for k in range(3)}
        start = time.perf_counter()
        statements.append(ws, rec, "agent-a", NOW)
        warm.append(time.perf_counter() - start)
    return statistics.median(warm)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--packets", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith("DCX_")}
    env["DCX_NOW"] = NOW
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode once, not at every start
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "dcx")], check=True)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPU(s)")
    base = Path(tempfile.mkdtemp(prefix="dcx-bench-signatures-"))
    try:
        for name, build in (
            ("real packets", build_real),
            ("synthetic, worst case", build_synthetic),
        ):
            signed = base / name.split(",")[0].replace(" ", "-")
            verify_pair(name, build, signed, args, env)
        signed = base / "synthetic"
        cost = write_cost(signed, max(args.runs, 9), env)
        steady = steady_cost(signed)
        print("a writing command's extra cost (the writeback op in a fresh process, medians):")
        for i, what in enumerate(("wall", "CPU")):
            with_it, without = cost["signed"][i], cost["unsigned"][i]
            print(
                f"  {what:4s} with its statement {with_it * 1000:6.1f} ms, without "
                f"{without * 1000:6.1f} ms: extra {(with_it - without) * 1000:5.1f} ms"
            )
        print("  (the crypto library's import included: it loads a 14 MB extension)")
        print(f"  steady state, library loaded: {steady * 1000:5.2f} ms a statement (wall)")
    finally:
        shutil.rmtree(base, ignore_errors=True)


def verify_pair(name: str, build, signed: Path, args, env: dict[str, str]) -> None:
    t0 = time.perf_counter()
    build(signed, args.packets)
    plain = signed.with_name(signed.name + "-plain")
    shutil.copytree(signed, plain)
    (plain / ".decision-context" / "statements.jsonl").unlink()
    shutil.rmtree(plain / ".decision-context" / "signers")
    cache = signed / ".decision-context" / "private" / "cache" / "statements-verified.txt"
    lines = len((signed / ".decision-context" / "statements.jsonl").read_text().splitlines())
    count = sum(1 for _ in (signed / ".decision-context" / "packets").glob("*/*.json"))
    print(
        f"{name}: {count} packets, {lines} statements (built in {time.perf_counter() - t0:.1f} s)"
    )

    def verify(root: Path) -> list[str]:
        return [DCX, "-C", str(root), "verify", "--format", "json"]

    def drop_cache() -> None:
        cache.unlink(missing_ok=True)

    rows: dict[str, list[tuple[float, float]]] = {
        "unsigned": [],
        "signed, cold": [],
        "signed, warm": [],
    }
    for _ in range(args.runs):  # interleaved, so load drifts hit all three alike
        rows["unsigned"].append(_time(verify(plain), env))
        rows["signed, cold"].append(_time(verify(signed), env, drop_cache))
        rows["signed, warm"].append(_time(verify(signed), env))
    data = json.loads(
        subprocess.run(verify(signed), env=env, capture_output=True, text=True).stdout
    )["data"]
    assert data["problems"] == [], data["problems"][:3]
    sig = data["signatures"]
    print(
        f"  verify finds {sig['signed']} signed, {sig['unsigned']} unsigned, {sig['failed']} failed"
    )
    base_wall = statistics.median(t[0] for t in rows["unsigned"])
    base_cpu = statistics.median(t[1] for t in rows["unsigned"])
    print(f"  dcx verify (median of {args.runs}; wall, and CPU of the process and its threads):")
    for label, times in rows.items():
        wall = statistics.median(t[0] for t in times)
        cpu = statistics.median(t[1] for t in times)
        print(
            f"    {label:13s} wall {wall * 1000:6.0f} ms {wall / base_wall:4.2f}x   "
            f"CPU {cpu * 1000:6.0f} ms {cpu / base_cpu:4.2f}x"
        )


if __name__ == "__main__":
    main()
