"""Differential recall: ``dcx recall``'s top-k equals a plain FTS5 ``ORDER BY bm25()`` (SPEC §6.3).

The oracle is written here from the documented contract, not from dcx's code:
it builds its own in-memory FTS5 table (same tokenizer) from the generated
files, chunked by the documented rule (an ATX heading starts a chunk; a heading
and its one short paragraph share it), and ranks **every** match of the OR-ed
quoted query terms within the scope with ``ORDER BY bm25()`` — no pruning, no
bounds, no limit. Scores are whole-index BM25 (one shared scorer: the scope
filters, it does not change the statistics); equal scores are ordered by
source id, path and chunk ordinal (docs/recall.md).

dcx is driven through its command line (``dcx index``, ``dcx recall --format
json``) and its answer is read from the JSON it prints: each result's content
names its chunk by the chunk's own heading token.

Corpora: Zipf vocabularies of varied size and skew, a few very common terms
(in 30-95% of the chunks, so some have FTS5's floored IDF), duplicated terms
(tf up to 30), one-chunk terms, a little non-ASCII text; sometimes over the
2000 chunks where near-zero-IDF terms are kept out of the candidate search.
Scopes: ``''``, one source, several, and a source holding 1% of the chunks.

Knob: ``DCX_HYPOTHESIS_PROFILE=deep`` (about 20x the examples).
"""

from __future__ import annotations

import json
import os
import random
import re
import sqlite3
import tempfile
import unicodedata
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.cli import invoker

DEEP = os.environ.get("DCX_HYPOTHESIS_PROFILE") == "deep"
EXAMPLES = 400 if DEEP else 18
TOKEN = re.compile(r"[^\W_]+")
EXTRA_WORDS = ["café", "naïve", "Straße", "über", "ÉCOLE", "crème"]


class Chunk(NamedTuple):
    source_id: str
    path: str
    ordinal: int
    tag: str  # the chunk's one-chunk heading token
    body: str


class Corpus(NamedTuple):
    sources: dict[str, list[tuple[str, list[Chunk]]]]  # source id -> [(path, chunks)]
    vocabulary: list[str]
    common: list[str]

    def chunks(self) -> list[Chunk]:
        return [c for files in self.sources.values() for _, chunks in files for c in chunks]


def _words(rng: random.Random, size: int) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    out: dict[str, None] = {}
    while len(out) < size:
        out.setdefault("".join(rng.choice(letters) for _ in range(rng.randint(2, 7))), None)
    words = list(out)
    for extra in EXTRA_WORDS:
        if rng.random() < 0.3:
            words.insert(rng.randrange(len(words) + 1), extra)
    return words


