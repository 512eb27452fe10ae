"""Content matching to the frozen corpus and the section docids (SPEC §11), against hand-written expectations."""

from __future__ import annotations

from pathlib import Path

import pytest

from dcx.comparison.corpus import Matcher, read_corpus, units
from dcx.comparison.metrics import percentile
from tests.support.workspace import write_tree

RUNBOOK = (
    "Intro line before any heading.\n\n"
    "# Roll back: the TTL!\n\nStep zero.\n\n"
    "## Steps\n1. Freeze deploys.   \n2. Publish.\n\n"
    "## Steps\nA second section with the same title.\n"
    "    # indented four: not a heading\n"
)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    write_tree(
        root,
        {"ops/runbook.md": RUNBOOK, "b.md": "# B\n\nAnother file.\n", "skip.txt": "not included\n"},
    )
    return root


def test_section_docids(corpus: Path) -> None:
    docs = read_corpus(corpus, ("*.md",))
    assert [d.path for d in docs] == ["b.md", "ops/runbook.md"]
    assert [u.docid for u in units(docs, "section")] == [
        "b.md#b",
        "ops/runbook.md#top",
        "ops/runbook.md#roll-back-the-ttl",
        "ops/runbook.md#steps",
        "ops/runbook.md#steps-1",
    ]
    assert [u.docid for u in units(docs, "file")] == ["b.md", "ops/runbook.md"]


def test_matching_normalises_line_ends_and_trailing_spaces(corpus: Path) -> None:
    docs = read_corpus(corpus, ("*.md",))
    files, sections = Matcher(docs, "file"), Matcher(docs, "section")
    chunk = "## Steps\r\n1. Freeze deploys.\r\n2. Publish.\r\n\r\n"  # CRLF, no trailing spaces: still the same text
    assert files.match(chunk).docid == "ops/runbook.md"
    assert sections.match(chunk) == ("ops/runbook.md#steps", False)
    assert sections.match("A second section with the same title.").docid == "ops/runbook.md#steps-1"
    assert sections.match("Intro line before any heading.").docid == "ops/runbook.md#top"


def test_an_item_running_past_its_section_is_matched_where_most_of_it_is_and_counted(
    corpus: Path,
) -> None:
    docs = read_corpus(corpus, ("*.md",))
    sections = Matcher(docs, "section")
    # the whole file: #top holds 32 characters, #roll-back-the-ttl 35, #steps 41, #steps-1 82
    assert sections.match(RUNBOOK) == ("ops/runbook.md#steps-1", True)
    # a title heading carried into the section it introduces is that section's
    carried = "# Roll back: the TTL!\n\nStep zero.\n\n## Steps\n1. Freeze deploys.\n2. Publish."
    assert sections.match(carried) == ("ops/runbook.md#steps", True)
    # equal shares: the first section
    assert sections.match("zero.\n\n## Step")[0] == "ops/runbook.md#roll-back-the-ttl"


def test_unmatched_items(corpus: Path) -> None:
    docs = read_corpus(corpus, ("*.md",))
    m = Matcher(docs, "file")
    assert m.match("Freeze deploys. Publish.").docid is None  # not a substring once normalised
    assert m.match("   \n\n").docid is None
    assert m.match("not included").docid is None  # skip.txt is outside corpus.include


def test_nearest_rank_percentiles() -> None:
    values = [5, 1, 4, 2, 3, 10, 9, 8, 7, 6]
    assert percentile(values, 50) == 5 and percentile(values, 95) == 10
    assert percentile([7], 95) == 7 and percentile([], 50) is None


def test_a_lock_inside_the_corpus_is_not_a_document(corpus: Path) -> None:
    (corpus / "corpus.lock").write_text("{}\n")
    assert "corpus.lock" in [d.path for d in read_corpus(corpus, ("*",))]
    assert "corpus.lock" not in [
        d.path for d in read_corpus(corpus, ("*",), skip=(corpus / "corpus.lock",))
    ]
