"""The bm25 tokenizer study: each candidate analyzer through ``dcx compare`` on both labelled corpora.

    .venv/bin/python bench/tokenizers.py [--analyzers default en_stem fold fold_stem]

For every analyzer of ``dcx.providers.bm25_index.ANALYZERS`` it runs the real
``dcx compare`` (a throwaway workspace, ``dcx index``, one ``dcx recall``
process per query) on the four frozen plans — ``fixtures/compare/plan-file``,
``plan-section`` (the storefront corpus) and ``plan-ops-file``,
``plan-ops-section`` (the ops corpus) — with the bm25 profile alone, and prints
nDCG@5 and recall@8 per plan and their mean. The analyzer is switched in every
``dcx`` process of a run by a ``sitecustomize`` module on ``PYTHONPATH`` that
sets ``bm25_index.ANALYZER`` before dcx imports it: the study changes nothing
in the package. dcx keeps the analyzer with the best mean nDCG@5 (docs/recall.md,
"Tokenizer").
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HERE = REPO / "fixtures" / "compare"
PLANS = ("plan-file", "plan-section", "plan-ops-file", "plan-ops-section")
sys.path.insert(0, str(REPO))

from dcx.providers.bm25_index import ANALYZER, ANALYZERS  # noqa: E402


def bm25_only(plan: Path, out: Path) -> None:
    """A copy of ``plan`` beside it (its paths are relative to it) with the bm25 profile alone."""
    text = plan.read_text()
    head, *profiles = text.split("[[profiles]]")
    kept = [p for p in profiles if 'name = "bm25"' in p]
    out.write_text(head + "".join("[[profiles]]" + p for p in kept))


def run(plan: str, analyzer: str, tmp: Path) -> dict[str, float]:
    site = tmp / f"site-{analyzer}"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(
        f"import dcx.providers.bm25_index as index\nindex.ANALYZER = {analyzer!r}\n"
    )
    copy = HERE / f".study-{analyzer}-{plan}.toml"
    bm25_only(HERE / f"{plan}.toml", copy)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
    }
    try:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "dcx",
                "compare",
                str(copy),
                "--format",
                "json",
                "--report",
                str(tmp / f"{analyzer}-{plan}"),
            ],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
    finally:
        copy.unlink(missing_ok=True)
    if proc.returncode:
        raise SystemExit(f"{plan} / {analyzer}: dcx compare failed\n{proc.stdout}{proc.stderr}")
    (profile,) = json.loads(proc.stdout)["data"]["profiles"]
    assert profile["provider_version"], profile
    metrics = {m["k"]: m for m in profile["metrics"]}
    return {"ndcg5": metrics[5]["ndcg"], "recall8": metrics[8]["recall"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--analyzers", nargs="+", default=list(ANALYZERS), choices=ANALYZERS)
    args = parser.parse_args()
    rows: dict[str, dict[str, dict[str, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="dcx-tokenizers-") as tmp:
        for analyzer in args.analyzers:
            rows[analyzer] = {plan: run(plan, analyzer, Path(tmp)) for plan in PLANS}
            print(f"{analyzer}: done", file=sys.stderr)
    print(
        "| analyzer | "
        + " | ".join(f"{p} nDCG@5 / R@8" for p in PLANS)
        + " | mean nDCG@5 | mean R@8 |"
    )
    print("|---" * (len(PLANS) + 3) + "|")
    for analyzer, by_plan in rows.items():
        cells = [f"{by_plan[p]['ndcg5']:.3f} / {by_plan[p]['recall8']:.3f}" for p in PLANS]
        ndcg = sum(v["ndcg5"] for v in by_plan.values()) / len(PLANS)
        rec = sum(v["recall8"] for v in by_plan.values()) / len(PLANS)
        mark = " (dcx's)" if analyzer == ANALYZER else ""
        print(f"| `{analyzer}`{mark} | " + " | ".join(cells) + f" | {ndcg:.3f} | {rec:.3f} |")


if __name__ == "__main__":
    main()
