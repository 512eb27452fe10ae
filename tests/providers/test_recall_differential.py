"""Differential recall: ``dcx recall``'s top-k equals a textbook Okapi BM25 ranking (SPEC §6.3 v4).

The oracle is written here from the documented contract, not from dcx's code:
it chunks the generated files by the documented rule (an ATX heading starts a
chunk; a chunk with under 64 characters besides its headings joins the one
that follows), splits each chunk into tokens with tantivy's own parts chained
as docs/recall.md says (simple tokenizer, tokens over 40 characters removed,
lower case, ASCII folding, English stemming), and scores **every** chunk that holds a query term
with Okapi BM25 as a textbook writes it:

    score(d) = Σ_t idf(t) · tf(t,d)·(k1+1) / (tf(t,d) + k1·(1 - b + b·|d|/avgdl))
    idf(t)   = ln(1 + (N - n(t) + 0.5) / (n(t) + 0.5))        (tantivy's IDF)

with k1 = 1.2, b = 0.75, N, n(t) and avgdl over the whole index (one shared
scorer: the scope filters, it does not change the statistics), distinct query
terms after the tokenizer. No pruning, no limit. Chunks stay within 40
tokens, where tantivy keeps a chunk's length exactly (past 40 it stores it
rounded down to a bucket, as Lucene does; docs/recall.md).

The comparison (``check_ranking``): the i-th result's score equals the
oracle's i-th best score (tantivy scores in 32-bit floats: within 1e-5), every
result is a matching chunk of the scope, and results whose oracle scores are
exactly equal come in index order — source id, path, chunk ordinal, the order
a first build adds them (docs/recall.md). Scores closer than 32-bit precision
but not equal may come in either order.

dcx is driven through its command line (``dcx index``, ``dcx recall --format
json``) and its answer is read from the JSON it prints: each result's content
names its chunk by the chunk's own heading token.

Corpora: Zipf vocabularies of varied size and skew, a few very common terms
(in 30-95% of the chunks), duplicated terms (tf up to 20), one-chunk terms,
near-empty sections that join the next, a little non-ASCII text (folded).
Scopes: ``''``, one source, several, and a source holding 1% of the chunks.

Knob: ``DCX_HYPOTHESIS_PROFILE=deep`` (about 20x the examples).
"""

from __future__ import annotations

import itertools
import json
import math
import os
import random
import re
import tempfile
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.cli import invoker

DEEP = os.environ.get("DCX_HYPOTHESIS_PROFILE") == "deep"
EXAMPLES = 400 if DEEP else 18
K1, B = 1.2, 0.75
NEAR_EMPTY = 64
MAX_TOKENS = 40
EXTRA_WORDS = ["café", "naïve", "Straße", "über", "ÉCOLE", "crème"]


class Chunk(NamedTuple):
    source_id: str
    path: str
    ordinal: int
    tag: str  # the chunk's one-chunk heading token (its first section's)
    body: str


@cache
def _analyzer():
    import tantivy

    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(40))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.ascii_fold())
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


def tokens(text: str) -> list[str]:
    return list(_analyzer().analyze(text))


def join_near_empty(sections: list[str]) -> list[str]:
    """The documented rule: a section with under 64 characters besides its heading joins the next."""
    out: list[str] = []
    for section in sections:
        said = "\n".join(
            line for line in (out[-1] if out else "").splitlines() if not line.startswith("## ")
        )
        if out and len(said.strip()) < NEAR_EMPTY:
            out[-1] = out[-1] + "\n\n" + section
        else:
            out.append(section)
    return out


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
            sections = []
            for _ in range(per_file):
                body = rng.choices(words, weights=weights, k=rng.randint(1, 30))
                for term in common:
                    if rng.random() < share[term]:
                        body.insert(rng.randrange(len(body) + 1), term)
                if rng.random() < 0.1:  # a duplicated term
                    body.extend([rng.choice(body)] * rng.randint(2, 20))
                tag = f"zq{serial}x"
                serial += 1
                sections.append(f"## {tag}\n\n" + " ".join(body))
            chunks = []
            for ordinal, text in enumerate(join_near_empty(sections)):
                tag = re.match(r"## (zq\d+x)\n", text).group(1)
                while len(tokens(text)) > MAX_TOKENS:  # keep within exact lengths
                    text = text.rsplit(" ", 1)[0]
                chunks.append(Chunk(sid, path, ordinal, tag, text))
            files.append((path, chunks))
            made += len(chunks)
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
    """Textbook Okapi BM25 over every chunk, whole-index statistics, filtered to the scope."""

    def __init__(self, corpus: Corpus) -> None:
        self.chunks = corpus.chunks()
        self.tf = [Counter(tokens(c.body)) for c in self.chunks]
        self.length = [sum(tf.values()) for tf in self.tf]
        self.n = len(self.chunks)
        self.avgdl = sum(self.length) / self.n
        self.df = Counter(term for tf in self.tf for term in tf)

    def idf(self, term: str) -> float:
        n = self.df[term]
        return math.log(1 + (self.n - n + 0.5) / (n + 0.5))

    def rank(self, query: str, scope: list[str]) -> list[tuple[Chunk, float]]:
        """Every matching chunk of the scope, best first, exact ties in index order."""
        terms = list(dict.fromkeys(tokens(query)))
        rows = []
        for chunk, tf, length in zip(self.chunks, self.tf, self.length, strict=True):
            if scope and chunk.source_id not in scope:
                continue
            if not any(t in tf for t in terms):
                continue
            norm = K1 * (1 - B + B * length / self.avgdl)
            score = sum(self.idf(t) * tf[t] * (K1 + 1) / (tf[t] + norm) for t in terms if t in tf)
            rows.append((chunk, score))
        rows.sort(key=lambda r: (-r[1], r[0].source_id, r[0].path, r[0].ordinal))
        return rows


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-5)


