"""Real git repositories for tests of the git source adapter: made with the git CLI, never mocked."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_AUTHOR_DATE": "2026-11-29T18:00:00Z",
    "GIT_COMMITTER_DATE": "2026-11-29T18:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}


def git(repo: Path, *args: str, input: bytes | None = None) -> str:
    env = {**os.environ, **ENV}
    out = subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, env=env, input=input
    )
    return out.stdout.decode()


def init(repo: Path, *, bare: bool = False, branch: str = "main") -> Path:
    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "-q", "-b", branch, *(["--bare"] if bare else []))
    git(repo, "config", "protocol.file.allow", "always")
    return repo


def write(repo: Path, files: Mapping[str, Any]) -> None:
    """Write (str/bytes), delete (None) or symlink (("link", target)) files in the work tree."""
    for rel, content in files.items():
        path = repo / rel
        if content is None:
            if path.is_symlink() or path.exists():
                path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, tuple):
            if path.is_symlink() or path.exists():
                path.unlink()
            os.symlink(content[1], path)
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)


def commit(repo: Path, files: Mapping[str, Any] | None = None, message: str = "change") -> str:
    if files:
        write(repo, files)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message)
    return head(repo)


def head(repo: Path, ref: str = "HEAD") -> str:
    return git(repo, "rev-parse", ref).strip()


def git_source(
    source_id: str,
    repo: str,
    ref: str = "main",
    *,
    path: str | None = None,
    include: list[str] | None = None,
    exclude: list[str] | None = None,
) -> str:
    """A TOML inline locator table for a git source."""
    parts = [f'repo = "{repo}"', f'ref = "{ref}"']
    if path is not None:
        parts.append(f'path = "{path}"')
    if include is not None:
        parts.append("include = [" + ", ".join(f'"{p}"' for p in include) + "]")
    if exclude is not None:
        parts.append("exclude = [" + ", ".join(f'"{p}"' for p in exclude) + "]")
    return "{ " + ", ".join(parts) + " }"
