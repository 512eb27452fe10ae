"""Chunking source text for the bm25 index (SPEC §6.3): by heading, then paragraph.

A chunk is always an exact substring of the file, so a recalled chunk can be
checked against the authority's current text by plain substring search.

- A Markdown ATX heading line (``#`` … ``######`` then a space) starts a new
  section; sections never share a chunk.
- Within a section, consecutive paragraphs (runs of non-blank lines) are
  grouped while the chunk, from its first paragraph's start to its last one's
  end, stays within ``MAX_CHUNK`` characters.
- A paragraph longer than that is cut at line ends, a line longer than that
  at the last whitespace, and a run with no whitespace at exactly ``MAX_CHUNK``.
- A near-empty chunk — its headings and fewer than ``NEAR_EMPTY`` characters of
  other text (a ``# Title`` line and a date) — is merged into the chunk that
  follows when both fit in ``MAX_CHUNK`` (SPEC §6.3 v4): alone it would take a
  result slot while saying nothing.
"""

from __future__ import annotations

import re

MAX_CHUNK = 2000
NEAR_EMPTY = 64  # characters of non-heading text below which a chunk says nothing on its own
_LINE_RE = re.compile(r"[^\n]*\n|[^\n]+$")
_HEADING_RE = re.compile(r"#{1,6}(?:[ \t]|$)")


def _paragraphs(text: str) -> list[tuple[int, int, bool]]:
    """(start, end, starts_section) of each paragraph; a heading line is its own start."""
    out: list[tuple[int, int, bool]] = []
    start: int | None = None
    end = 0
    heading = False
    for match in _LINE_RE.finditer(text):
        line = match.group()
        body = line.rstrip("\r\n")
        if not body.strip():
            if start is not None:
                out.append((start, end, heading))
                start = None
            continue
        is_heading = (
            bool(_HEADING_RE.match(body.lstrip(" ")[:8])) and len(body) - len(body.lstrip(" ")) < 4
        )
        if is_heading and start is not None:
            out.append((start, end, heading))
            start = None
        if start is None:
            start, heading = match.start(), is_heading
        end = match.start() + len(body)
    if start is not None:
        out.append((start, end, heading))
    return out


def _split_long(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Cut ``text[start:end]`` into spans of at most MAX_CHUNK: at line ends, then spaces."""
    spans: list[tuple[int, int]] = []
    while end - start > MAX_CHUNK:
        limit = start + MAX_CHUNK
        cut = text.rfind("\n", start, limit + 1)
        if cut <= start:
            window = text[start : limit + 1]
            spaces = [m.start() for m in re.finditer(r"\s", window)]
            cut = start + spaces[-1] if spaces and spaces[-1] > 0 else limit
        piece_end = cut
        while piece_end > start and text[piece_end - 1] in " \t\r\n":
            piece_end -= 1
        if piece_end > start:
            spans.append((start, piece_end))
        start = cut
        while start < end and text[start] in " \t\r\n":
            start += 1
    if end > start:
        spans.append((start, end))
    return spans


def _near_empty(text: str) -> bool:
    _, _, rest = text.partition("\n")
    if "#" not in rest and len(rest.strip()) >= NEAR_EMPTY:
        return False  # one heading line at most, and enough text after it (the common case)
    body = [
        line
        for line in text.splitlines()
        if not (_HEADING_RE.match(line.lstrip(" ")[:8]) and len(line) - len(line.lstrip(" ")) < 4)
    ]
    return len("\n".join(body).strip()) < NEAR_EMPTY


def _merge_near_empty(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in spans:
        if out and _near_empty(text[out[-1][0] : out[-1][1]]) and end - out[-1][0] <= MAX_CHUNK:
            out[-1] = (out[-1][0], end)
        else:
            out.append((start, end))
    return out


def chunk_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of the chunks of ``text``, in order."""
    chunks: list[tuple[int, int]] = []
    current: tuple[int, int] | None = None
    for p_start, p_end, starts_section in _paragraphs(text):
        pieces = _split_long(text, p_start, p_end)
        for index, (s, e) in enumerate(pieces):
            new_section = starts_section and index == 0
            if current is not None and not new_section and e - current[0] <= MAX_CHUNK:
                current = (current[0], e)
                continue
            if current is not None:
                chunks.append(current)
            current = (s, e)
    if current is not None:
        chunks.append(current)
    return _merge_near_empty(text, chunks)


def chunk_text(text: str) -> list[str]:
    """The chunks of ``text`` (each an exact substring, at most MAX_CHUNK characters)."""
    return [text[s:e] for s, e in chunk_spans(text)]
