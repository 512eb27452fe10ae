"""Terminal safety (SPEC §3.4.1): the one function that makes foreign text visible.

Every string that came from outside dcx — file content, file and folder names,
provider and extension output, every field read back from a public file — is
passed through :func:`visible` by the renderer before it reaches a terminal.
C0 and C1 control characters, ESC, DEL, the line and paragraph separators and
every format character (the invisible and reordering ones, the soft hyphen, the
tag characters: SPEC §3.4.1 v4) are written as escapes (``\\x1b``, ``\\u202e``),
so a document cannot clear the screen, retitle the terminal, move the cursor or
reorder what the reader sees. Newline and tab are
kept only inside content blocks (``block=True``).

A leaf module (only ``unicodedata``): ``dcx status`` uses it without rich.
"""

from __future__ import annotations

import unicodedata
from typing import Any

# What is made visible: controls (Cc: C0, DEL, C1), every format character (Cf: the
# bidi controls, zero-width characters, soft hyphen, U+180E, U+206A-206F, U+FFF9-FFFB, the
# tag characters; SPEC §3.4.1 v4), the line and paragraph separators, and the whole tag
# block U+E0000-E007F (its unassigned code points too: a later Unicode may assign them).
# Every such character is one ``str.isprintable`` refuses, so printable text is
# returned as it is without looking at its characters.
HIDDEN = frozenset({"Cc", "Cf", "Zl", "Zp"})
TAGS = (0xE0000, 0xE007F)
# Keys whose string values are content blocks: newline and tab stay as they are.
BLOCK_KEYS = frozenset({"content"})

# docs/safety.md's escape table (tests/security/test_safety_docs.py renders it from
# these rows; tests/security/test_terminal_cf.py plants every class through a pty):
# (what, an example code point). The rule itself is ``hidden``.
CLASSES: tuple[tuple[str, int], ...] = (
    ("C0 controls, ESC (newline and tab kept inside content blocks)", 0x1B),
    ("DEL and the C1 controls (CSI U+009B among them)", 0x9B),
    ("line and paragraph separators (Zl, Zp)", 0x2028),
    ("soft hyphen", 0x00AD),
    ("bidi controls: U+061C, U+200E/F, U+202A\u2013E, U+2066\u20139", 0x202E),
    ("zero-width characters and the word joiner: U+200B\u2013D, U+2060\u20134, U+FEFF", 0x200B),
    ("Mongolian vowel separator", 0x180E),
    ("deprecated format characters U+206A\u2013F", 0x206A),
    ("interlinear annotation U+FFF9\u2013B", 0xFFF9),
    ("tag characters U+E0000\u2013E007F (assigned or not)", 0xE0041),
    ("every other format (Cf) character Python's Unicode database knows", 0x110BD),
)


def hidden(char: str) -> bool:
    """Whether ``char`` is written as an escape in text output (SPEC §3.4.1)."""
    if char.isprintable():
        return False
    return unicodedata.category(char) in HIDDEN or TAGS[0] <= ord(char) <= TAGS[1]


def escape_of(code: int) -> str:
    """How a character is shown: ``\\x1b``, ``\\u202e``, and ``\\U000e0041`` beyond the BMP."""
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _visible_line(text: str, keep: str) -> str:
    if text.isprintable():
        return text
    return "".join(escape_of(ord(c)) if c not in keep and hidden(c) else c for c in text)


def visible(text: str, *, block: bool = False) -> str:
    """``text`` with every character that could act on a terminal written as an escape."""
    if text.isprintable():
        return text  # nothing to escape (see above)
    if block:  # newline and tab kept: content, line by line
        return "\n".join(_visible_line(line, "\t") for line in text.split("\n"))
    return _visible_line(text, "")


def visible_data(value: Any, *, block: bool = False) -> Any:
    """A copy of a JSON-shaped value with every string (keys too) made visible."""
    if isinstance(value, str):
        return visible(value, block=block)
    if isinstance(value, dict):
        return {
            (visible(k) if isinstance(k, str) else k): visible_data(v, block=k in BLOCK_KEYS)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [visible_data(v, block=block) for v in value]
    return value


def json_safe(text: str) -> str:
    """JSON text with DEL, C1, the format characters and the separators written as ``\\uXXXX``.

    ``json.dumps`` escapes C0 by construction; these it leaves raw. They can
    only occur inside string literals, where ``\\uXXXX`` (a surrogate pair
    above U+FFFF) means the same.
    """
    if text.replace("\n", "").isprintable():
        return text  # JSON text is lines; no character escaped here is printable
    return "".join(json_escape(c) if c != "\n" and hidden(c) else c for c in text)


def json_escape(char: str) -> str:
    """``\\uXXXX``, as a UTF-16 surrogate pair beyond the BMP (JSON has no longer escape)."""
    code = ord(char)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