def check_ranking(
    got: list[tuple[Chunk, float]], full: list[tuple[Chunk, float]], k: int, why: object
) -> None:
    """The comparison described in the module docstring."""
    want = full[:k]
    assert len(got) == len(want), (why, got, want)
    oracle = {c[:3]: s for c, s in full}
    for i, (chunk, score) in enumerate(got):
        assert chunk[:3] in oracle, (why, "not a matching chunk of the scope", chunk)
        assert close(score, oracle[chunk[:3]]), (why, chunk, score, oracle[chunk[:3]])
        assert close(oracle[chunk[:3]], want[i][1]), (why, i, got, want)
    for (a, _), (b, _) in itertools.pairwise(got):
        if oracle[a[:3]] == oracle[b[:3]]:
            assert a[:3] < b[:3], (why, "exact tie out of index order", a, b)


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
        tag = re.match(r"## (zq\d+x)\n", result["content"]).group(1)  # its first section
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
            own = tokens(chunk.body)
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
                got = dcx_rank(dcx, root, corpus, query, scope_ref, k)
                check_ranking(got, oracle.rank(query, scope), k, (query, scope_ref, k))
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
    n_chunks=st.one_of(st.integers(5, 300), st.integers(1500, 2400)),
    n_sources=st.integers(1, 4),
    vocab=st.integers(4, 1500),
    skew=st.floats(0.6, 1.6),
    tiny_share=st.booleans(),
)
def test_recall_top_k_equals_textbook_bm25(
    fast, seed, n_chunks, n_sources, vocab, skew, tiny_share
) -> None:
    corpus = make_corpus(seed, n_chunks, n_sources, vocab, skew, tiny_share)
    assert check_corpus(fast, corpus, seed, n_queries=5) > 0


def test_scoped_recall_of_common_terms_is_not_empty(dcx) -> None:
    """Regression (FTS5 engine): whole-index pruning dropped every term of this scoped query
    and returned 0 results. 2,400 sections; source s2 holds 1% of them; the query's terms
    are in half of the index or more, and s2 has chunks holding all of them."""
    corpus = make_corpus(seed=11, n_chunks=2400, n_sources=3, vocab=300, skew=1.0, tiny_share=True)
    oracle = Oracle(corpus)
    chunks = corpus.chunks()
    common = [w for w in corpus.common if 2 * oracle.df[tokens(w)[0]] >= len(chunks)]
    assert common, "the corpus lost its common terms"
    with tempfile.TemporaryDirectory(prefix="dcx-diff-") as tmp:
        root = Path(tmp) / "goal"
        root.mkdir()
        write_goal(root, corpus, dcx)
        assert dcx("-C", str(root), "index").exit_code == 0
        tiny = list(corpus.sources)[-1]
        query = " ".join(common)
        full = oracle.rank(query, [tiny])
        assert len(full) >= 8
        got = dcx_rank(dcx, root, corpus, query, f"source:{tiny}", 8)
        check_ranking(got, full, 8, "scoped")
        unscoped = dcx_rank(dcx, root, corpus, query, "", 8)
        check_ranking(unscoped, oracle.rank(query, []), 8, "unscoped")
