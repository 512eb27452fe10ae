"""Every Unicode format (Cf) character is made visible on a terminal (SPEC §3.4.1 v4).

Through a real pseudo-terminal, one run per class: an event line whose summary
holds the class's characters is merged into the log (as a hostile host's
would be) and the installed ``dcx log`` prints it with colour on. The oracle
is the byte stream the terminal received: none of the characters is in it,
and each is there in its visible form (``\\xad``, ``\\u061c``; ``\\U000e0041``
beyond the BMP). A last run plants every Cf character the running Python's Unicode
database knows (``unicodedata``, not dcx's table), so a character dcx's table
misses fails here.
"""

from __future__ import annotations

import json
import sys
import unicodedata
from pathlib import Path

import pytest

from tests.cli.test_terminal_safety import on_pty

CLASSES: dict[str, list[int]] = {
    "bidi_controls": [0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)],
    "soft_hyphen": [0x00AD],
    "mongolian_vowel_separator": [0x180E],
    "deprecated_format": list(range(0x206A, 0x2070)),
    "interlinear_annotation": [0xFFF9, 0xFFFA, 0xFFFB],
    "tag_characters": [0xE0000, 0xE0001, 0xE0002, 0xE001F, 0xE0020, 0xE0041, 0xE005A, 0xE007F],
    "zero_width": [0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF],
}
ALL_CF = [c for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"]


def shown(code: int) -> str:
    """The visible form SPEC §3.4.1 names: ``\\xad``, ``\\u202e``; ``\\U000e0041`` beyond the BMP."""
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def plant(root: Path, codes: list[int]) -> None:
    """Merged event lines whose summaries hold ``codes``, a dozen a line (log shortens long ones)."""
    events = root / ".decision-context" / "events.jsonl"
    event = json.loads(events.read_text().splitlines()[0])
    with events.open("a") as handle:
        for n in range(0, len(codes), 12):
            text = "mark" + "".join(f"{chr(c)}|" for c in codes[n : n + 12])
            event.update(event_id=f"dcx-event-{n:032x}", summary=text)
            handle.write(json.dumps(event) + "\n")


@pytest.mark.parametrize("name", [*sorted(CLASSES), "every_cf"])
def test_each_format_character_class_is_escaped_on_a_pty(cycled: Path, name: str) -> None:
    codes = ALL_CF if name == "every_cf" else CLASSES[name]
    plant(cycled, codes)
    code, out = on_pty("log", cwd=cycled)
    assert code == 0, out
    text = out.decode("utf-8")
    raw = [f"U+{c:04X}" for c in codes if chr(c) in text]
    assert not raw, f"reached the terminal raw: {raw}"
    flat = text.replace("\r", "").replace("\n", "")
    missing = [f"U+{c:04X}" for c in codes if shown(c) + "|" not in flat]
    assert not missing, f"not shown as an escape: {missing}"
