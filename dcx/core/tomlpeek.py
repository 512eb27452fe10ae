"""Whether a TOML file could set a key at all, without parsing it.

``tomllib``'s import costs about a quarter of `dcx log`'s and `dcx verify`'s
start-up (issue 18), and those two read one optional key each from
``profile.toml`` (``[commit] require_review``, ``[commit]
external_event_logs``). A TOML key is spelled in the text: bare, quoted,
dotted or inside an inline table, its name appears as written, and the only
way to write it without its letters is a ``\\u``/``\\U`` escape in a quoted
key. So a file that spells none of the names and holds no such escape sets
none of them, whatever else it says (valid or not), and the caller can take
the default without parsing; any other file is parsed as before.
``tests/core/test_tomlpeek.py`` compares the answer with the parse's.
"""

from __future__ import annotations

from pathlib import Path

from dcx.core.fsutil import read_text


def may_set(path: Path, *names: str) -> bool:
    """False only when ``path`` is missing or its text spells none of ``names`` and no escape.

    Unreadable or non-UTF-8 files answer True: the full read reports them as it always has.
    """
    try:
        text = read_text(path)
    except FileNotFoundError:
        return False
    except (OSError, UnicodeDecodeError):
        return True
    if "\\u" in text or "\\U" in text:
        return True
    return any(name in text for name in names)


_BARE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def simple_table(text: str) -> dict[str, str] | None:
    """``tomllib.loads(text)`` for the simplest documents, or None for every other text.

    The form read is what ``dcx init`` writes for ``workspace.toml``: printable
    ASCII lines, each blank, a ``#`` comment, or ``bare_key = "text"`` (spaces
    around the ``=`` and a trailing comment allowed; the text without quotes or
    backslashes; each key once). Its meaning is TOML's without doubt; anything
    else (tabs, CR, other characters, tables, escapes, numbers, repeated keys)
    is left to ``tomllib``, errors and all.
    """
    if not (text.isascii() and text.replace("\n", "").isprintable()):
        return None
    table: dict[str, str] = {}
    for line in text.split("\n"):
        body = line.lstrip(" ")
        if not body or body.startswith("#"):
            continue
        key, eq, rest = body.partition("=")
        key = key.rstrip(" ")
        rest = rest.lstrip(" ")
        if not eq or not key or not _BARE.issuperset(key) or key in table:
            return None
        if not rest.startswith('"'):
            return None
        end = rest.find('"', 1)
        if end < 0:
            return None
        value, tail = rest[1:end], rest[end + 1 :].lstrip(" ")
        if "\\" in value or (tail and not tail.startswith("#")):
            return None
        table[key] = value
    return table
