"""A tiny comparison plan whose every ranking is fixed, so its metrics can be computed by hand.

``tiny_plan(base)`` writes, under ``base``: a four-document corpus, five
queries (q4 unanswerable, q5 answered ``unavailable``), graded qrels, and two
profiles — ``scripted`` (the ``fixtures/extensions/scripted.py`` provider,
answering from a script) and ``bm25``. ``compare_env(home)`` is the
environment a subprocess ``dcx compare`` runs in (fixed clock, no DCX_*).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from tests.support.extensions import manifest_text
from tests.support.workspace import FIXED_NOW, REPO

DOCS = {
    "a.md": "# Alpha\n\nAlpha talks about apples.\n\n## Detail\n\nApples are red.\n",
    "b.md": "# Beta\n\nBeta talks about bananas.\n",
    "c.md": "# Gamma\n\nGamma talks about cherries.\n",
    "d.md": "# Delta\n\nDelta talks about dates.\n",
}
QUERIES = [
    ("q1", "which fruit is red", "red fruit"),
    ("q2", "where do cherries grow", "cherries"),
    ("q3", "apples and dates", "apples and dates"),
    ("q4", "what is the airspeed of a swallow", "unanswerable"),
    ("q5", "the provider is down for this one", "unavailable"),
]
QRELS = """\
q1 0 a.md 2
q1 0 b.md 1
q2 0 c.md 1
q3 0 d.md 1
q3 0 a.md 1
q4 0 b.md 0
q5 0 d.md 1
"""
# What the scripted provider returns, in rank order (max_results = the largest k = 3).
SCRIPT = {
    "which fruit is red": {"contents": [DOCS["b.md"], "text found in no document", DOCS["a.md"]]},
    "where do cherries grow": {"contents": [DOCS["a.md"], DOCS["b.md"], DOCS["c.md"]]},
    "apples and dates": {"contents": [DOCS["a.md"], "Apples are red.", DOCS["d.md"]]},
    "what is the airspeed of a swallow": {"contents": [DOCS["c.md"]]},
    "the provider is down for this one": {"unavailable": "backend_down"},
}
PROFILE = """\
schema_version = "decision_context_profile_v0"
goal_id = "tiny"
enabled = true
enabled_agents = ["cmp"]

[context_provider]
provider = "{provider}"
{extra}"""


def tiny_plan(
    base: Path,
    *,
    k: str = "[1, 2, 3]",
    profiles: tuple[str, ...] = ("scripted", "bm25"),
    only: tuple[str, ...] | None = None,
) -> Path:
    base.mkdir(parents=True, exist_ok=True)
    for name, text in DOCS.items():
        (base / "corpus" / name).parent.mkdir(parents=True, exist_ok=True)
        (base / "corpus" / name).write_text(text)
    (base / "queries.jsonl").write_text(
        "".join(
            json.dumps({"query_id": q, "query": t, "query_summary": s}) + "\n"
            for q, t, s in QUERIES
            if only is None or q in only
        )
    )
    (base / "qrels.txt").write_text(
        "".join(
            line + "\n" for line in QRELS.splitlines() if only is None or line.split()[0] in only
        )
    )
    ext = base / "ext"
    ext.mkdir(exist_ok=True)
    shutil.copy2(REPO / "fixtures" / "extensions" / "scripted.py", ext / "scripted.py")
    (ext / "script.json").write_text(json.dumps(SCRIPT))
    (ext / "extension.toml").write_text(manifest_text("scripted", "./scripted.py"))
    (base / "scripted.toml").write_text(
        PROFILE.format(
            provider="extension", extra='\n[context_provider.config]\nextension_id = "scripted"\n'
        )
    )
    (base / "bm25.toml").write_text(PROFILE.format(provider="bm25", extra=""))
    entries = {
        "scripted": '[[profiles]]\nname = "scripted"\nprofile = "scripted.toml"\nextension = "ext/extension.toml"\n',
        "bm25": '[[profiles]]\nname = "bm25"\nprofile = "bm25.toml"\n',
    }
    plan = base / "plan.toml"
    plan.write_text(
        'schema_version = "dcx_comparison_plan_v0"\n'
        'queries = "queries.jsonl"\n'
        'qrels = "qrels.txt"\n'
        f"k = {k}\n"
        "\n[corpus]\n"
        'path = "corpus"\n'
        'include = ["*.md"]\n'
        'granularity = "file"\n\n' + "\n".join(entries[p] for p in profiles)
    )
    return plan


def compare_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DCX_")}
    env.update({"HOME": str(home), "DCX_NOW": FIXED_NOW, "NO_COLOR": "1", "COLUMNS": "120"})
    return env
