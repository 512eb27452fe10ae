#!/usr/bin/env python3
"""`dcx report` at scale: N generated decisions (default 10,000), budget ≤ 5 s and < 500 MB.

    .venv/bin/python bench/report.py [--decisions N] [--keep DIR] [--repeat R] [--workers W]

Each generated decision is a copy of a real one from fixtures/report/ (the
verified ttl-keep chain: an assembly embedding its evidence, scans, coverage
and retrieval, a proposal, an outcome), renamed and re-hashed, with its
confidence and outcome varied; its decision index lists all ten packets a
prepare, propose and outcome write. Only the three packets the report reads
are stored. The report runs as the real command in a subprocess; the figures
are its wall time, its CPU time (user + system of the command and the worker
processes it forks) and the peak resident memory of the largest of them
(ru_maxrss of the children), the median of R runs each, in three states:

- fresh clone: no `private/` folder (no key, no profile, no private state),
  so the report verifies every file and writes nothing — the case issue 17 and
  SPEC §13 mean by "a report";
- cold: `private/` exists (a host working on the goal) but holds no verdict
  cache yet: every file verified, and the cache of passed files written;
- warm: the second run there, reading files whose exact bytes passed already
  (parse only).

`--workers W` sets DCX_REPORT_WORKERS (1: read in the command's own process;
default: every CPU it may use).
"""

from __future__ import annotations

import argparse
import copy
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

from dcx.core.canonical import packet_ref, pretty_bytes  # noqa: E402
from dcx.packets import KINDS  # noqa: E402

SOURCE = REPO / "fixtures" / "report" / "catalog" / ".decision-context"
DC = ".decision-context"
BUDGET_S, BUDGET_MB = 5.0, 500
OUTCOMES = ("verified", "refuted", "pending", "inconclusive")


def _template(kind: str, decision: str) -> dict:
    for line in (SOURCE / "decisions" / f"{decision}.jsonl").read_text().splitlines():
        entry = json.loads(line)
        if entry["kind"] == kind:
            found = json.loads((SOURCE / "packets" / kind / f"{entry['ref']}.json").read_text())
            if kind != "outcome" or found["verification_status"] == "verified":
                return found
    raise SystemExit(f"no {kind} in {decision}")


def _rehash(packet: dict, kind: str) -> str:
    meta = KINDS[kind]
    packet[meta.ref_field] = packet_ref(meta.prefix, packet, meta.ref_field)
    return packet[meta.ref_field]


def generate(root: Path, count: int) -> None:
    dc = root / DC
    (dc / "decisions").mkdir(parents=True)
    for kind in ("assembly", "proposal", "outcome"):
        (dc / "packets" / kind).mkdir(parents=True)
    shutil.copy2(SOURCE / "workspace.toml", dc / "workspace.toml")
    asm0, prop0, out0 = (_template(k, "ttl-keep") for k in ("assembly", "proposal", "outcome"))
    at = asm0["observed_at"]
    for index in range(count):
        ident = f"gen-{index:05d}"
        asm = copy.deepcopy(asm0)
        lines = []
        nested = [
            ("evidence", asm["evidence"]),
            ("rebase", asm["rebase"]),
            ("checkpoint", asm["checkpoint"]),
            ("coverage", asm["coverage"]),
            ("freshness", asm["freshness"]),
            ("retrieval", asm["retrieval"]),
            *(("scan", s) for s in asm["scan_receipts"]),
        ]
        for kind, packet in nested:
            packet["decision_id"] = ident
            lines.append((kind, _rehash(packet, kind)))
        asm["decision_id"] = ident
        lines.append(("assembly", _rehash(asm, "assembly")))
        prop = copy.deepcopy(prop0)
        prop["decision_id"], prop["evidence_packet_ref"] = ident, asm["evidence"]["packet_ref"]
        prop["recommended_decision"]["confidence"] = round((index % 10) / 10 + 0.05, 2)
        lines.append(("proposal", _rehash(prop, "proposal")))
        out = copy.deepcopy(out0)
        status = OUTCOMES[index % 4]
        out["decision_id"], out["proposal_packet_ref"] = ident, prop["packet_ref"]
        out["evidence_packet_ref"] = asm["evidence"]["packet_ref"]
        out["verification_status"] = status
        out["observed_outcomes"][0]["status"] = status
        out["reward_memory_candidate_eligible"] = status == "verified"
        lines.append(("outcome", _rehash(out, "outcome")))
        for kind, packet in (("assembly", asm), ("proposal", prop), ("outcome", out)):
            ref = packet[KINDS[kind].ref_field]
            (dc / "packets" / kind / f"{ref}.json").write_bytes(pretty_bytes(packet))
        (dc / "decisions" / f"{ident}.jsonl").write_text(
            "".join(
                json.dumps({"kind": k, "observed_at": at, "ref": r}, sort_keys=True) + "\n"
                for k, r in lines
            )
        )


