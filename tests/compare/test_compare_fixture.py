"""The frozen fixture of `make compare` stays frozen and consistent, and its OpenViking replay still fits dcx's call."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from dcx.comparison import corpus as corpus_mod
from dcx.comparison.plan import load_plan, load_qrels, load_queries
from tests.support.compare import compare_env
from tests.support.workspace import REPO

FIXTURE = REPO / "fixtures" / "compare"


@pytest.mark.parametrize("granularity", ["file", "section"])
def test_fixture_plans_load_and_match_their_locks(granularity: str) -> None:
    plan = load_plan(FIXTURE / f"plan-{granularity}.toml")
    queries = load_queries(plan)
    documents = corpus_mod.read_corpus(plan.corpus, plan.include, skip=(plan.lock,))
    docids = {u.docid for u in corpus_mod.units(documents, plan.granularity)}
    qrels = load_qrels(plan, queries, docids)
    body = corpus_mod.lock_body(
        plan, documents, plan.queries_path.read_bytes(), plan.qrels_path.read_bytes()
    )
    corpus_mod.check_lock(plan, body)  # raises corpus_changed if anyone touched the frozen inputs
    answerable = [q for q in queries if any(g > 0 for g in qrels.get(q.query_id, {}).values())]
    assert len(documents) >= 40 and len(answerable) >= 30 and len(queries) - len(answerable) >= 3
    assert {1, 2} <= {g for judged in qrels.values() for g in judged.values()}  # graded, not binary
    assert [p.name for p in plan.profiles] == ["bm25", "openviking", "extension"]


def test_openviking_replay_ranks_what_the_recording_holds(tmp_path: Path) -> None:
    """Differential: dcx's content matching against the recorded hits' own URIs."""
    recordings = json.loads((FIXTURE / "openviking" / "recordings.json").read_text())
    queries = [json.loads(line) for line in (FIXTURE / "queries.jsonl").read_text().splitlines()][
        :2
    ]
    base = tmp_path / "ov"
    base.mkdir()
    (base / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    (base / "qrels.txt").write_text(
        "".join(
            line + "\n"
            for line in (FIXTURE / "qrels-file.txt").read_text().splitlines()
            if line.split()[0] in {q["query_id"] for q in queries}
        )
    )
    (base / "plan.toml").write_text(
        'schema_version = "dcx_comparison_plan_v0"\nqueries = "queries.jsonl"\nqrels = "qrels.txt"\nk = [8]\n\n'
        f'[corpus]\npath = "{FIXTURE / "corpus"}"\ninclude = ["**/*.md"]\ngranularity = "file"\n\n'
        f'[[profiles]]\nname = "openviking"\nprofile = "{FIXTURE / "profiles" / "openviking.toml"}"\n'
        f'path_prepend = ["{FIXTURE / "openviking" / "bin"}"]\n'
    )
    home = tmp_path / "home"  # the isolation fixture made it
    proc = subprocess.run(
        [sys.executable, "-m", "dcx", "compare", "plan.toml", "--freeze", "--format", "json"],
        cwd=base,
        env=compare_env(home),
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(proc.stdout)["data"]
    row = data["profiles"][0]
    assert (row["provider"], row["provider_version"], row["unmatched_items"], row["items"]) == (
        "openviking",
        "0.5.2",
        0,
        16,
    )
    prefix = recordings["scope"] + "/"
    for q, got in zip(queries, data["per_query"], strict=True):
        case = recordings["find"][hashlib.sha256(q["query"].encode()).hexdigest()]
        hits = [h for h in json.loads(case["stdout"])["result"]["resources"] if h["level"] == 2][:8]
        # viking://resources/compare-corpus/<dir>/<stem>/<stem>.md -> <dir>/<stem>.md
        expected = []
        for h in hits:
            parts = h["uri"].removeprefix(prefix).split("/")
            expected.append("/".join([*parts[:-2], parts[-1]]))
        assert [r["docid"] for r in got["ranking"]] == expected, q["query_id"]
