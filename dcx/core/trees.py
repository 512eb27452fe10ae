"""Tree maps behind local-file cursors (SPEC §5.3).

A tree is the sorted list of ``(relative path, revision)`` pairs of a source.
Its digest is blake3 over the RFC 8785 bytes of that list; the cursor is
``tree:<digest>`` and the list itself is stored write-once at
``private/trees/<digest>.json``. A cursor therefore names a state exactly, and
a state that never existed on disk (a capped scan's partial advance: the
committed tree with only the reported changes applied) is a tree like any
other.

For a list of string pairs, JCS is JSON with ``,``/``:`` separators, no ASCII
escaping and lower-case ``\\u00XX`` control escapes — exactly what
``json.dumps(ensure_ascii=False)`` emits, at a fraction of the cost of the
general encoder on 100k files (a test pins the equality).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

import blake3

from dcx.core.fsutil import read_bytes, write_private
from dcx.core.workspace import Workspace

TREE_SCHEMA = "dcx_tree_v0"
CURSOR_PREFIX = "tree:"
_CURSOR_RE = re.compile(r"^tree:([0-9a-f]{64})$")


class TreeError(Exception):
    """A cursor that names no readable tree here (``reason_code`` for the receipt)."""

    def __init__(self, reason_code: str) -> None:
        super().__init__(reason_code)
        self.reason_code = reason_code


_last: dict[
    str, bytes
] = {}  # the bytes of the last digest computed: a scan stores what it just hashed


def pairs_bytes(entries: Mapping[str, str]) -> bytes:
    """The JCS bytes of the sorted (path, revision) list."""
    return json.dumps(sorted(entries.items()), ensure_ascii=False, separators=(",", ":")).encode(
        "utf-8"
    )


def tree_digest(entries: Mapping[str, str]) -> str:
    data = pairs_bytes(entries)
    digest = blake3.blake3(data).hexdigest()
    _last.clear()
    _last[digest] = data
    return digest


def cursor_of(digest: str) -> str:
    return f"{CURSOR_PREFIX}{digest}"


def digest_of(cursor: str) -> str:
    match = _CURSOR_RE.match(cursor) if isinstance(cursor, str) else None
    if match is None:
        raise TreeError("cursor_invalid")
    return match.group(1)


def tree_path(ws: Workspace, digest: str) -> Path:
    return ws.trees / f"{digest}.json"


_HEAD = b'{"entries":'
_TAIL = b',"schema_version":"' + TREE_SCHEMA.encode() + b'"}'


def store_tree(ws: Workspace, entries: Mapping[str, str], digest: str | None = None) -> str:
    """Store the tree (write-once) and return its cursor."""
    digest = digest or tree_digest(entries)
    path = tree_path(ws, digest)
    if not path.exists():
        data = _last.get(digest) or pairs_bytes(entries)
        write_private(path, _HEAD + data + _TAIL)
    return cursor_of(digest)


def load_tree(ws: Workspace, cursor: str | None) -> dict[str, str]:
    """The (path → revision) map a cursor names; no cursor is the empty tree.

    Raises ``TreeError``: ``cursor_invalid`` for a cursor this adapter never
    made, ``cursor_tree_missing`` when its map is gone or does not re-hash.
    The check hashes the stored list bytes as they are: they were written in
    canonical form, so only the original bytes can match the digest.
    """
    if cursor is None:
        return {}
    digest = digest_of(cursor)
    try:
        body = read_bytes(tree_path(ws, digest))
    except OSError:
        raise TreeError("cursor_tree_missing") from None
    if not (body.startswith(_HEAD) and body.endswith(_TAIL)):
        raise TreeError("cursor_tree_missing")
    if blake3.blake3(body[len(_HEAD) : -len(_TAIL)]).hexdigest() != digest:
        raise TreeError("cursor_tree_missing")
    try:
        return {str(p): str(r) for p, r in json.loads(body)["entries"]}
    except (ValueError, KeyError, TypeError):
        raise TreeError("cursor_tree_missing") from None
