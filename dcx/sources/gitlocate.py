"""Where a git source's repository is and what its locator names, answered without running git.

Pure functions over paths and the git directory on disk, shared by the
adapter (``dcx.sources.git``), the repository questions (``gitrepo``) and the
authority reader: the git directory of a work tree or bare repository, the
clean relative paths dcx may report, the locator's in-repository ``path``,
and :func:`ref_hint` — a *prediction* of the commit a ref names, read from
the loose ref file or ``packed-refs``, that lets a scan choose its git
command before running one (never trusted as an answer: git resolves the
ref itself in whatever command runs).
"""

from __future__ import annotations

import re
from pathlib import Path

_HEX_RE = re.compile("[0-9a-f]{40}(?:[0-9a-f]{24})?")


def find_git_dir(path: Path) -> Path | None:
    """The git directory of a work tree (``.git`` dir or ``gitdir:`` file) or of a bare repository."""
    dotgit = path / ".git"
    try:
        if dotgit.is_dir():
            return dotgit
        if dotgit.is_file():
            text = dotgit.read_text(encoding="utf-8", errors="strict").strip()
            if text.startswith("gitdir:"):
                target = Path(text[len("gitdir:"):].strip())
                target = target if target.is_absolute() else (path / target)
                return target.resolve() if target.is_dir() else None
            return None
        if (path / "HEAD").is_file() and (path / "objects").is_dir() and (path / "refs").is_dir():
            return path  # bare
    except (OSError, UnicodeDecodeError):
        return None
    return None



def clean_rel(rel: str) -> bool:
    """A '/'-separated relative path with no empty, '.' or '..' segment."""
    if not rel:
        return False
    # the split only for names that could hold an empty, '.' or '..' segment
    suspect = rel[0] in "/." or rel[-1] in "/." or "/." in rel or "//" in rel
    if suspect and (rel.startswith("/") or any(part in ("", ".", "..") for part in rel.split("/"))):
        return False
    return "\\" not in rel and "\0" not in rel



def normalise_path(path: str) -> str | None:
    """The locator's in-repository ``path`` ('' = the whole tree), or None when it escapes."""
    stripped = path.strip()
    if stripped in ("", ".", "/"):
        return ""
    if stripped.startswith("/"):
        return None
    stripped = stripped.rstrip("/")
    if stripped.startswith("./"):
        stripped = stripped[2:]
    return stripped if clean_rel(stripped) else None

