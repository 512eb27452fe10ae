"""Chunking by heading, then paragraph, at most 2000 characters, exact substrings."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from dcx.providers.chunking import MAX_CHUNK, chunk_spans, chunk_text

INTRO = "An introduction that says enough to stand as a search result on its own."
BODY = "A body paragraph with enough words in it to be worth a result slot of its own."


def test_headings_start_chunks_and_paragraphs_group() -> None:
    text = f"# Title\n\n{INTRO}\n\nsecond para\n## Part two\n{BODY}\n\n\n### Three\n\n{BODY}\n"
    assert chunk_text(text) == [
        f"# Title\n\n{INTRO}\n\nsecond para",
        f"## Part two\n{BODY}",
        f"### Three\n\n{BODY}",
    ]


def test_heading_only_and_near_empty_chunks_join_the_section_that_follows() -> None:
    """SPEC §6.3 v4: a heading alone, or with under 64 characters of text, is no result of its own."""
    adr = (
        "# ADR-011: ClickHouse\n\nDate: 2024-09-12\nStatus: Accepted\n\n## Context\n\n"
        + BODY
        + "\n"
    )
    assert chunk_text(adr) == [adr.strip()]
    stacked = f"# Postmortem\n## Summary\n\n{BODY}\n\n## Impact\n\n{BODY}\n"
    assert chunk_text(stacked) == [f"# Postmortem\n## Summary\n\n{BODY}", f"## Impact\n\n{BODY}"]
    # 64 characters of text stand alone; a near-empty last chunk has nothing to join
    said = "x" * 63 + "y"
    assert chunk_text(f"# A\n{said}\n## B\n{BODY}\n## C\n") == [
        f"# A\n{said}",
        f"## B\n{BODY}",
        "## C",
    ]
    # a merge never makes a chunk longer than MAX_CHUNK
    long_section = "w" * (MAX_CHUNK - 12)
    assert chunk_text(f"# Title\n\n## Long\n{long_section}\n") == [
        "# Title",
        f"## Long\n{long_section}",
    ]


def test_paragraphs_group_until_the_limit() -> None:
    para = "word " * 300  # 1500 characters
    chunks = chunk_text(f"{para}\n\n{para}\n\nshort\n")
    assert len(chunks) == 2
    assert chunks[1].endswith("short")
    assert all(len(c) <= MAX_CHUNK for c in chunks)


def test_a_long_paragraph_is_cut_at_lines_then_spaces_then_hard() -> None:
    lines = "\n".join([f"line of text number {i:04d}" for i in range(200)])
    assert all(len(c) <= MAX_CHUNK for c in chunk_text(lines))
    assert all(not c.endswith("\n") for c in chunk_text(lines))
    unbroken = "x" * 4500
    assert [len(c) for c in chunk_text(unbroken)] == [2000, 2000, 500]


def test_not_a_heading() -> None:
    assert chunk_text("#hashtag is text\nmore\n") == ["#hashtag is text\nmore"]
    assert chunk_text("    # indented code\nmore\n") == ["    # indented code\nmore"]


def test_empty_and_blank_text_have_no_chunks() -> None:
    assert chunk_text("") == [] and chunk_text("\n \n\t\n") == []


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.sampled_from([*list("ab #\n\r\té"), "word ", "# H\n", "\n\n", "x" * 700]), max_size=400
    ).map("".join)
)
def test_chunks_are_bounded_ordered_exact_substrings_covering_all_words(text: str) -> None:
    spans = chunk_spans(text)
    previous_end = 0
    for start, end in spans:
        assert 0 < end - start <= MAX_CHUNK
        assert start >= previous_end
        assert (
            text[start:end].strip() == text[start:end].strip(" \t\r\n") and text[start:end].strip()
        )
        previous_end = end
    # every non-blank character is in exactly one chunk, in order
    covered = "".join("".join(text[s:e].split()) for s, e in spans)
    assert covered == "".join(text.split())
