"""An ``mcp`` source (SPEC §15.1) over the test server ``tests.support.mcp_server``.

``register(root, notes, *flags)`` writes an enabled profile and a registry whose one source
is that server over the folder ``notes``; ``model(notes)`` is the SPEC's view of what such a
source holds — URI → blake3 of the bytes of every text file, computed here from the files,
never by dcx — and ``diff`` the added/modified/deleted items between two such maps.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import blake3

from tests.support.sources import binding_block, configure, source_block
from tests.support.workspace import REPO

PREFIX = "notes://docs/"
SID = "source:notes"
PROVIDER = "notes"


SERVER = REPO / "tests" / "support" / "mcp_server.py"


def command(notes: Path, *flags: str) -> list[str]:
    """The server's argv: the script by path, so it needs nothing of this repository on sys.path
    (``-P``: its own folder is not put first either, where ``tests/support/mcp.py`` would shadow
    the SDK)."""
    return [sys.executable, "-P", str(SERVER), str(notes), *flags]


def locator(
    notes: Path, *flags: str, prefix: str = PREFIX, include: tuple[str, ...] = (), **env: str
) -> str:
    """The inline TOML table of the source's locator (JSON strings are TOML basic strings)."""
    parts = [
        f"command = {json.dumps(command(notes, *flags))}",
        "env = { " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in env.items()) + " }",
        f"uri_prefix = {json.dumps(prefix)}",
    ]
    if include:
        parts.append(f"include = {json.dumps(list(include))}")
    return "{ " + ", ".join(parts) + " }"


def register(
    root: Path,
    notes: Path,
    *flags: str,
    prefix: str = PREFIX,
    include: tuple[str, ...] = (),
    policy: str = "always",
    extra: str = "",
    env: dict[str, str] | None = None,
    **kw: float,
) -> None:
    configure(
        root,
        binding_block(PROVIDER, "mcp")
        + source_block(
            SID,
            locator(notes, *flags, prefix=prefix, include=include, **(env or {})),
            provider_id=PROVIDER,
            policy=policy,
            extra=extra,
        ),
        **kw,
    )


def model(notes: Path, prefix: str = PREFIX, suffix: str = "") -> dict[str, str]:
    """URI → revision of the text files under ``notes`` (binary ones are not text resources)."""
    out = {}
    for path in sorted(p for p in notes.rglob("*") if p.is_file()):
        rel = path.relative_to(notes).as_posix()
        if not rel.endswith(suffix):
            continue
        data = path.read_bytes()
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        out[prefix + rel] = blake3.blake3(data).hexdigest()
    return out


def diff(old: dict[str, str], new: dict[str, str]) -> list[tuple[str, str, str]]:
    out = []
    for uri in sorted(old.keys() | new.keys()):
        if uri not in new:
            out.append((uri, "deleted", "deleted"))
        elif uri not in old:
            out.append((uri, "added", new[uri]))
        elif old[uri] != new[uri]:
            out.append((uri, "modified", new[uri]))
    return out
