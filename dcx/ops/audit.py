"""``dcx audit``: look for private values in every public file (SPEC §9).

What counts as private here: the values of ``dcx.state.privacy`` (the list the
public writers refuse too: locators and a git source's repository, git refs,
the goal root, cursor values and the commit ids in git cursors, the key, the
private values behind minted refs, provider and adapter config strings),
found with one Aho-Corasick pass per string, and runs of 12 or more
consecutive words of source text (local files and git blobs). Every public
string — record keys too — is also run through the one public-safety
detector (§3.4), and so is every file name below ``.decision-context/`` (a
decision id names its index file). Findings name the file and the field —
never the value: a file whose name is unsafe is shown as ``<file name>``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dcx.core import public
from dcx.core.errors import ExitCode
from dcx.core.fsutil import foreign_entries, is_temp, read_bytes
from dcx.core.result import Result
from dcx.core.workspace import DC_DIR, PRIVATE_NAMES, Workspace

SHINGLE = 12
PUBLIC_SYMLINK = "public_symlink: a link or special file; dcx never follows or reads it"

WORD_RE = re.compile(r"[^\W_]+", re.UNICODE)


def public_files(ws: Workspace) -> Iterator[Path]:
    """Every regular file of the public tree; links and special files are never opened (they are
    findings of their own, ``public_symlink``)."""
    for directory, dirnames, filenames in os.walk(ws.dc):
        here = Path(directory)
        if here == ws.dc:
            dirnames[:] = [d for d in dirnames if d not in PRIVATE_NAMES]
        dirnames[:] = sorted(d for d in dirnames if not (here / d).is_symlink())
        for name in sorted(filenames):
            path = here / name
            if here == ws.dc and name in PRIVATE_NAMES:
                continue
            if name.endswith(".lock") or is_temp(path) or not stat.S_ISREG(path.lstat().st_mode):
                continue
            yield path


def _strings(value: Any, path: str, check: Any) -> Iterator[tuple[str, str]]:
    """(key path, string) of every string in a record: values, and keys too (a key is text).

    A key that is itself unsafe is named ``<key N>`` (its place in its object) in
    every path, so a finding never prints the value it found.
    """
    if isinstance(value, dict):
        for index, (key, item) in enumerate(value.items()):
            name = str(key)
            if check(name) is not None:
                name = f"<key {index}>"
                yield f"{path}.{name}" if path else name, str(key)
            yield from _strings(item, f"{path}.{name}" if path else name, check)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, f"{path}[{index}]", check)
    elif isinstance(value, str):
        yield path, value


class Secrets:
    """The private values this workspace knows, and a test for each public string."""

    def __init__(self, ws: Workspace) -> None:
        from dcx.state.privacy import collect

        self.private = collect(ws)
        self.values = self.private.values
        self.shingles: set[tuple[str, ...]] = set()
        self._source_text(ws)
        self._seen: dict[str, str | None] = {}

    def _source_text(self, ws: Workspace) -> None:
        from dcx.core.errors import DcxError
        from dcx.core.walk import LocatorError, walk
        from dcx.state.profile import load_registry

        try:
            registry = load_registry(ws)
        except DcxError:
            return
        for source in registry.sources:
            if not source.enabled:
                continue
            if source.locator.get("repo") is not None:
                self._git_text(ws, source)
                continue
            if "command" in source.locator:
                continue  # an mcp server's resources are not started for an audit
            try:
                result = walk(
                    ws,
                    source.source_id,
                    source.locator,
                    max_scan_bytes=4 * 1024 * 1024,
                    save_cache=False,
                )  # audit reads; it writes nothing, not even the stat cache
            except (LocatorError, OSError):
                continue
            for rel in result.files:
                try:
                    text = result.abspath(rel).read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError):
                    continue
                self.shingles.update(_windows(text))

    def _git_text(self, ws: Workspace, source: Any) -> None:
        import time

        from dcx.sources.base import SourceUnavailable
        from dcx.sources.git import current_files, read_texts

        if not source.enabled:
            return
        deadline = time.monotonic() + 120
        try:
            loc, _commit, entries = current_files(ws, source, deadline)
            blobs = read_texts(loc, [e.new for e in entries if e.new], 4 * 1024 * 1024, deadline)
        except SourceUnavailable:
            return
        for blob in blobs.values():
            if blob.data is not None:
                with contextlib.suppress(UnicodeDecodeError):
                    self.shingles.update(_windows(blob.data.decode("utf-8")))

    def check(self, text: str) -> str | None:
        """Why ``text`` may not be in a public file, or None; judged once per distinct string
        (goal ids, times, refs and flags repeat across packets)."""
        if text in self._seen:
            return self._seen[text]
        problem = self._seen[text] = self._check(text)
        return problem

    def _check(self, text: str) -> str | None:
        label = self.private.find(text)
        if label is not None:
            return label
        if (
            self.shingles
            and len(text) >= 2 * SHINGLE - 1
            and any(w in self.shingles for w in _windows(text))
        ):
            return f"a run of {SHINGLE}+ words of source text"
        problem = public.unsafe_class(text)
        return f"unsafe text ({problem.replace('_', ' ')})" if problem else None


def _windows(text: str) -> Iterator[tuple[str, ...]]:
    words = [w.lower() for w in WORD_RE.findall(text)]
    for start in range(len(words) - SHINGLE + 1):
        yield tuple(words[start : start + SHINGLE])


def _findings(path: Path, secrets: Secrets, *, signed: bool = False) -> Iterator[tuple[str, str]]:
    """``signed``: a statements or signer file, whose own signature fields are exempt (SPEC §18)."""
    data = read_bytes(path)
    text = data.decode("utf-8", errors="replace")
    if path.suffix == ".json" or (signed and path.suffix != ".jsonl"):
        try:
            for field, value in _strings(json.loads(text), "", secrets.check):
                if signed and public.is_signature_value(field, value):
                    continue
                if (problem := secrets.check(value)) is not None:
                    yield field, problem
            return
        except ValueError:
            pass
    if path.suffix == ".jsonl":
        for number, line in enumerate(text.splitlines(), start=1):
            try:
                record = json.loads(line)
            except ValueError:
                record = line
            where = f"line {number}"
            for field, value in _strings(record, where, secrets.check):
                if signed and public.is_signature_value(field.removeprefix(where + "."), value):
                    continue
                if (problem := secrets.check(value)) is not None:
                    yield field, problem
        return
    for number, line in enumerate(text.splitlines(), start=1):
        problem = secrets.check(line)
        # plain files hold prose and comments: only private values count there
        if problem is not None and not problem.startswith("unsafe text"):
            yield f"line {number}", problem


def _named(ws: Workspace, path: Path, secrets: Secrets) -> tuple[str, str | None]:
    """The file as a finding names it, and why its own name may not be public (a decision id
    becomes ``decisions/<id>.jsonl``: SPEC §3.4 v4). An unsafe name is shown as ``<file name>``."""
    rel = path.relative_to(ws.dc)
    stem = rel.name.removesuffix(".jsonl").removesuffix(".json")
    for part in (*rel.parts[:-1], stem):
        problem = secrets.check(part)
        if problem is not None:
            return ws.rel(path.parent / "<file name>"), problem
    return ws.rel(path), None


def audit(*, ws: Workspace) -> Result:
    public.bind_goal_root(str(ws.root.resolve()))
    public.bind_private_values(None)  # audit names which private value matched, itself
    secrets = Secrets(ws)
    findings = []
    scanned = 0
    for rel in foreign_entries(ws.dc, skip=PRIVATE_NAMES):
        findings.append({"file": rel, "field": "(file)", "problem": PUBLIC_SYMLINK})
    for path in public_files(ws):
        scanned += 1
        shown, problem = _named(ws, path, secrets)
        if problem is not None:
            findings.append({"file": shown, "field": "(file name)", "problem": problem})
        signed = path == ws.statements or ws.signers in path.parents
        for field, problem in _findings(path, secrets, signed=signed):
            findings.append({"file": shown, "field": field, "problem": problem})
    data = {
        "files_scanned": scanned,
        "private_values_known": len(secrets.values),
        "findings": findings,
        "workspace": DC_DIR,
    }
    if findings:
        return Result("audit", data, status="error", exit_code=ExitCode.REFUSED)
    return Result("audit", data)
