"""The detector sees through disguises (SPEC §3.4 v4): normalise, then match.

Every positive of the labelled corpus, disguised — format characters (soft
hyphen, tag characters, U+180E, U+206A-F) or variation selectors sprinkled
anywhere, or its letters written full width — is still refused. The oracle is
the corpus's own labels; the disguises are drawn by hypothesis.
"""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from dcx.core.public import unsafe_class

CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "public-safety"
POSITIVES = [
    json.loads(line)["text"]
    for line in (CORPUS / "positives.jsonl").read_text().splitlines()
    if json.loads(line)["family"] not in ("control_character", "invisible_character")
]
HIDERS = [0x00AD, 0x180E, 0x206A, 0x206F, 0xFE0F, 0xFE00, 0xE0020, 0xE0041, 0xE007F, 0xE0100]


def fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


@settings(max_examples=300)
@given(
    index=st.integers(0, len(POSITIVES) - 1),
    cuts=st.lists(st.tuples(st.integers(0, 400), st.sampled_from(HIDERS)), max_size=6),
    wide=st.booleans(),
)
def test_a_disguised_positive_is_still_refused(index: int, cuts: list, wide: bool) -> None:
    text = POSITIVES[index]
    if wide:
        text = fullwidth(text)
    for at, hider in sorted(cuts, reverse=True):
        at = min(at, len(text))
        text = text[:at] + chr(hider) + text[at:]
    assert unsafe_class(text) is not None, repr(text)
