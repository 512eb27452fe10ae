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
# bidi controls, zero-width characters, soft hyphen, U+180E, U+FFF9-FFFB, the tag
# characters U+E0000-E007F; SPEC §3.4.1 v4) and the line and paragraph separators.
# Every such character is one ``str.isprintable`` refuses, so printable text is
# returned as it is without looking at its characters.
HIDDEN = frozenset({"Cc", "Cf", "Zl", "Zp"})
# Keys whose string values are content blocks: newline and tab stay as they are.
BLOCK_KEYS = frozenset({"content"})


def _escape(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _visible_line(text: str, keep: str) -> str:
    if text.isprintable():
        return text
    return "".join(
        _escape(c)
        if c not in keep and not c.isprintable() and unicodedata.category(c) in HIDDEN
        else c
        for c in text
    )


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
    return "".join(
        _json_escape(c)
        if not c.isprintable() and c != "\n" and unicodedata.category(c) in HIDDEN
        else c
        for c in text
    )


def _json_escape(char: str) -> str:
    code = ord(char)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
