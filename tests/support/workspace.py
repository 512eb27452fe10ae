"""The fixed test environment and goal folders on disk.

Every test runs with the fixed clock ``FIXED_NOW`` and, where it needs a key, ``FIXED_KEY``
and agent-a's signing key ``FIXED_SIGNING_KEY`` (see ``tests/conftest.py``), so refs,
signatures and snapshots are reproducible.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / ".dcx-example"
FIXED_NOW = "2026-11-29T18:00:00Z"
FIXED_KEY = bytes(range(32))
# the example agent's Ed25519 signing key (SPEC §18): a fixed seed, so statements, their
# signatures (deterministic, RFC 8032) and the signer file are the same on every run
FIXED_SIGNING_KEY = bytes(range(32, 64))


def write_tree(root: Path, tree: Mapping[str, Any]) -> None:
    """Build files from a dict: {"a/b.md": "text", "bin": b"bytes", "dir": {...}}."""
    for name, value in tree.items():
        path = root / name
        if isinstance(value, Mapping):
            path.mkdir(parents=True, exist_ok=True)
            write_tree(path, value)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(value, bytes):
                path.write_bytes(value)
            else:
                path.write_text(value)


def install_key(root: Path, key: bytes = FIXED_KEY) -> None:
    private = root / ".decision-context" / "private"
    private.mkdir(parents=True, exist_ok=True)
    (private / "key").write_bytes(key)
    (private / "key").chmod(0o600)
    signing = private / "signing"
    signing.mkdir(mode=0o700, exist_ok=True)
    (signing / "agent-a.key").write_bytes(FIXED_SIGNING_KEY)
    (signing / "agent-a.key").chmod(0o600)


def copy_example(dest: Path, key: bytes = FIXED_KEY) -> Path:
    """A fresh copy of the bundled example goal (no private state, no locks) with ``key`` installed."""
    shutil.copytree(EXAMPLE, dest, ignore=shutil.ignore_patterns("private", "*.lock"))
    install_key(dest, key)
    return dest


# -- what is on disk ---------------------------------------------------------


def cursor_bytes(root: Path) -> bytes | None:
    """The committed cursor file's bytes (None before the first commit)."""
    path = (
        root / ".decision-context" / "private" / "cursors" / "agent-a.json"
    )  # the acting agent's (SPEC §16)
    return path.read_bytes() if path.exists() else None


def packets(root: Path, kind: str) -> list[dict[str, Any]]:
    """Every stored packet of ``kind``, parsed, in file-name order."""
    folder = root / ".decision-context" / "packets" / kind
    return [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]


def packet_files(root: Path) -> dict[str, Path]:
    """ref -> file of every stored packet."""
    return {p.stem: p for p in sorted((root / ".decision-context" / "packets").glob("*/*.json"))}


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` with its bytes (to prove nothing changed)."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def tree_listing(root: Path) -> list[str]:
    """Every path under ``root`` (files and folders), for "created nothing" checks."""
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))


def tree_digest(root: Path) -> dict[str, tuple[int, bytes]]:
    """Every path under ``root`` (folders too) with its mode and bytes: the strictest "unchanged"."""
    out: dict[str, tuple[int, bytes]] = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        stat = path.lstat()
        out[rel] = (stat.st_mode, path.read_bytes() if path.is_file() else b"")
    return out
