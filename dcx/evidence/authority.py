"""Authority wins (SPEC §8.2): when does current authority text confirm a recalled claim?

A recalled item is accepted only if the current exact-read authority content
confirms it: its text occurs there (line endings and trailing spaces
normalised), or — for a claim of at least three non-blank lines — at least
98% of its non-blank lines occur there. A claim with fewer than 40 non-blank
characters is too short to confirm anything (``unverifiable_recall``).
"""

from __future__ import annotations

MIN_CHARS = 40
MIN_LINES = 3
LINE_SHARE = 0.98


def normalise(text: str) -> str:
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\n".join(line.rstrip() for line in lines)


def non_blank_chars(text: str) -> int:
    return sum(1 for ch in text if not ch.isspace())


def too_short(claim: str) -> bool:
    return non_blank_chars(claim) < MIN_CHARS


def confirms(claim: str, authority: str) -> bool:
    """True when ``authority`` (current, exact-read text) confirms ``claim``."""
    if too_short(claim):
        return False
    body = normalise(claim).strip("\n")
    current = normalise(authority)
    if body in current:
        return True
    lines = [line.strip() for line in body.split("\n") if line.strip()]
    if len(lines) < MIN_LINES:
        return False
    present = {line.strip() for line in current.split("\n") if line.strip()}
    found = sum(1 for line in lines if line in present)
    return found / len(lines) >= LINE_SHARE


SAME_DOCUMENT_SHARE = 0.5


def same_document(resource_ref: str, path: str, claim: str, authority: str) -> bool:
    """Whether a content-matched file is the document a recalled item was taken from.

    Then an authority that no longer confirms the item moved away from it
    (stale), rather than never having said it (unverifiable). Either the
    item's reference ends in the file's name (``viking://…/runbook.md`` and
    ``docs/runbook.md``), or the claim has at least three non-blank lines and
    at least half of them still occur in the file.
    """
    name = path.rsplit("/", 1)[-1]
    tail = resource_ref.split("?", 1)[0].split("#", 1)[0].rstrip("/")
    if "/" in tail and tail.rsplit("/", 1)[-1] == name:
        return True
    lines = [line.strip() for line in normalise(claim).split("\n") if line.strip()]
    if len(lines) < MIN_LINES:
        return False
    present = {line.strip() for line in normalise(authority).split("\n") if line.strip()}
    return sum(1 for line in lines if line in present) / len(lines) >= SAME_DOCUMENT_SHARE
