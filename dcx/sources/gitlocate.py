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
                target = Path(text[len("gitdir:") :].strip())
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


# git's order for a short ref name (``git help revisions``); a name under refs/ is looked up as given
_RULES = ("refs/{}", "refs/tags/{}", "refs/heads/{}", "refs/remotes/{}", "refs/remotes/{}/HEAD")


def ref_hint(git_dir: Path, ref: str) -> str | None:
    """The object id ``ref`` probably names, read from the repository's files; None when unsure.

    A prediction only (a scan picks its git command by it; git then resolves
    the ref itself): a full object id is itself; a name is looked up in git's
    order, loose ref files before ``packed-refs``; a symbolic ref, a
    revision expression, a linked work tree's or a reftable repository's
    refs, or a name that is also a file at the top of the git directory give
    None.
    """
    if _HEX_RE.fullmatch(ref):
        return ref
    if not ref or any(c in ref for c in "~^:@{}*?[\\") or ref.startswith(("/", "-")) or "//" in ref:
        return None
    if (git_dir / "commondir").exists() or (git_dir / "reftable").exists():
        return None
    if ref.startswith("refs/"):
        names = [ref]
    else:
        if (git_dir / ref).exists():
            return None  # HEAD, FETCH_HEAD, … or a stray file git would try first
        names = [rule.format(ref) for rule in _RULES]
    packed: dict[str, str] | None = None
    for name in names:
        try:
            text = (git_dir / name).read_text(encoding="ascii").strip()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            text = None
        except (OSError, UnicodeDecodeError):
            return None
        if text is not None:
            return (
                text if _HEX_RE.fullmatch(text) else None
            )  # "ref: …" (symbolic): not followed here
        if packed is None:
            packed = _packed_refs(git_dir)
            if packed is None:
                return None
        if name in packed:
            return packed[name]
    return None


def _packed_refs(git_dir: Path) -> dict[str, str] | None:
    """{ref name: object id} of ``packed-refs`` ({} when there is none), or None when unreadable."""
    try:
        data = (git_dir / "packed-refs").read_bytes()
    except FileNotFoundError:
        return {}
    except OSError:
        return None
    out: dict[str, str] = {}
    last = None
    for line in data.decode("utf-8", "replace").splitlines():
        if line.startswith("^") and last is not None and _HEX_RE.fullmatch(line[1:]):
            out[last] = line[1:]  # the commit an annotated tag points at
            continue
        last = None
        if not line or line[0] in "#^":
            continue
        oid, _, name = line.partition(" ")
        if _HEX_RE.fullmatch(oid):
            out[name] = oid
            last = name
    return out
