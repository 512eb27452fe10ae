"""Scan speed of the local-file source against `git status` on the same tree (issue 3).

Run on demand: `.venv/bin/python bench/scan.py [--sizes 10000,100000] [--file-bytes 3000]`.
For each size it builds a synthetic tree in a temp dir (100 files per
directory, a few KB each), commits it into a git repo, and prints in one run:

- cold scan: no stat cache; every file read and hashed (median of 3,
  interleaved with `b3sum` over the same files when it is installed);
- no-change rescan after the cursor was committed;
- rescan after 100 edits;
- the whole no-change `dcx scan` command (interpreter start-up, activation,
  the scan, the stored receipt), median of 3;
- `git status --porcelain` on the same tree (median of 5 after a warm-up),
  with git's defaults: `core.preloadIndex` on (lstat over up to 20
  threads), no untracked cache, no fsmonitor, the index refreshed by the
  warm-up — it stats every file and reads every directory, as dcx does;

with the ratios. The source has include/exclude globs, as real registries do
(`include = ["**/*.md"]`, `exclude = ["**/drafts/**"]`; `--no-globs` for a bare
folder): their answers are kept with the stat cache, so a warm rescan matches
no path again. Goals: no-change rescan of 100k files <= 1.5x `git status`;
the whole no-change `dcx scan` of 100k files <= 2x `git status` (issue 11;
about 2.0x wall and CPU on 2 shared cores, docs/performance.md); cold
hashing <= 2x `b3sum` when b3sum is installed (else its MB/s is shown).
The machine is shared and noisy: compare ratios, not absolute times; for the
whole command, `farm-bench --vs 'git status --porcelain' -- dcx scan ...`
pairs the two run by run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

PER_DIR = 100
EDITS = 100


def build_tree(root: Path, count: int, size: int) -> int:
    filler = ("lorem ipsum dolor sit amet, consectetur adipiscing elit " * (size // 56 + 1))[:size]
    total = 0
    for i in range(count):
        directory = root / f"d{i // PER_DIR // 100:03d}" / f"s{(i // PER_DIR) % 100:02d}"
        if i % PER_DIR == 0:
            directory.mkdir(parents=True, exist_ok=True)
        data = f"document {i}\n{filler}\n".encode()
        (directory / f"f{i:06d}.md").write_bytes(data)
        total += len(data)
    return total


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=bench@example.invalid", "-c", "user.name=bench", *args],
        cwd=root,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def cpu_seconds() -> float:
    """User + system CPU of this process and its reaped children (forked workers, git)."""
    own, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def timed(fn, runs: int = 1, cpu: list[float] | None = None) -> float:
    samples = []
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), cpu_seconds()
        fn()
        samples.append(time.perf_counter() - start)
        if cpu is not None:
            cpu.append(cpu_seconds() - start_cpu)
    return statistics.median(samples)


GLOBS = ', include = ["**/*.md"], exclude = ["**/drafts/**"]'


def registry_locator(goal: Path) -> dict:
    from tests.support.sources import plane

    return plane(goal)[2].source("source:docs").locator


def run_size(count: int, size: int, base: Path, globs: bool = True) -> dict[str, float]:
    from dcx.core.clock import SystemClock
    from dcx.core.trees import store_tree
    from dcx.core.walk import walk
    from dcx.ops.init import init
    from dcx.sources.plane import scan_source
    from dcx.state.cursors import write_cursors
    from tests.support.sources import binding_block, configure, plane, source_block

    goal = base / f"goal-{count}"
    goal.mkdir()
    init(
        root=goal, goal_id="goal-test", agent_id="agent-a"
    )  # the id tests.support.sources.configure uses
    locator = '{ path = "docs"' + (GLOBS if globs else "") + " }"
    configure(
        goal, binding_block() + source_block("source:docs", locator, extra="max_changes = 10000\n")
    )
    started = time.perf_counter()
    total_bytes = build_tree(goal / "docs", count, size)
    build_s = time.perf_counter() - started
    (goal / ".gitignore").write_text(".decision-context/\n")
    git(goal, "init", "-q")
    git(goal, "add", "-A")
    git(goal, "commit", "-q", "-m", "tree")
    os.sync()
    time.sleep(1.1)  # let the racy-timestamp window pass for git and for dcx alike
    clock = SystemClock()

    def scan(committed: dict[str, str]):
        _, _, registry, providers = plane(goal)
        source = registry.source("source:docs")
        return scan_source(
            providers, source, cursor_before=committed.get("source:docs"), clock=clock
        )

    results: dict[str, float] = {"bytes": total_bytes, "build": build_s}
    first = None

    def cold() -> None:
        nonlocal first
        shutil.rmtree(goal / ".decision-context" / "private" / "cache", ignore_errors=True)
        first = scan({})

    b3sum = shutil.which("b3sum")
    files = [str(p) for p in sorted((goal / "docs").rglob("*.md"))]

    def b3() -> None:
        for start in range(0, len(files), 2000):
            subprocess.run(
                [b3sum, *files[start : start + 2000]], stdout=subprocess.DEVNULL, check=True
            )

    # interleaved with b3sum (when installed): both read the same, equally warm page cache
    cold_runs, b3_runs = [], []
    for _ in range(3):
        if b3sum:
            b3_runs.append(timed(b3))
        cold_runs.append(timed(cold))
    results["cold"] = statistics.median(cold_runs)
    if b3sum:
        results["b3sum"] = statistics.median(b3_runs)
    assert first is not None and first.status == "completed", first
    # Commit the whole tree, as a baseline adoption would: one scan reports at
    # most max_changes (10000) items, so its own cursor covers only those.
    ws = plane(goal)[0]
    walked = walk(ws, "source:docs", registry_locator(goal), max_scan_bytes=1 << 30)
    committed = {"source:docs": store_tree(ws, walked.revisions())}
    write_cursors(ws, committed)
    scan(committed)  # settles racily-clean cache entries, like git's first status
    os.sync()  # no writeback of the new tree competing with either side
    subprocess.run(
        ["git", "status", "--porcelain"], cwd=goal, stdout=subprocess.DEVNULL, check=True
    )
    git_runs, dcx_runs, git_cpu, dcx_cpu = [], [], [], []
    outcome = []
    for _ in range(5):  # interleaved, so both sides see the same machine
        git_runs.append(
            timed(
                lambda: subprocess.run(
                    ["git", "status", "--porcelain"],
                    cwd=goal,
                    stdout=subprocess.DEVNULL,
                    check=True,
                ),
                cpu=git_cpu,
            )
        )
        dcx_runs.append(timed(lambda: outcome.append(scan(committed)), cpu=dcx_cpu))
    results["git"] = statistics.median(git_runs)
    results["nochange"] = statistics.median(dcx_runs)
    results["git_cpu"] = statistics.median(git_cpu)
    results["nochange_cpu"] = statistics.median(dcx_cpu)
    cli: list[float] = []
    cli_git: list[float] = []
    cli_cpu: list[float] = []
    cli_git_cpu: list[float] = []
    dcx_exe = str(Path(sys.executable).parent / "dcx")
    # as an installed dcx runs: with its bytecode (PYTHONDONTWRITEBYTECODE would recompile every module)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    argv = [dcx_exe, "-C", str(goal), "scan", "--agent-id", "agent-a", "--format", "json"]
    warm_up = subprocess.run(  # warm-up: bytecode, page cache; and what the timed runs see
        argv, capture_output=True, text=True, check=True, env=env
    )
    seen = [r["status"] for r in json.loads(warm_up.stdout)["data"]["receipts"]]
    assert seen == ["no_change"], seen
    for _ in range(5):  # interleaved with git status again
        cli_git.append(
            timed(
                lambda: subprocess.run(
                    ["git", "status", "--porcelain"],
                    cwd=goal,
                    stdout=subprocess.DEVNULL,
                    check=True,
                ),
                cpu=cli_git_cpu,
            )
        )
        cli.append(
            timed(
                lambda: subprocess.run(argv, stdout=subprocess.DEVNULL, check=True, env=env),
                cpu=cli_cpu,
            )
        )
    results["cli"] = statistics.median(cli)
    results["cli_git"] = statistics.median(cli_git)
    results["cli_cpu"] = statistics.median(cli_cpu)
    results["cli_git_cpu"] = statistics.median(cli_git_cpu)
    assert outcome[-1].status == "no_change", outcome[-1].status
    for i in range(0, count, max(1, count // EDITS))[:EDITS]:
        path = (
            goal
            / "docs"
            / f"d{i // PER_DIR // 100:03d}"
            / f"s{(i // PER_DIR) % 100:02d}"
            / f"f{i:06d}.md"
        )
        path.write_bytes(path.read_bytes() + b"edited\n")
    edited = []
    results["edits"] = timed(lambda: edited.append(scan(committed)))
    assert len(edited[-1].items) == EDITS, len(edited[-1].items)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated file counts")
    parser.add_argument(
        "--file-bytes", type=int, default=3000, help="approximate size of each file"
    )
    parser.add_argument(
        "--no-globs", action="store_true", help="a bare folder locator (no include/exclude)"
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    print(
        f"load average {os.getloadavg()[0]:.2f} · python {sys.version.split()[0]} · {os.cpu_count()} cpu · files of ~{args.file_bytes} bytes, "
        f"{PER_DIR} per directory · b3sum {'found' if shutil.which('b3sum') else 'not installed'}"
        f" · locator {'without globs' if args.no_globs else 'with include/exclude globs'}"
    )
    with tempfile.TemporaryDirectory(prefix="dcx-bench-") as tmp:
        for count in sizes:
            r = run_size(count, args.file_bytes, Path(tmp), globs=not args.no_globs)
            mb = r["bytes"] / 1e6
            print(f"\n{count} files, {mb:.0f} MB (built in {r['build']:.1f} s)")
            print(
                f"  cold scan (hash all)     {r['cold']:8.3f} s   {mb / r['cold']:7.1f} MB/s"
                f"   {count / r['cold']:9.0f} files/s"
            )
            if "b3sum" in r:
                print(
                    f"  b3sum, same files        {r['b3sum']:8.3f} s   cold/b3sum = {r['cold'] / r['b3sum']:.2f}x"
                    "  (goal <= 2x)"
                )
            print(
                f"  no-change rescan         {r['nochange']:8.3f} s   {r['nochange'] / r['git']:5.2f}x git status"
                + ("  (goal <= 1.5x)" if count >= 100_000 else "")
            )
            print(
                f"    cpu (all processes)    {r['nochange_cpu']:8.3f} s   {r['nochange_cpu'] / r['git_cpu']:5.2f}x git"
                f" status's {r['git_cpu']:.3f} s"
            )
            print(
                f"  whole no-change `dcx scan` {r['cli']:6.3f} s   {r['cli'] / r['cli_git']:5.2f}x git status's"
                f" {r['cli_git']:.3f} s"
                + ("  (goal <= 2x;" if count >= 100_000 else "  (")
                + " interpreter start-up, receipt stored; medians of 5, interleaved)"
            )
            print(
                f"    cpu (all processes)    {r['cli_cpu']:8.3f} s   {r['cli_cpu'] / r['cli_git_cpu']:5.2f}x git"
                f" status's {r['cli_git_cpu']:.3f} s"
            )
            print(
                f"  rescan after {EDITS} edits    {r['edits']:8.3f} s   {r['edits'] / r['git']:5.2f}x git status"
            )
            print(
                f"  git status --porcelain   {r['git']:8.3f} s   (median of 5, interleaved with the rescans)"
            )
            shutil.rmtree(Path(tmp) / f"goal-{count}", ignore_errors=True)


if __name__ == "__main__":
    main()
