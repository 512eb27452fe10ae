"""Terminal safety (SPEC §3.4.1): the one function that makes foreign text visible.

Every string that came from outside dcx — file content, file and folder names,
provider and extension output, every field read back from a public file — is
passed through :func:`visible` by the renderer before it reaches a terminal.
C0 and C1 control characters, ESC, DEL, the line and paragraph separators and
every Unicode format character (bidi controls, zero-width characters, soft
hyphen, tag characters: ``ESCAPED``) are written as escapes
(``\\x1b``, ``\\u202e``, ``\\U000e0041``), so a document cannot clear the screen, retitle the
terminal, move the cursor or reorder what the reader sees. Newline and tab are
kept only inside content blocks (``block=True``).

A leaf module (only ``re``): the fast ``dcx status`` path uses it without rich.
"""

from __future__ import annotations

import re

from dcx.core.lazyre import LazyPattern

TYPE_CHECKING = False  # typing stays unimported at run time (~16 M instructions; issue 18)
if TYPE_CHECKING:
    from typing import Any

# Every character written as an escape in text output (SPEC §3.4.1): C0 and C1 controls, DEL,
# the line and paragraph separators and every Unicode format (Cf) character — bidi controls,
# zero-width characters, soft hyphen, tag characters — as (first, last, what) rows.
# docs/safety.md prints this table; tests/security/test_terminal_cf.py checks every Cf
# character of the running Python's Unicode database is in it, through a pty.
# The format characters (Cf, and the unassigned rest of the tag block): the public-safety
# detector removes these before it matches (SPEC §3.4 v4).
FORMAT: tuple[tuple[int, int, str], ...] = (
    (0x00AD, 0x00AD, "soft hyphen"),
    (0x0600, 0x0605, "Arabic number signs"),
    (0x061C, 0x061C, "Arabic letter mark (bidi)"),
    (0x06DD, 0x06DD, "Arabic end of ayah"),
    (0x070F, 0x070F, "Syriac abbreviation mark"),
    (0x0890, 0x0891, "Arabic pound and piastre marks above"),
    (0x08E2, 0x08E2, "Arabic disputed end of ayah"),
    (0x180E, 0x180E, "Mongolian vowel separator"),
    (0x200B, 0x200F, "zero-width space and joiners, left-to-right and right-to-left marks"),
    (0x202A, 0x202E, "bidi embeddings, pop and overrides"),
    (0x2060, 0x2064, "word joiner and the invisible operators"),
    (0x2066, 0x2069, "bidi isolates"),
    (0x206A, 0x206F, "deprecated format characters (symmetric swapping, digit shapes)"),
    (0xFEFF, 0xFEFF, "zero-width no-break space (byte order mark)"),
    (0xFFF9, 0xFFFB, "interlinear annotation anchors and terminator"),
    (0x110BD, 0x110BD, "Kaithi number sign"),
    (0x110CD, 0x110CD, "Kaithi number sign above"),
    (0x13430, 0x1343F, "Egyptian hieroglyph format controls"),
    (0x1BCA0, 0x1BCA3, "shorthand format controls"),
    (0x1D173, 0x1D17A, "musical symbol format controls"),
    (0xE0000, 0xE007F, "tag characters"),
)
ESCAPED: tuple[tuple[int, int, str], ...] = tuple(
    sorted(
        (
            (0x0000, 0x001F, "C0 controls, ESC (newline and tab kept inside content blocks)"),
            (0x007F, 0x009F, "DEL and the C1 controls (CSI U+009B among them)"),
            (0x2028, 0x2029, "line and paragraph separators"),
            *FORMAT,
        )
    )
)


def _char_class(rows: tuple[tuple[int, int, str], ...], *, keep: str = "") -> str:
    parts = []
    for first, last, _what in rows:
        run = [c for c in range(first, last + 1) if chr(c) not in keep]
        while run:  # split around kept characters into contiguous runs
            end = 0
            while end + 1 < len(run) and run[end + 1] == run[end] + 1:
                end += 1
            lo, hi = run[0], run[end]
            parts.append(re.escape(chr(lo)) + ("" if lo == hi else "-" + re.escape(chr(hi))))
            run = run[end + 1 :]
    return "[" + "".join(parts) + "]"


# Every character these match is one ``str.isprintable`` refuses (Cc, Cf, Zl, Zp, and the
# unassigned U+E0000; tests/core/test_lazy_patterns.py checks it), so printable text skips
# the regex.
_UNSAFE_LINE = LazyPattern(_char_class(ESCAPED))
_UNSAFE_BLOCK = LazyPattern(_char_class(ESCAPED, keep="\t\n"))
# Keys whose string values are content blocks: newline and tab stay as they are.
BLOCK_KEYS = frozenset({"content"})


def escape_of(code: int) -> str:
    """How a character is shown: ``\\x1b``, ``\\u202e``, and ``\\U000e0041`` beyond the BMP."""
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _escape(match: re.Match[str]) -> str:
    return escape_of(ord(match.group()))


def visible(text: str, *, block: bool = False) -> str:
    """``text`` with every character that could act on a terminal written as an escape."""
    if text.isprintable():
        return text  # nothing to escape (see above)
    return (_UNSAFE_BLOCK if block else _UNSAFE_LINE).sub(_escape, text)


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
    return _JSON_EXTRA.sub(lambda m: json_escape(m.group()), text)


def json_escape(char: str) -> str:
    """``\\uXXXX``, as a UTF-16 surrogate pair beyond the BMP (JSON has no longer escape)."""
    code = ord(char)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


# what json.dumps leaves raw of the table above: everything from DEL up (it escapes C0 itself)
_JSON_EXTRA = LazyPattern(_char_class(ESCAPED[1:]))