def make_corpus(
    seed: int, n_chunks: int, n_sources: int, vocab: int, skew: float, tiny_share: bool
) -> Corpus:
    rng = random.Random(seed)
    words = _words(rng, vocab)
    weights = [1.0 / (rank + 1) ** skew for rank in range(len(words))]
    common = rng.sample(words[: max(3, len(words) // 10)], min(3, len(words)))
    share = {w: rng.choice([0.3, 0.5, 0.51, 0.6, 0.95]) for w in common}
    source_ids = [f"s{i}" for i in range(n_sources)]
    # chunks per source: with tiny_share the last source holds 1% of them
    counts = [n_chunks // n_sources] * n_sources
    if tiny_share and n_sources > 1:
        counts = [max(1, n_chunks // 100)] + [
            (n_chunks - max(1, n_chunks // 100)) // (n_sources - 1)
        ] * (n_sources - 1)
        counts = counts[1:] + counts[:1]
    sources: dict[str, list[tuple[str, list[Chunk]]]] = {}
    serial = 0
    for sid, count in zip(source_ids, counts, strict=True):
        files: list[tuple[str, list[Chunk]]] = []
        made = 0
        while made < count:
            per_file = min(count - made, rng.randint(1, 12))
            path = f"d{len(files) % 7}/f{len(files):04d}.md"
            chunks = []
            for ordinal in range(per_file):
                body = rng.choices(words, weights=weights, k=rng.randint(1, 40))
                for term in common:
                    if rng.random() < share[term]:
                        body.insert(rng.randrange(len(body) + 1), term)
                if rng.random() < 0.1:  # a duplicated term
                    body.extend([rng.choice(body)] * rng.randint(2, 30))
                tag = f"zq{serial}x"
                serial += 1
                chunks.append(Chunk(sid, path, ordinal, tag, f"## {tag}\n\n" + " ".join(body)))
            files.append((path, chunks))
            made += per_file
        sources[sid] = files
    return Corpus(sources, words, common)


def write_goal(root: Path, corpus: Corpus, dcx: Any) -> None:
    assert (
        dcx("-C", str(root), "init", "--goal-id", "goal-diff", "--agent-id", "agent-a").exit_code
        == 0
    )
    dc = root / ".decision-context"
    (dc / "profile.toml").write_text(
        'schema_version = "decision_context_profile_v0"\ngoal_id = "goal-diff"\nenabled = true\n'
        'enabled_agents = ["agent-a"]\n[context_provider]\nprovider = "bm25"\nmax_results = 8\n'
    )
    registry = [
        'schema_version = "decision_source_registry_v0"',
        '[[bindings]]\nprovider_id = "files"\nadapter = "local-file"',
    ]
    for sid, files in corpus.sources.items():
        registry.append(
            f'[[sources]]\nsource_id = "{sid}"\nprovider_id = "files"\nsource_kind = "document"\npriority = "p1"\n'
            'evidence_level = "s1"\nobjectives = ["diff"]\nscan_mode = "incremental"\nexact_read_policy = "always"\n'
            f'freshness_seconds = 86400\nlocator = "{sid}"'
        )
        for path, chunks in files:
            target = root / sid / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("\n\n".join(c.body for c in chunks) + "\n")
    (dc / "sources.toml").write_text("\n".join(registry) + "\n")


class Oracle:
    """Every match ranked by plain FTS5 ``bm25()``, whole-index statistics, filtered to the scope."""

    def __init__(self, corpus: Corpus) -> None:
        self.conn = sqlite3.connect(":memory:")
        self.conn.execute(
            "CREATE VIRTUAL TABLE t USING fts5(body, src UNINDEXED, "
            "tokenize = 'unicode61 remove_diacritics 2')"
        )
        self.by_tag = {c.tag: c for c in corpus.chunks()}
        self.conn.executemany(
            "INSERT INTO t (body, src) VALUES (?, ?)", [(c.body, c.tag) for c in corpus.chunks()]
        )

    def rank(self, query: str, scope: list[str], k: int) -> list[tuple[Chunk, float]]:
        terms = list(dict.fromkeys(TOKEN.findall(unicodedata.normalize("NFC", query))))
        if not terms:
            return []
        match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
        rows = [
            (self.by_tag[tag], -score)
            for tag, score in self.conn.execute(
                "SELECT src, bm25(t) FROM t WHERE t MATCH ? ORDER BY bm25(t)", (match,)
            )
        ]
        if scope:
            rows = [(c, s) for c, s in rows if c.source_id in scope]
        rows.sort(key=lambda r: (-r[1], r[0].source_id, r[0].path, r[0].ordinal))
        return rows[:k]


def dcx_rank(
    dcx: Any, root: Path, corpus: Corpus, query: str, scope: str, k: int
) -> list[tuple[Chunk, float]]:
    out = dcx(
        "-C",
        str(root),
        "recall",
        "--scope",
        scope,
        "--query",
        query,
        "--query-summary",
        "differential",
        "--max-results",
        str(k),
        "--format",
        "json",
    )
    assert out.exit_code == 0, (out.stdout[-600:], out.stderr[-600:])
    data = json.loads(out.stdout)["data"]
    assert data["status"] == "completed", data["reason_code"]
    by_tag = {c.tag: c for c in corpus.chunks()}
    ranked = []
    for result in data["results"]:
        tag = re.match(r"## (zq\d+x)\n", result["content"]).group(1)
        assert result["content"] == by_tag[tag].body
        ranked.append((by_tag[tag], result["score"]))
    return ranked


def queries(rng: random.Random, corpus: Corpus, scope: list[str], n: int) -> list[str]:
    in_scope = [c for c in corpus.chunks() if not scope or c.source_id in scope]
    out = []
    for _ in range(n):
        kind = rng.random()
        if kind < 0.25:  # only very common terms: the case whole-index pruning emptied
            terms = rng.sample(corpus.common, rng.randint(1, len(corpus.common)))
        elif kind < 0.5:  # words of one chunk of the scope, plus common ones
            chunk = rng.choice(in_scope)
            own = TOKEN.findall(chunk.body)
            terms = rng.sample(own, min(len(own), rng.randint(1, 3))) + rng.sample(corpus.common, 1)
        elif kind < 0.6:  # a one-chunk term (its heading tag) and a common term
            terms = [rng.choice(in_scope).tag, rng.choice(corpus.common)]
        elif kind < 0.65:
            terms = ["qqqnotaword", rng.choice(corpus.vocabulary)]
        else:  # Zipf head and tail
            terms = [
                rng.choice(corpus.vocabulary[:8]),
                *rng.sample(corpus.vocabulary, rng.randint(0, 4)),
            ]
        rng.shuffle(terms)
        if rng.random() < 0.2:
            terms.append(terms[0].upper())  # a repeated term, differently cased
        out.append(" ".join(terms))
    return out


def check_corpus(dcx: Any, corpus: Corpus, seed: int, n_queries: int) -> int:
    """Compare dcx with the oracle on every scope kind; returns how many result lists were compared."""
    rng = random.Random(seed)
    oracle = Oracle(corpus)
    compared = 0
    with tempfile.TemporaryDirectory(prefix="dcx-diff-") as tmp:
        root = Path(tmp) / "goal"
        root.mkdir()
        write_goal(root, corpus, dcx)
        out = dcx("-C", str(root), "index", "--format", "json")
        assert out.exit_code == 0, out.stdout[-600:]
        ids = list(corpus.sources)
        scopes = [[], [rng.choice(ids)], ids[-1:]]
        if len(ids) > 2:
            scopes.append(rng.sample(ids, 2))
        for scope in scopes:
            scope_ref = "source:" + ",".join(scope) if scope else ""
            for query in queries(rng, corpus, scope, n_queries):
                k = rng.randint(1, 8)
                want = oracle.rank(query, scope, k)
                got = dcx_rank(dcx, root, corpus, query, scope_ref, k)
                assert [c[:3] for c, _ in got] == [c[:3] for c, _ in want], (
                    query,
                    scope_ref,
                    k,
                    got,
                    want,
                )
                assert [s for _, s in got] == [round(s, 6) for _, s in want], (query, scope_ref)
                compared += 1
    return compared


@pytest.fixture(scope="module")
def fast() -> Any:
    return invoker()


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    seed=st.integers(0, 2**32 - 1),
    # past 4096 rows the index's posting lists span several blocks
    n_chunks=st.one_of(st.integers(5, 300), st.integers(2000, 2400), st.integers(4100, 4600)),
    n_sources=st.integers(1, 4),
    vocab=st.integers(4, 1500),
    skew=st.floats(0.6, 1.6),
    tiny_share=st.booleans(),
)
def test_recall_top_k_equals_plain_fts5_ranking(
    fast, seed, n_chunks, n_sources, vocab, skew, tiny_share
) -> None:
    corpus = make_corpus(seed, n_chunks, n_sources, vocab, skew, tiny_share)
    assert check_corpus(fast, corpus, seed, n_queries=5) > 0


def test_scoped_recall_of_common_terms_is_not_empty(dcx) -> None:
    """Regression: whole-index pruning dropped every term of this scoped query and returned 0 results.

    2,400 chunks; source s2 holds 1% of them; the query's terms are in ≥ half
    of the index (FTS5 floors their IDF), and s2 has chunks holding all of them.
    """
    corpus = make_corpus(seed=11, n_chunks=2400, n_sources=3, vocab=300, skew=1.0, tiny_share=True)
    oracle = Oracle(corpus)
    chunks = corpus.chunks()
    common = [
        w
        for w in corpus.common
        if 2 * sum(w in TOKEN.findall(c.body) for c in chunks) >= len(chunks)
    ]
    assert common, "the corpus lost its near-zero-IDF terms"
    with tempfile.TemporaryDirectory(prefix="dcx-diff-") as tmp:
        root = Path(tmp) / "goal"
        root.mkdir()
        write_goal(root, corpus, dcx)
        assert dcx("-C", str(root), "index").exit_code == 0
        tiny = list(corpus.sources)[-1]
        assert sum(len(c) for _, c in corpus.sources[tiny]) == 24
        query = " ".join(common)
        want = oracle.rank(query, [tiny], 8)
        assert len(want) == 8
        got = dcx_rank(dcx, root, corpus, query, f"source:{tiny}", 8)
        assert [c[:3] for c, _ in got] == [c[:3] for c, _ in want]
        unscoped = dcx_rank(dcx, root, corpus, query, "", 8)
        assert [c[:3] for c, _ in unscoped] == [c[:3] for c, _ in oracle.rank(query, [], 8)]
