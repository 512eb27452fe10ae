"""``dcx audit``: look for private values in every public file (SPEC §9).

What counts as private here: the resolved absolute locators (a git source's
repository) and the relative ones of at least two segments and eight
characters, git refs, the goal root's absolute path, cursor values (and the
commit ids in git cursors), the key, the private values behind minted refs (paths,
revisions, provider resource refs), string values of provider and adapter
config, and runs of 12 or more consecutive words of source text. Every public
string is also run through the public-safety detector (§3.4). Findings name
the file and the field — never the value.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dcx import public
from dcx.errors import ExitCode
from dcx.fsutil import is_temp
from dcx.result import Result
from dcx.workspace import DC_DIR, Workspace

SHINGLE = 12
PRIVATE_NAMES = {"private", "profile.toml", "sources.toml"}
WORD_RE = re.compile(r"[^\W_]+", re.UNICODE)


def public_files(ws: Workspace) -> Iterator[Path]:
    for directory, dirnames, filenames in os.walk(ws.dc):
        here = Path(directory)
        if here == ws.dc:
            dirnames[:] = [d for d in dirnames if d not in PRIVATE_NAMES]
        dirnames.sort()
        for name in sorted(filenames):
            path = here / name
            if here == ws.dc and name in PRIVATE_NAMES:
                continue
            if name.endswith(".lock") or is_temp(path):
                continue
            yield path


def _strings(value: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, f"{path}[{index}]")
    elif isinstance(value, str):
        yield path, value


def _config_strings(value: Any) -> Iterator[str]:
    for _, text in _strings(value, ""):
        if len(text) >= 8:
            yield text


class Secrets:
    """The private values this workspace knows, and a test for each public string."""

    def __init__(self, ws: Workspace) -> None:
        self.values: dict[str, str] = {}  # value -> label
        self.shingles: set[tuple[str, ...]] = set()
        self._collect(ws)

    def add(self, value: str | None, label: str) -> None:
        if value and len(value) >= 8:
            self.values.setdefault(value, label)

    def _collect(self, ws: Workspace) -> None:
        from dcx.errors import DcxError
        from dcx.profile import load_profile, load_registry

        self.add(str(ws.root.resolve()), "goal root path")
        with contextlib.suppress(OSError):
            self.add(ws.key_path.read_bytes().hex(), "workspace key")
        try:
            registry = load_registry(ws)
            profile = load_profile(ws)
        except DcxError:
            registry, profile = None, None
        if profile is not None:
            for text in _config_strings(profile.context_provider.config):
                self.add(text, "provider config value")
            if profile.context_provider.scope_ref:
                self.add(profile.context_provider.scope_ref, "scope ref")
        if registry is not None:
            for binding in registry.bindings:
                for text in _config_strings(binding.config):
                    self.add(text, "adapter config value")
            for source in registry.sources:
                raw = source.locator.get("repo") or source.locator["path"]
                self.add(os.path.realpath(ws.root / raw), "locator")
                if len(raw) >= 8 and len(Path(raw).parts) >= 2:
                    self.add(raw, "locator")
                if source.locator.get("repo") is not None:
                    self.add(source.locator["ref"], "git ref")
                    self._git_text(ws, source)
                else:
                    self._source_text(ws, source)
        try:
            cursors = json.loads(ws.cursors.read_bytes()).get("cursors", {})
            for value in cursors.values():
                self.add(value, "cursor value")
                if isinstance(value, str) and value.startswith("git:"):  # the commit ids inside it
                    for part in value.split(":")[1:]:
                        if len(part) in (40, 64):
                            self.add(part, "git commit id")
        except (OSError, ValueError, AttributeError):
            pass
        from dcx.refmap import all_private_values

        for _, fields in all_private_values(ws):
            for field in fields[1:]:  # fields[0] is a source id or provider name: public tokens
                if isinstance(field, str):
                    self.add(field, "private value behind an opaque ref")

    def _source_text(self, ws: Workspace, source: Any) -> None:
        from dcx.sources.walk import LocatorError, walk

        if not source.enabled:
            return
        try:
            result = walk(ws, source.source_id, source.locator, max_scan_bytes=4 * 1024 * 1024)
        except (LocatorError, OSError):
            return
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
        for value, label in self.values.items():
            if value in text:
                return label
        if self.shingles and any(window in self.shingles for window in _windows(text)):
            return f"a run of {SHINGLE}+ words of source text"
        problem = public.unsafe_class(text)
        return f"unsafe text ({problem.replace('_', ' ')})" if problem else None


def _windows(text: str) -> Iterator[tuple[str, ...]]:
    words = [w.lower() for w in WORD_RE.findall(text)]
    for start in range(len(words) - SHINGLE + 1):
        yield tuple(words[start : start + SHINGLE])


def _findings(path: Path, secrets: Secrets) -> Iterator[tuple[str, str]]:
    data = path.read_bytes()
    text = data.decode("utf-8", errors="replace")
    if path.suffix == ".json":
        try:
            for field, value in _strings(json.loads(text), ""):
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
            for field, value in _strings(record, f"line {number}"):
                if (problem := secrets.check(value)) is not None:
                    yield field, problem
        return
    for number, line in enumerate(text.splitlines(), start=1):
        problem = secrets.check(line)
        # plain files hold prose and comments: only private values count there
        if problem is not None and not problem.startswith("unsafe text"):
            yield f"line {number}", problem


def audit(*, ws: Workspace) -> Result:
    public.bind_goal_root(str(ws.root.resolve()))
    secrets = Secrets(ws)
    findings = []
    scanned = 0
    for path in public_files(ws):
        scanned += 1
        for field, problem in _findings(path, secrets):
            findings.append({"file": ws.rel(path), "field": field, "problem": problem})
    data = {"files_scanned": scanned, "private_values_known": len(secrets.values),
            "findings": findings, "workspace": DC_DIR}
    if findings:
        return Result("audit", data, status="error", exit_code=ExitCode.REFUSED)
    return Result("audit", data)
