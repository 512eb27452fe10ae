"""Strict TOML reading with errors that name the key path and its line (SPEC §4).

``tomllib`` parses; this module finds where a key path lives in the text so an
error reads ``sources.toml: sources[2].locator, line 14: ...``. It is a small
line scanner, not a second parser: when it cannot tell, it falls back to the
enclosing table's header line.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dcx.core.errors import InvalidInput
from dcx.core.fsutil import read_text

# Given to ``re`` as text: compiled (and cached by re) when an error first needs a line.
_HEADER_RE = r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$"
_KEY_RE = r"^\s*((?:[A-Za-z0-9_-]+|\"[^\"]*\"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|\"[^\"]*\"|'[^']*'))*)\s*="
_PATH_TOKEN_RE = r"([^.\[\]]+)|\[(\d+)\]"


def _split_dotted(text: str) -> tuple[str, ...]:
    parts = re.findall(r"\"([^\"]*)\"|'([^']*)'|([A-Za-z0-9_-]+)", text)
    return tuple(a or b or c for a, b, c in parts)


def _scan_value(text: str, depth: int, closing: str | None) -> tuple[int, str | None]:
    """Follow a value's text: (open array brackets, the multi-line string delimiter still open).

    Brackets inside strings and comments do not count; a multi-line string
    (three double or three single quotes) left open continues on the next lines,
    which hold no keys.
    """
    i, n = 0, len(text)
    while i < n:
        if closing is not None:  # inside a multi-line string
            end = text.find(closing, i)
            while end != -1 and closing == '"""' and _escaped(text, end):
                end = text.find(closing, end + 1)
            if end == -1:
                return depth, closing
            i = end + 3
            while i < n and text[i] == closing[0]:  # up to two quotes may end the string's content
                i += 1
            closing = None
            continue
        ch = text[i]
        if ch == "#":
            break
        if text.startswith('"""', i) or text.startswith("'''", i):
            closing, i = text[i : i + 3], i + 3
            continue
        if ch in "\"'":
            i += 1
            while i < n and text[i] != ch:
                i += 2 if ch == '"' and text[i] == "\\" else 1
            i += 1
            continue
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth = max(0, depth - 1)
        i += 1
    return depth, closing


def _escaped(text: str, at: int) -> bool:
    """Whether the quote at ``at`` follows an odd run of backslashes (a basic string's escape)."""
    run = 0
    while at - run - 1 >= 0 and text[at - run - 1] == "\\":
        run += 1
    return run % 2 == 1


def key_lines(text: str) -> dict[tuple[Any, ...], int]:
    """Map each key path (tables, array-of-table indices, keys) to its 1-based line."""
    where: dict[tuple[Any, ...], int] = {}
    counts: dict[tuple[Any, ...], int] = {}
    table: tuple[Any, ...] = ()
    depth = 0  # open brackets of a multi-line array, whose lines hold no keys
    closing: str | None = None  # the delimiter of a multi-line string still open
    for number, line in enumerate(text.splitlines(), start=1):
        if depth > 0 or closing is not None:
            depth, closing = _scan_value(line, depth, closing)
            continue
        header = re.match(_HEADER_RE, line)
        if header and not re.match(_KEY_RE, line):
            names = _split_dotted(header.group(2))
            if header.group(1) == "[[":
                index = counts.get(names, 0)
                counts[names] = index + 1
                table = (*names, index)
                where.setdefault(names, number)
            else:
                table = names
            where[table] = number
            continue
        key = re.match(_KEY_RE, line)
        if key:
            path = (*table, *_split_dotted(key.group(1)))
            where.setdefault(path, number)
            depth, closing = _scan_value(line[key.end() :], 0, None)
    return where


def parse_path(path: str) -> tuple[Any, ...]:
    out: list[Any] = []
    for name, index in re.findall(_PATH_TOKEN_RE, path):
        out.append(int(index) if index else name)
    return tuple(out)


def line_of(text: str, path: str) -> int | None:
    where = key_lines(text)
    parts = parse_path(path)
    while parts:
        if parts in where:
            return where[parts]
        parts = parts[:-1]
    return None


def load_toml(path: Path, display: str) -> tuple[dict[str, Any], str]:
    """Parse a TOML file; a syntax error is exit 2 naming the file and line."""

    try:
        text = read_text(path)
    except UnicodeDecodeError:
        raise InvalidInput(f"{display}: not UTF-8 text", code="invalid_toml") from None
    return parse_toml(text, display), text


def parse_toml(text: str, display: str) -> dict[str, Any]:
    """Parse TOML text; a syntax error is exit 2 naming ``display`` and the line."""
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        if message.endswith("(at end of document)"):  # name the line the document ends on (SPEC §4)
            last = text.rstrip("\r\n").count("\n") + 1
            message = message[: -len("(at end of document)")] + f"(at end of document, line {last})"
        raise InvalidInput(f"{display}: invalid TOML: {message}", code="invalid_toml") from None


def locate_error(exc: InvalidInput, display: str, text: str) -> InvalidInput:
    """Re-word a field error as ``<file>: <key path>, line N: <problem>``."""
    field = exc.field or ""
    problem = exc.message
    if field and problem.startswith(f"{field}: "):
        problem = problem[len(field) + 2 :]
    line = line_of(text, field) if field else None
    where = f"{display}: {field}" if field else display
    if line is not None:
        where += f", line {line}"
    return InvalidInput(f"{where}: {problem}", code=exc.code, hint=exc.hint, field=field or None)


# Each settings file is parsed once per process (SPEC §3.6): the parsed value is kept
# with the file's stat, and a file written since (a new inode, size or time) is read again.
_PARSED: dict[tuple[str, Path], tuple[tuple[int, ...], Any]] = {}


def _stat(path: Path) -> tuple[int, ...] | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_dev, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def once(kind: str, path: Path, parse: Callable[[], Any]) -> Any:
    """``parse()``, or what it returned for this file as it is now."""
    before = _stat(path)
    kept = _PARSED.get((kind, path))
    if before is not None and kept is not None and kept[0] == before:
        return kept[1]
    value = parse()
    if before is not None and _stat(path) == before:  # not rewritten while it was read
        _PARSED[(kind, path)] = (before, value)
    return value
