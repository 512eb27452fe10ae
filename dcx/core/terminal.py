"""Terminal safety (SPEC §3.4.1): the one function that makes foreign text visible.

Every string that came from outside dcx — file content, file and folder names,
provider and extension output, every field read back from a public file — is
passed through :func:`visible` by the renderer before it reaches a terminal.
C0 and C1 control characters, ESC, DEL, the line and paragraph separators and
the invisible or reordering characters of SPEC §3.4 are written as escapes
(``\\x1b``, ``\\u202e``), so a document cannot clear the screen, retitle the
terminal, move the cursor or reorder what the reader sees. Newline and tab are
kept only inside content blocks (``block=True``).

A leaf module (only ``re``): ``dcx status`` uses it without rich.
"""

from __future__ import annotations

import re
from typing import Any

# The invisible or reordering characters SPEC §3.4 names, beside the separators.
INVISIBLE = "\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\u2028\u2029"
# Every character these match is one ``str.isprintable`` refuses (Cc, Cf, Zl, Zp;
# tests/core/test_terminal_fast.py checks it), so printable text skips the regex.
_UNSAFE_LINE = f"[\x00-\x1f\x7f-\x9f{INVISIBLE}]"
_UNSAFE_BLOCK = f"[\x00-\x08\x0b-\x1f\x7f-\x9f{INVISIBLE}]"
_JSON_EXTRA = f"[\x7f-\x9f{INVISIBLE}]"
# Given to ``re`` as text: compiled (and kept by re's own cache) the first time some
# text needs it; most text is printable and never does.

# Keys whose string values are content blocks: newline and tab stay as they are.
BLOCK_KEYS = frozenset({"content"})


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str, *, block: bool = False) -> str:
    """``text`` with every character that could act on a terminal written as an escape."""
    if text.isprintable():
        return text  # nothing to escape (see above)
    return re.sub(_UNSAFE_BLOCK if block else _UNSAFE_LINE, _escape, text)


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
    """JSON text with DEL, C1 and the invisible characters written as ``\\uXXXX``.

    ``json.dumps`` escapes C0 by construction; these it leaves raw. They can
    only occur inside string literals, where ``\\uXXXX`` means the same.
    """
    if text.replace("\n", "").isprintable():
        return text  # JSON text is lines; no character the pattern matches is printable
    return re.sub(_JSON_EXTRA, lambda m: f"\\u{ord(m.group()):04x}", text)