def run_report(root: Path, env: dict[str, str]) -> tuple[float, float, float, dict]:
    exe = Path(sys.executable).parent / "dcx"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(
        [str(exe), "-C", str(root), "report", "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"report failed ({proc.returncode}): {proc.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    # ru_maxrss of children is the largest child so far: the report is the largest we start
    return wall, cpu, after.ru_maxrss / 1024, json.loads(proc.stdout)["data"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=int, default=10_000)
    parser.add_argument("--keep", help="generate into this folder and keep it")
    parser.add_argument("--repeat", type=int, default=1, help="runs per state (median)")
    parser.add_argument("--workers", type=int, help="DCX_REPORT_WORKERS for the command")
    parser.add_argument(
        "--reuse", action="store_true", help="with --keep: the folder holds a generated goal"
    )
    args = parser.parse_args()
    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="dcx-bench-report-"))
    try:
        root = base / "goal"
        if args.reuse:
            shutil.rmtree(root / DC / "private", ignore_errors=True)
        else:
            start = time.perf_counter()
            generate(root, args.decisions)
            print(f"generated {args.decisions} decisions in {time.perf_counter() - start:.1f} s")
        load = os.getloadavg()[0]
        print(
            f"load average {load:.1f} on {os.cpu_count()} CPU(s): wall time includes waiting for a CPU"
        )
        env = dict(os.environ)
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode once, not at every start
        if args.workers:
            env["DCX_REPORT_WORKERS"] = str(args.workers)
        cache = root / DC / "private" / "cache" / "report-verified.txt"
        states = (
            ("fresh clone (no private/: every file verified)", lambda: None),
            ("cold (private/, no verdict cache yet)", lambda: cache.unlink(missing_ok=True)),
            ("warm (verdict cache)", lambda: None),
        )
        for label, prepare in states:
            if label.startswith("cold"):
                (root / DC / "private").mkdir(mode=0o700, exist_ok=True)
            runs = []
            for _ in range(args.repeat):
                prepare()
                runs.append(run_report(root, env))
            wall = statistics.median(r[0] for r in runs)
            cpu = statistics.median(r[1] for r in runs)
            mb = max(r[2] for r in runs)
            data = runs[-1][3]
            assert data["totals"]["decisions"] == args.decisions, data["totals"]["decisions"]
            verdict = "within" if wall <= BUDGET_S and mb < BUDGET_MB else "OVER"
            print(
                f"{label}: wall {wall:.2f} s, CPU {cpu:.2f} s, peak RSS {mb:.0f} MB "
                f"({verdict} the {BUDGET_S:g} s / {BUDGET_MB} MB budget)",
                flush=True,
            )
        cal = data["totals"]["calibration"]
        print(
            f"  Brier {cal['brier_score']} over {cal['scored']} scored decisions; "
            f"{len(data['left_out'])} packet(s) left out"
        )
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
