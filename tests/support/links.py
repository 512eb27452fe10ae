"""Goal repositories with committed links, cloned with real git (SPEC §3.5 v4 attack tests).

``hostile_clone`` commits the example after a full cycle, plus the links a test
plants, to an origin repository; clones it with git (which recreates each link
as a link); and gives the clone the private half an honest host would have
(``private/``, copied beside the clone). ``snapshot`` records every entry of a
tree without following a link, so a test can prove nothing was written, here
or where a link points.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Mapping
from pathlib import Path

from tests.support.git import git

DC = ".decision-context"


def hostile_clone(cycled: Path, base: Path, links: Mapping[str, str]) -> tuple[Path, Path]:
    """(the clone's goal root, the folder outside it that the links point into)."""
    outside = base / "outside"
    (outside / "dir").mkdir(parents=True)
    (outside / "victim.jsonl").write_text('{"victim": "untouched"}\n')
    origin = base / "origin"
    shutil.copytree(
        cycled, origin, symlinks=True, ignore=shutil.ignore_patterns("private", "*.lock")
    )
    for rel, target in links.items():
        path = origin / rel
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.exists() or path.is_symlink():
            path.unlink()
        path.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, path)
    git(origin, "init", "-q", "-b", "main")
    git(origin, "add", "-A")
    git(origin, "add", "-f", f"{DC}/profile.toml", f"{DC}/sources.toml")
    git(origin, "commit", "-q", "-m", "a goal with links")
    clone = base / "goal"
    git(base, "clone", "-q", str(origin), str(clone))
    shutil.copytree(
        cycled / DC / "private",
        clone / DC / "private",
        symlinks=True,
        ignore=shutil.ignore_patterns("*.lock"),
    )
    return clone, outside


def snapshot(*roots: Path) -> dict[str, object]:
    """Every entry under ``roots``: a link's target, a file's bytes and mode, a folder; links never followed."""
    seen: dict[str, object] = {}
    for root in roots:
        for folder, dirs, files in os.walk(root, followlinks=False):
            for name in sorted(dirs + files):
                path = Path(folder) / name
                st = path.lstat()
                key = str(path)
                if stat.S_ISLNK(st.st_mode):
                    seen[key] = ("link", os.readlink(path))
                elif stat.S_ISREG(st.st_mode):
                    seen[key] = ("file", path.read_bytes(), stat.S_IMODE(st.st_mode))
                else:
                    seen[key] = ("dir" if stat.S_ISDIR(st.st_mode) else "special",)
    return seen
