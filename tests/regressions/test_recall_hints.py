"""Issue 11 §3: every recall reason code has a hint (and the docs give the right exit code).

The codes come from the docs' tables and from the provider sources, not from
the hint table, so a new code without a hint fails here.
"""

from __future__ import annotations

import re

from dcx.providers.reasons import hint
from tests.support.workspace import REPO

DOCS = REPO / "docs"
CODE = re.compile(r"`([a-z][a-z0-9]*(?:_[a-z0-9]+)+)`")


def _section(text: str, title: str) -> str:
    start = text.index(title)
    end = text.find("\n## ", start + len(title))
    return text[start:] if end == -1 else text[start:end]


def documented_recall_codes() -> set[str]:
    exit_codes = (DOCS / "exit-codes.md").read_text()
    codes = {
        m
        for line in _section(exit_codes, "## Recall reason codes").splitlines()
        if line.startswith("| `")
        for m in CODE.findall(line.split("|")[1])
    }
    ext = _section(exit_codes, "## Reason codes: extension provider and doctor")
    readiness = ext[ext.index("readiness status") : ext.index("The response check")]
    codes |= set(CODE.findall(readiness)) - {"unavailable"}
    table = _section(
        (DOCS / "extensions.md").read_text(), "## Reason codes of an extension retrieval"
    )
    codes |= {
        m
        for line in table.splitlines()
        if line.startswith("| `")
        for m in CODE.findall(line.split("|")[1])
    }
    return codes


def emitted_recall_codes() -> set[str]:
    found: set[str] = set()
    for name in (
        "providers/openviking.py",
        "providers/bm25.py",
        "providers/bm25_index.py",
        "evidence/recall.py",
        "state/provider_config.py",
    ):
        text = (REPO / "dcx" / name).read_text()
        found |= set(re.findall(r"\"((?:provider|index|scope|context_provider)_[a-z_]+)\"", text))
    return found - {
        "provider_version",
        "provider_readiness",
        "provider_ref",
        "provider_id",
        "scope_ref",
        "context_provider_retrieval_v0",
        "index_path",
        "provider_fail_open",
        "provider_health",
        "provider_result_count",
    }


def test_every_recall_reason_code_has_a_hint() -> None:
    codes = documented_recall_codes()
    assert {
        "provider_search_failed",
        "provider_search_parse_failed",
        "provider_reads_unusable",
        "extension_timeout",
        "extension_not_installed",
    } <= codes  # the parse found the tables
    missing = sorted(code for code in codes if not hint(code))
    assert missing == []


def test_every_emitted_recall_code_is_documented() -> None:
    assert emitted_recall_codes() - documented_recall_codes() == set()


def test_recall_docs_give_exit_3_for_a_bad_provider_config(dcx, example) -> None:
    profile = example / ".decision-context" / "profile.toml"
    profile.write_text(
        profile.read_text().replace(
            'provider = "bm25"', 'provider = "bm25"\n[context_provider.config]\nbogus = 1'
        )
    )
    result = dcx(
        "-C", str(example), "recall", "--scope", "", "--query", "ttl", "--query-summary", "TTL"
    )
    assert result.exit_code == 3 and "context_provider.config" in result.stderr
    recall = (DOCS / "recall.md").read_text()
    sentence = recall[recall.index("unknown or bad key is exit") :][:200]
    assert sentence.startswith("unknown or bad key is exit 3"), sentence
