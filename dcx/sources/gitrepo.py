"""A git repository read through ``git`` itself, without a work tree (SPEC §15).

Shared by the ``git`` source adapter, the bm25 indexer, the authority reader
and ``dcx audit``, so all of them see the same files with the same
revisions (blob ids). Every call is one ``git`` process through dcx's one
subprocess boundary (``dcx.core.process.run_bounded``): argv without a
shell, an allow-listed environment, its own process group, capped output and
the caller's deadline. Its settings come from the one place every git dcx
runs takes them from (``dcx.core.gitcmd``: hooks, file-system monitor,
signing, ssh, askpass, credential helpers, alternate-refs command, external
diff, editors, pager and every protocol switched off — SPEC §3.7); on top of
them git runs here:

- with ``--git-dir`` given (no discovery, no work tree, no index) and
  ``--no-optional-locks`` (a scan never writes the repository, not even the
  index refresh ``git status`` would do);
- without system or global config (``GIT_CONFIG_NOSYSTEM``,
  ``GIT_CONFIG_GLOBAL=/dev/null``): a user's ``~/.gitconfig`` cannot change
  what a scan sees; the repository's own config still applies (object
  format, alternates, packed refs) under the settings above;
- without replace objects (``--no-replace-objects``: authority is the objects
  as written), and with literal pathspecs (a locator ``path`` is a path,
  never a glob). Only plumbing that applies no filter or textconv reads
  content (``cat-file --batch`` without ``--filters``, ``diff-tree`` raw).

Plumbing commands (``rev-parse``, ``rev-list``, ``merge-base``,
``diff-tree``, ``ls-tree``, ``cat-file --batch``/``--batch-check``), whose
output formats are stable, and one porcelain command, ``git log`` for the
one-process scan after a change (``first_parent_delta``), with its format
given and every setting that could change its output pinned. Blob reads
live in ``gitblobs``, path and git-directory questions in ``gitlocate``. stderr is never read (the boundary only counts
it), so failures are told apart by exit status and by a second, narrower
question (does the object exist?), never by parsing messages.

Paths from git are bytes; names that are not UTF-8 cannot be named in JSON
and are skipped (as the local-file walker does).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NamedTuple

from dcx.core import gitcmd
from dcx.core.workspace import DC_DIR, Workspace
from dcx.sources.gitlocate import clean_rel, find_git_dir, normalise_path

__all__ = ["MODE_FILE", "GitError", "Repo", "clean_rel", "find_git_dir", "normalise_path"]

MIN_GIT = gitcmd.MIN_GIT
LIST_CAP = (
    256 * 1024 * 1024
)  # bytes of ls-tree / diff-tree output: past it a repository is "too large"
SMALL_CAP = 1 << 20
READ_BATCH_ITEMS = 16384
ANCESTOR_WINDOW = (
    32  # first-parent commits listed with the ref: a cursor among them needs no merge-base
)
READ_BATCH_BYTES = 32 * 1024 * 1024
MODE_FILE = (b"100644", b"100755")
MODE_SYMLINK = b"120000"
MODE_SUBMODULE = b"160000"

GIT_ENV = gitcmd.env(
    {
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_SYSTEM": os.devnull,
        "HOME": os.devnull,  # no ~/.gitconfig to find even for a git that predates GIT_CONFIG_GLOBAL
        "XDG_CONFIG_HOME": os.devnull,
        "GIT_OPTIONAL_LOCKS": "0",
        "GIT_LITERAL_PATHSPECS": "1",
        "GIT_NO_REPLACE_OBJECTS": "1",
    }
)
GIT_FLAGS = ("--no-optional-locks", "--no-replace-objects", "--literal-pathspecs")

# reason codes (docs/sources.md lists each)
GIT_UNAVAILABLE = "git_unavailable"
GIT_TOO_OLD = "git_version_unsupported"
REPO_MISSING = "git_repository_missing"
REPO_CORRUPT = "git_repository_corrupt"
REPO_TOO_LARGE = "git_repository_too_large"
REF_MISSING = "git_ref_missing"
SHALLOW_PAST_CURSOR = "git_shallow_past_cursor"


class GitError(Exception):
    """A git question that could not be answered; ``reason_code`` is public, nothing else is."""

    def __init__(self, reason_code: str) -> None:
        super().__init__(reason_code)
        self.reason_code = reason_code


class GitTimeout(GitError):
    def __init__(self) -> None:
        super().__init__("scan_timeout")


class Entry(NamedTuple):
    """One difference between two filtered trees; ``old``/``new`` are blob ids or None (absent)."""

    rel: str  # relative to the locator's ``path``
    old: str | None
    new: str | None


class Counts(NamedTuple):
    submodules: int = 0
    symlinks: int = 0
    outside: int = 0  # names that would escape ``path`` (a crafted tree): refused


_SURROGATE_RE = re.compile(
    "[\udc80-\udcff]"
)  # in git output decoded with surrogateescape: a name that is not UTF-8


def resolve_repo(ws: Workspace, repo: str) -> Path:
    """The repository path of a locator (goal-root rules as for local-file), then its git dir."""
    raw = Path(os.path.expanduser(repo))
    root = ws.root.resolve()
    if raw.is_absolute():
        target = Path(os.path.realpath(raw))
    else:
        target = Path(os.path.realpath(root / raw))
        if target != root and root not in target.parents:
            raise GitError("locator_outside_root")
    dc = (root / DC_DIR).resolve()
    if target == dc or dc in target.parents:
        raise GitError("locator_inside_workspace")
    git_dir = find_git_dir(target) if target.is_dir() else None
    if git_dir is None:
        raise GitError(REPO_MISSING)
    return git_dir


_OID_RE = re.compile("[0-9a-f]{40}(?:[0-9a-f]{24})?")


def is_oid(value: str) -> bool:
    return _OID_RE.fullmatch(value) is not None


class Repo:
    """One repository's git directory, and the questions dcx asks it."""

    def __init__(self, git_dir: Path) -> None:
        self.git_dir = git_dir

    @property
    def shallow(self) -> bool:
        return (self.git_dir / "shallow").exists()

    def _run(
        self,
        args: list[str],
        deadline: float,
        *,
        stdin: bytes = b"",
        cap: int = SMALL_CAP,
        spool: bool = False,
    ) -> tuple[int, bytes]:
        """One git process; ``spool`` for a large answer written in many pieces (a whole tree,
        blobs): stdin and stdout in memory files, no wake-up here per piece git writes."""
        from dcx.core.process import run_bounded

        outcome = run_bounded(
            self._argv(args),
            timeout=self._remaining(deadline),
            stdin=stdin,
            extra_env=GIT_ENV,
            cwd=str(self.git_dir),
            cap=cap,
            spool=spool,
        )
        return self.answer(outcome)

    def start(self, args: list[str], deadline: float, *, stdin: bytes = b"", cap: int) -> Any:
        """Start one git process that runs unattended (its answer spooled); ``answer(started.finish())``."""
        from dcx.core.process import start

        return start(
            self._argv(args),
            timeout=self._remaining(deadline),
            stdin=stdin,
            extra_env=GIT_ENV,
            cwd=str(self.git_dir),
            cap=cap,
            spool=True,
        )

    def _argv(self, args: list[str]) -> list[str]:
        _require_git()
        return gitcmd.argv(args, flags=(f"--git-dir={self.git_dir}", *GIT_FLAGS))

    @staticmethod
    def _remaining(deadline: float) -> float:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise GitTimeout()
        return remaining

    @staticmethod
    def answer(outcome: Any) -> tuple[int, bytes]:
        """(exit code, stdout) of a finished git process, or the GitError its outcome means."""
        if outcome.status == "timeout":
            raise GitTimeout()
        if outcome.status == "spawn_failed":
            raise GitError(GIT_UNAVAILABLE)
        if outcome.status in ("output_too_large", "request_too_large"):
            raise GitError(REPO_TOO_LARGE)
        assert outcome.returncode is not None
        return outcome.returncode, outcome.stdout

    # -- refs and commits ----------------------------------------------------
    def resolve(self, ref: str, deadline: float) -> str:
        """The commit ``ref`` names now (one ref lookup)."""
        return self.resolve_with_ancestors(ref, deadline, depth=1)[0]

    def resolve_with_ancestors(
        self, ref: str, deadline: float, *, depth: int = ANCESTOR_WINDOW
    ) -> list[str]:
        """The commit ``ref`` names now, then up to ``depth - 1`` of its first-parent ancestors.

        One process answers both "where is the ref?" and, in the common case
        of a cursor a few commits behind, "does it descend from the cursor?"
        (``rev-list --first-parent``), so a scan after a change costs two git
        processes (this and the diff), not three.
        """
        code, out = self._run(
            [
                "rev-list",
                "--first-parent",
                f"--max-count={depth}",
                "--end-of-options",
                f"{ref}^{{commit}}",
                "--",
            ],
            deadline,
        )
        commits = out.decode("ascii", "replace").split()
        if code == 0 and commits and all(is_oid(c) for c in commits):
            return commits
        code, out = self._run(
            ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"], deadline
        )
        if code not in (0, 1):
            raise GitError(self._diagnose(deadline))
        if code == 0:
            raise GitError(REPO_CORRUPT)  # resolves, yet its history cannot be walked
        # the name does not resolve to a commit: a missing ref, or one whose objects are gone
        code, out = self._run(
            ["rev-parse", "--verify", "--quiet", "--end-of-options", ref], deadline
        )
        if code == 0 and out.strip():
            raise GitError(
                REPO_CORRUPT
                if not self.exists(out.decode("ascii", "replace").strip(), deadline)
                else REF_MISSING
            )
        raise GitError(REF_MISSING)

    def _diagnose(self, deadline: float) -> str:
        code, _ = self._run(["rev-parse", "--git-dir"], deadline)
        return REPO_CORRUPT if code == 0 else REPO_MISSING

    def exists(self, oid: str, deadline: float) -> bool:
        code, _ = self._run(["cat-file", "-e", "--end-of-options", oid], deadline)
        return code == 0

    def is_ancestor(self, old: str, new: str, deadline: float) -> bool | None:
        """True/False, or None when ``old`` is not in the repository (gone, or beyond a shallow cut)."""
        code, _ = self._run(["merge-base", "--is-ancestor", "--end-of-options", old, new], deadline)
        if code in (0, 1):
            return code == 0
        if not self.exists(f"{old}^{{commit}}", deadline):
            return None
        raise GitError(REPO_CORRUPT)

    # -- trees ---------------------------------------------------------------
    def list_tree(
        self, commit: str, prefix: str, match: Callable[[str], bool] | None, deadline: float
    ) -> tuple[list[Entry], Counts]:
        """Every regular file under ``prefix`` at ``commit`` (as added entries), sorted by path."""
        args = ["ls-tree", "-r", "-z", "--full-tree", "--end-of-options", commit]
        if prefix:
            args += ["--", prefix]
        code, out = self._run(args, deadline, cap=LIST_CAP, spool=True)
        if code != 0:
            raise GitError(REPO_CORRUPT)
        entries: list[Entry] = []
        counts = [0, 0, 0]
        text = out.decode("utf-8", "surrogateescape")
        if not text.isascii() and _SURROGATE_RE.search(text) is not None:
            # a name that is not UTF-8 somewhere: every record checked on its bytes
            for raw in out.split(b"\0"):
                raw_head, _, raw_path = raw.partition(b"\t")
                raw_parts = raw_head.split(b" ")
                if len(raw_parts) != 3:
                    continue
                found_rel = self._rel(raw_path, prefix, raw_parts[0], counts, match)
                if found_rel is not None:
                    entries.append(Entry(found_rel, None, raw_parts[2].decode("ascii")))
        else:
            # the common case, kept tight: 100k records are parsed in a fraction of ls-tree's own time
            cut = len(prefix) + 1 if prefix else 0
            new_entry = tuple.__new__
            append = entries.append
            for record in text.split("\0"):
                if not record:
                    continue
                head, _, path = record.partition("\t")
                mode = head[:6]
                # under ``prefix/``, or ``prefix`` itself when the locator names one file
                rel = (path[cut:] if len(path) >= cut else path.rsplit("/", 1)[-1]) if cut else path
                if (
                    "/." in rel or "//" in rel or rel[:1] in ("", ".", "/") or rel[-1] == "/"
                ) and not clean_rel(rel):
                    counts[2] += 1
                    continue
                if match is not None and not match(rel):
                    continue
                if mode == "100644" or mode == "100755":
                    append(new_entry(Entry, (rel, None, head[12:])))
                elif mode == "160000":
                    counts[0] += 1
                elif mode == "120000":
                    counts[1] += 1
        entries.sort()
        return entries, Counts(*counts)

    def diff_trees(
        self, old: str, new: str, prefix: str, match: Callable[[str], bool] | None, deadline: float
    ) -> tuple[list[Entry], Counts]:
        """The differences of regular files under ``prefix`` from ``old`` to ``new``, sorted by path.

        Renames are not detected (``--no-renames``): a rename reaches the
        receipts as a deletion of the old path and an addition of the new
        one, since changes are keyed by path. A file that became a symlink or
        a submodule is a deletion (the file is gone), and the reverse an
        addition.
        """
        args = [
            "diff-tree",
            "-r",
            "-z",
            "--no-renames",
            "--no-ext-diff",
            "--no-textconv",
            "--full-index",
            "--end-of-options",
            old,
            new,
        ]
        if prefix:
            args += ["--", prefix]
        code, out = self._run(args, deadline, cap=LIST_CAP)
        if code != 0:
            raise GitError(REPO_CORRUPT)
        fields = out.split(b"\0")
        records = []
        i = 0
        while i + 1 < len(fields):
            head, raw_path = fields[i], fields[i + 1]
            i += 2
            if not head.startswith(b":"):
                continue
            parts = head[1:].split(b" ")
            if len(parts) >= 5:
                records.append((parts[0], parts[1], parts[2], parts[3], raw_path))
        return self._classify(records, prefix, match)

    def first_parent_delta(
        self, ref: str, base: str, prefix: str, match: Callable[[str], bool] | None, deadline: float
    ) -> tuple[str, list[Entry], Counts] | None:
        """(the commit ``ref`` names, the differences from ``base`` to it) in ONE git process, or None.

        ``git log --first-parent --raw`` lists the commits from the ref back
        to ``base`` (at most ``ANCESTOR_WINDOW``) with each one's changes
        against its first parent; when that chain ends on ``base``, the ref
        descends from it and composing the per-commit changes gives exactly
        the tree-to-tree difference ``diff_trees`` would (first old side,
        last new side; a path back where it was is no change). Anything else
        — ``base`` not on the first-parent chain within the window, the ref
        at or behind ``base``, an error — is None, and the caller asks the
        usual two questions. Every option that could change this porcelain
        command's output is pinned (the repository's own config applies to
        it; no global or system config is read).
        """
        args = [
            "-c",
            "log.showSignature=false",
            "-c",
            "diff.relative=false",
            "-c",
            "log.follow=false",
            "-c",
            "diff.ignoreSubmodules=none",
            "-c",
            "core.quotePath=false",
            "-c",
            "log.showRoot=true",
            "log",
            "-z",
            "--first-parent",
            "--diff-merges=first-parent",
            "--raw",
            "--no-renames",
            "--no-abbrev",
            "--full-index",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "--no-mailmap",
            "--full-history",
            "--sparse",
            "--no-decorate",
            "--no-notes",
            f"--max-count={ANCESTOR_WINDOW}",
            "--format=tformat:%H %P",
            "--end-of-options",
            f"{ref}^{{commit}}",
            f"^{base}",
            "--",
        ]
        if prefix:
            args.append(prefix)
        code, out = self._run(args, deadline, cap=LIST_CAP)
        if code != 0:
            return None
        commits: list[list[str]] = []
        changed: dict[
            bytes, list[bytes]
        ] = {}  # path -> [first old mode, first old id, last new mode, last new id]
        fields = out.split(b"\0")
        i = 0
        while i < len(fields):
            field = fields[i].lstrip(b"\n")
            i += 1
            if not field:
                continue
            if field.startswith(b":"):
                parts = field[1:].split(b" ")
                if len(parts) < 5 or i >= len(fields) or not commits:
                    return None
                raw_path = fields[i]
                i += 1
                seen = changed.get(raw_path)
                if (
                    seen is None
                ):  # the log runs backwards in time: this is the latest change of the path
                    changed[raw_path] = [parts[0], parts[2], parts[1], parts[3]]
                else:
                    seen[0], seen[1] = (
                        parts[0],
                        parts[2],
                    )  # an earlier change: its old side is the older
                continue
            ids = field.decode("ascii", "replace").split(" ")
            if not ids or not all(is_oid(c) for c in ids):
                return None
            if commits and (len(commits[-1]) < 2 or commits[-1][1] != ids[0]):
                return None  # not one first-parent chain
            commits.append(ids)
        if not commits or len(commits[-1]) < 2 or commits[-1][1] != base:
            return None  # the chain does not reach the cursor's commit within the window
        records = [
            (old_mode, new_mode, old_oid, new_oid, raw_path)
            for raw_path, (old_mode, old_oid, new_mode, new_oid) in changed.items()
            if (old_mode, old_oid) != (new_mode, new_oid)
        ]
        entries, counts = self._classify(records, prefix, match)
        return commits[0][0], entries, counts

    def _classify(
        self,
        records: Iterable[tuple[bytes, bytes, bytes, bytes, bytes]],
        prefix: str,
        match: Callable[[str], bool] | None,
    ) -> tuple[list[Entry], Counts]:
        """Entries and counts of raw diff records (old mode, new mode, old id, new id, path)."""
        entries: list[Entry] = []
        counts = [0, 0, 0]
        for old_mode, new_mode, old_oid, new_oid, raw_path in records:
            old_side = old_oid.decode("ascii") if old_mode in MODE_FILE else None
            new_side = new_oid.decode("ascii") if new_mode in MODE_FILE else None
            if old_side is None and new_side is None:
                mode = new_mode if new_mode not in (b"000000",) else old_mode
                self._rel(raw_path, prefix, mode, counts, match)  # counted, never reported
                continue
            rel = self._rel(raw_path, prefix, MODE_FILE[0], counts, match)
            if rel is None:
                continue
            if new_mode in (MODE_SYMLINK, MODE_SUBMODULE):
                counts[0 if new_mode == MODE_SUBMODULE else 1] += 1
            if old_side != new_side:
                entries.append(Entry(rel, old_side, new_side))
        entries.sort(key=lambda e: e.rel)
        return entries, Counts(*counts)

    @staticmethod
    def _rel(
        raw_path: bytes,
        prefix: str,
        mode: bytes,
        counts: list[int],
        match: Callable[[str], bool] | None,
    ) -> str | None:
        """The path relative to ``prefix`` of a regular file dcx may report, else None (counted)."""
        try:
            path = raw_path.decode("utf-8")
        except UnicodeDecodeError:
            return None  # not representable in JSON
        if prefix:
            if path == prefix:
                rel = path.rsplit("/", 1)[-1]
            elif path.startswith(prefix + "/"):
                rel = path[len(prefix) + 1 :]
            else:
                counts[2] += 1
                return None
        else:
            rel = path
        if not clean_rel(rel):
            counts[2] += 1
            return None
        if match is not None and not match(rel):
            return None
        if mode == MODE_SUBMODULE:
            counts[0] += 1
            return None
        if mode == MODE_SYMLINK:
            counts[1] += 1
            return None
        if mode not in MODE_FILE:
            return None
        return rel

    def entry_at(self, commit: str, path: str, deadline: float) -> tuple[bytes, str] | None:
        """(mode, blob id) of one path at ``commit``, or None when it is not there."""
        code, out = self._run(
            ["ls-tree", "-z", "--full-tree", "--end-of-options", commit, "--", path], deadline
        )
        if code != 0:
            raise GitError(REPO_CORRUPT)
        for record in out.split(b"\0"):
            head, _, raw = record.partition(b"\t")
            if raw == path.encode("utf-8"):
                parts = head.split(b" ")
                if len(parts) == 3:
                    return parts[0], parts[2].decode("ascii")
        return None

    # -- blobs ---------------------------------------------------------------


