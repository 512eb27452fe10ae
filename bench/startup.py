"""Start-up and whole-command time of dcx next to bare Python (SPEC §3.6 start-up budget).

Run on demand: `make bench` or `.venv/bin/python bench/startup.py [runs]`;
`bench/startup.py --instructions` counts instructions instead (valgrind).
Prints, per command, the median wall time, its ratio to `python -c pass`, and
the median CPU time (user + system of the child, what `/usr/bin/time -f %U+%S`
reports): on a shared, loaded machine wall time mostly measures the queue for
a core, CPU time and the ratios much less so. Goals: `dcx --version` <= 2.5x
`python -c pass`; `dcx status --format json` <= 60 ms; `log`, `show` (text
and json), `verify`, `sources` on the example (after one prepare) <= 70 ms;
a whole `dcx recall` of the example goal <= 100 ms and a whole `dcx prepare
--auto-rebase` <= 200 ms (``GOALS``). Each goal line also gives the same run's
ratios to `python -c pass` and to `dcx status --format json`.
`--instructions` (valgrind) is the load-independent measure.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TYPER = (
    "import sys\nfrom dcx.cli.app import build_app\nbuild_app()(args=sys.argv[1:], prog_name='dcx')"
)


def median_ms(argv: list[str], runs: int) -> tuple[float, float]:
    """Median wall and median CPU (user + system) milliseconds of ``runs`` runs of ``argv``."""
    wall, cpu = [], []
    for _ in range(runs):
        before = os.times()
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        wall.append((time.perf_counter() - start) * 1000)
        after = os.times()
        cpu.append(
            (
                after.children_user
                - before.children_user
                + after.children_system
                - before.children_system
            )
            * 1000
        )
    return statistics.median(wall), statistics.median(cpu)


def instructions(argv: list[str]) -> int | None:
    """Instructions executed (valgrind callgrind's ``I refs``): a load-independent measure."""
    proc = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    found = [line for line in proc.stderr.splitlines() if "I   refs" in line]
    return int(found[0].split()[-1].replace(",", "")) if found else None


def main() -> None:
    args = sys.argv[1:]
    counting = "--instructions" in args  # valgrind, ~10 s per row: one run each
    args = [a for a in args if a != "--instructions"]
    runs = int(args[0]) if args else 21
    dcx = shutil.which("dcx", path=str(Path(sys.executable).parent)) or "dcx"
    # as an installed dcx starts: from its bytecode. PYTHONDONTWRITEBYTECODE (set on some
    # machines) would leave every module without a .pyc that no earlier run wrote, and
    # each start would compile it again: tens of ms that are not dcx's.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "dcx")], check=True)
    with tempfile.TemporaryDirectory() as tmp:
        goal = Path(tmp) / "example"
        shutil.copytree(REPO / ".dcx-example", goal)
        # one prepared decision, so log, show and verify have packets to read
        subprocess.run([dcx, "-C", str(goal), "index"], capture_output=True, check=True)
        subprocess.run(
            [dcx, "-C", str(goal), "prepare", "--decision-id", "bench-d", "--auto-rebase"],
            capture_output=True,
            check=True,
        )
        rows = [
            ("python -c pass", [sys.executable, "-c", "pass"]),
            ("python -S -c pass", [sys.executable, "-S", "-c", "pass"]),
            ("dcx --version", [dcx, "--version"]),
            ("dcx status --format json", [dcx, "-C", str(goal), "status", "--format", "json"]),
            ("dcx status (text)", [dcx, "-C", str(goal), "status"]),
            ("dcx --help", [dcx, "--help"]),
            ("dcx log", [dcx, "-C", str(goal), "log"]),
            ("dcx log --format json", [dcx, "-C", str(goal), "log", "--format", "json"]),
            ("dcx show (evidence)", [dcx, "-C", str(goal), "show", "decision-evidence"]),
            (
                "dcx show --format json",
                [dcx, "-C", str(goal), "show", "decision-evidence", "--format", "json"],
            ),
            ("dcx verify", [dcx, "-C", str(goal), "verify"]),
            ("dcx sources", [dcx, "-C", str(goal), "sources"]),
            ("dcx recall", [dcx, "-C", str(goal), "recall", *RECALL]),
            (
                "dcx recall --format json",
                [dcx, "-C", str(goal), "recall", *RECALL, "--format", "json"],
            ),
            (
                "dcx prepare --auto-rebase",
                [dcx, "-C", str(goal), "prepare", "--decision-id", "bench-d", "--auto-rebase"],
            ),
            # the same command through the typer app: what the declarations' own parse saves
            ("typer: dcx log", [sys.executable, "-c", TYPER, "-C", str(goal), "log"]),
        ]
        if counting and shutil.which("valgrind"):
            counts = {name: instructions(argv) for name, argv in rows}
            status = counts["dcx status --format json"] or 1
            python = counts["python -c pass"] or 1
            print(
                "instructions (millions), and the ratios to `python -c pass` and `dcx status --format json`"
            )
            for name, count in counts.items():
                print(
                    f"  {name:<28} {(count or 0) / 1e6:8.0f} M   {(count or 0) / python:5.2f}x python"
                    f"   {(count or 0) / status:5.2f}x status"
                )
            return
        results = {name: median_ms(argv, runs) for name, argv in rows}
    base, base_cpu = results["python -c pass"]
    status_ms = results["dcx status --format json"][0]
    print(f"median of {runs} runs        wall          ratio   ÷ status    cpu (user+sys)  ratio")
    for name, (ms, cpu) in results.items():
        print(
            f"  {name:<28} {ms:7.1f} ms   {ms / base:5.2f}x   {ms / status_ms:5.2f}x"
            f"   {cpu:7.1f} ms   {cpu / max(base_cpu, 1):5.2f}x"
        )
    print()
    cpus = {name: cpu for name, (_, cpu) in results.items()}
    walls = {name: ms for name, (ms, _) in results.items()}
    version_ok = walls["dcx --version"] <= 2.5 * base
    status_ok = status_ms <= 60
    print(f"goal dcx --version <= 2.5x python: {'met' if version_ok else 'MISSED'}")
    print(
        f"goal dcx status --format json <= 60 ms: {'met' if status_ok else 'MISSED'}"
        f" ({status_ms:.0f} ms wall, {status_ms / base:.2f}x python)"
    )
    for name, limit in GOALS.items():
        ms = walls[name]
        print(
            f"goal {name} <= {limit} ms: {'met' if ms <= limit else 'MISSED'} ({ms:.0f} ms wall,"
            f" {cpus[name]:.0f} ms cpu, {ms / base:.2f}x python, {ms / status_ms:.2f}x status)"
        )


# SPEC §3.6 start-up budget: the read-only commands on the example after one prepare, a
# whole recall of the example goal (its search takes about 1 ms) and a whole prepare
GOALS = {
    "dcx log": 70,
    "dcx log --format json": 70,
    "dcx show (evidence)": 70,
    "dcx show --format json": 70,
    "dcx verify": 70,
    "dcx sources": 70,
    "dcx recall": 100,
    "dcx recall --format json": 100,
    "dcx prepare --auto-rebase": 200,
}
RECALL = ["--scope", "", "--query", "how do I roll back the catalog cache TTL"]
RECALL += ["--query-summary", "TTL rollback steps"]

if __name__ == "__main__":
    main()