_VERSION_OK: bool | None = None  # asked once per process


def _require_git() -> None:
    """A git too old to honour dcx's settings never runs in a source repository (SPEC §3.7)."""
    global _VERSION_OK
    if _VERSION_OK is None:
        version = git_version(time.monotonic() + 10.0)
        if version is None:
            raise GitError(GIT_UNAVAILABLE)
        _VERSION_OK = not gitcmd.too_old(version)
    if not _VERSION_OK:
        raise GitError(GIT_TOO_OLD)


def git_version(deadline: float) -> tuple[int, ...] | None:
    """git's version, or None when no git can be run."""
    from dcx.core.process import run_bounded

    outcome = run_bounded(
        ["git", "--version"], timeout=max(0.1, deadline - time.monotonic()), extra_env=GIT_ENV
    )
    if not outcome.ok:
        return None
    return gitcmd.parse_version(outcome.stdout.decode("ascii", "replace"))


def locator_filter(locator: dict[str, Any]) -> tuple[str | None, Callable[[str], bool] | None]:
    """(normalised path or None if it escapes, include/exclude matcher)."""
    from dcx.core.walk import glob_matcher

    prefix = normalise_path(str(locator.get("path", "")))
    return prefix, glob_matcher(
        tuple(locator.get("include") or ()), tuple(locator.get("exclude") or ())
    )
