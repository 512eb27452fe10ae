"""A built-in source's files as they are now: what the bm25 index is fed (SPEC §6.3).

``listing(ws, source, …)`` answers, for one local-file or git source, every
file it holds with its revision, and a ``read`` that returns the bytes of the
files asked for. The indexer (``dcx.providers.bm25_indexer``) receives these
listings from its caller and never looks into a source itself.

- local-file: the locator walked with the walker and its stat cache; a file is
  read once, and its revision is that of the bytes read (not what the walk saw);
- git: the regular files at the ref's current commit (``ls-tree``), blob ids as
  revisions, read in batches (a blob that does not re-hash is left out).

``read`` leaves out a file that could not be read now (it is indexed when it
reads); a file over ``max_read_bytes`` comes back with ``data=None``. When the
source itself stops answering mid-read (git), ``read`` returns the reason code
instead of the files.

``CurrentFiles.read(source, path)`` is the exact read of one file as it is now,
for the assembler's authority checks: a local-file source's file (inside the
locator and its include/exclude globs, never under ``.decision-context/`` or
``.git/``), or the blob at a git source's ref's current commit (resolved once
per run), UTF-8 and within ``max_read_bytes``; else None.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from dcx.core.walk import (
    ALWAYS_EXCLUDED,
    LocatorError,
    glob_matcher,
    resolve_locator,
    revision_of,
    walk,
)
from dcx.core.workspace import Workspace
from dcx.state.profile import Source

GIT_LISTING_SECONDS = 600.0  # a whole-tree listing and read of one git source


class FileBody(NamedTuple):
    revision: str  # of the bytes read (local-file), or the blob id (git)
    data: bytes | None  # None: over max_read_bytes, not read


class Listing(NamedTuple):
    revisions: Mapping[str, str]  # every file the source holds now: rel -> revision
    read: Callable[[list[str]], dict[str, FileBody] | str]  # a str: the source became unavailable
    hashed: int = (
        0  # files the walk read to learn their revision (the stat cache answered the rest)
    )
    skipped_oversize: int = 0  # files the walk did not hash (over max_scan_bytes)
    lists_skipped: bool = False  # the index report names this source's unsearchable files
    unavailable: str | None = None  # a reason code: the source cannot be listed now


def listing(
    ws: Workspace,
    source: Source,
    *,
    max_scan_bytes: int,
    max_read_bytes: int,
    progress: Callable[[int], None] | None = None,
) -> Listing:
    """The source's current files (see the module doc); never raises for an unreadable source."""
    if source.locator.get("repo") is not None:
        return _git_listing(ws, source, max_read_bytes)
    if "command" in source.locator:
        return _mcp_listing(ws, source, max_scan_bytes, max_read_bytes)
    tick = (lambda done, total=None: progress(done)) if progress else None
    try:
        walked = walk(
            ws, source.source_id, source.locator, max_scan_bytes=max_scan_bytes, progress=tick
        )
    except LocatorError as exc:
        return Listing({}, lambda rels: {}, unavailable=exc.reason_code)
    revisions = {rel: entry.revision for rel, entry in walked.files.items()}

    def read(rels: list[str]) -> dict[str, FileBody] | str:
        out: dict[str, FileBody] = {}
        for rel in rels:
            entry = walked.files[rel]
            if entry.size > max_read_bytes:
                out[rel] = FileBody(entry.revision, None)
                continue
            data = _read(walked.abspath(rel), max_read_bytes)
            if data is None:
                continue  # vanished or unreadable since the walk
            out[rel] = (
                FileBody(entry.revision, None)
                if len(data) > max_read_bytes
                else FileBody(revision_of(data), data)
            )
        return out

    return Listing(
        revisions,
        read,
        hashed=walked.hashed,
        skipped_oversize=walked.skipped_oversize,
        lists_skipped=True,
    )


def _read(path: Path, limit: int) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read(limit + 1)
    except OSError:
        return None


def _git_listing(ws: Workspace, source: Source, max_read_bytes: int) -> Listing:
    from dcx.sources.base import SourceUnavailable
    from dcx.sources.git import current_files, read_texts

    deadline = time.monotonic() + GIT_LISTING_SECONDS
    try:
        loc, _commit, entries = current_files(ws, source, deadline)
    except SourceUnavailable as exc:
        return Listing({}, lambda rels: {}, unavailable=exc.reason_code)
    revisions = {e.rel: e.new for e in entries if e.new}  # current files: each has a blob

    def read(rels: list[str]) -> dict[str, FileBody] | str:
        try:
            blobs = read_texts(loc, [revisions[rel] for rel in rels], max_read_bytes, deadline)
        except SourceUnavailable as exc:
            return exc.reason_code
        out: dict[str, FileBody] = {}
        for rel in rels:
            blob = blobs.get(revisions[rel])
            if blob is None or blob.missing:
                continue  # unreadable now: indexed when it reads
            out[rel] = FileBody(blob.oid, blob.data)
        return out

    return Listing(revisions, read)


def _mcp_listing(
    ws: Workspace, source: Source, max_scan_bytes: int, max_read_bytes: int
) -> Listing:
    """An mcp source's text resources now: one session lists and reads them all (SPEC §15.1)."""
    from dcx.sources.base import SourceUnavailable
    from dcx.sources.mcp_source import McpProvider

    provider = McpProvider(ws, source.provider_id, {}, max_scan_bytes=max_scan_bytes)
    try:
        found = provider.current(source, time.monotonic() + GIT_LISTING_SECONDS, max_read_bytes)
    except SourceUnavailable as exc:
        return Listing({}, lambda rels: {}, unavailable=exc.reason_code)
    bodies = {uri: FileBody(revision, data) for uri, (revision, data) in found.items()}
    return Listing(
        {uri: body.revision for uri, body in bodies.items()},
        lambda rels: {rel: bodies[rel] for rel in rels if rel in bodies},
    )


class FileText(NamedTuple):
    revision: str
    text: str


class CurrentFiles:
    """Exact reads of single files as they are now (see the module doc), for one run."""

    def __init__(self, ws: Workspace, *, max_read_bytes: int, timeout_seconds: float) -> None:
        self.ws = ws
        self.max_read_bytes = max_read_bytes
        self.timeout_seconds = timeout_seconds
        self._commits: dict[
            str, Any
        ] = {}  # git source id -> (located source, commit read this run)

    def read(self, source: Source, path: str) -> FileText | None:
        if source.locator.get("repo") is not None:
            return self._read_git(source, path)
        if "command" in source.locator:
            return self._read_mcp(source, path)
        try:
            loc = resolve_locator(self.ws, source.locator)
        except LocatorError:
            return None
        if loc.is_file:
            if path != loc.path.name:
                return None
            target = loc.path
        else:
            target = Path(os.path.realpath(loc.path / path))
            inside = loc.path in target.parents and not (
                set(Path(path).parts) & set(ALWAYS_EXCLUDED)
            )
            match = glob_matcher(loc.include, loc.exclude)
            if not inside or (match is not None and not match(path)):  # no globs: the whole folder
                return None
        limit = self.max_read_bytes
        try:
            with open(target, "rb") as handle:
                data = handle.read(limit + 1)  # one read: what is hashed is what is compared
        except OSError:
            return None
        if len(data) > limit:
            return None
        try:
            return FileText(revision_of(data), data.decode("utf-8"))
        except UnicodeDecodeError:
            return None

    def _read_mcp(self, source: Source, uri: str) -> FileText | None:
        """One ``resources/read`` of the URI now (a session of its own), hashed as read."""
        from dcx.sources.base import SourceUnavailable
        from dcx.sources.mcp_source import McpProvider

        provider = McpProvider(self.ws, source.provider_id, {}, max_scan_bytes=self.max_read_bytes)
        try:
            found = provider.read_now(source, uri, time.monotonic() + self.timeout_seconds)
        except SourceUnavailable:
            return None
        if found is None or len(found[1]) > self.max_read_bytes:
            return None
        try:
            return FileText(found[0], found[1].decode("utf-8"))
        except UnicodeDecodeError:
            return None

    def _read_git(self, source: Source, path: str) -> FileText | None:
        """The blob at the git source's ref's current commit (resolved once per run), re-hashed."""
        from dcx.sources.base import SourceUnavailable
        from dcx.sources.git import GitProvider, read_texts
        from dcx.sources.gitrepo import MODE_FILE, GitError, clean_rel

        if not clean_rel(path):
            return None
        deadline = time.monotonic() + self.timeout_seconds
        try:
            if source.source_id not in self._commits:
                loc = GitProvider(self.ws, source.provider_id, {}).locate(source)
                self._commits[source.source_id] = (loc, loc.repo.resolve(loc.ref, deadline))
            loc, commit = self._commits[source.source_id]
            if loc.match is not None and not loc.match(path):
                return None
            found = loc.repo.entry_at(
                commit, f"{loc.prefix}/{path}" if loc.prefix else path, deadline
            )
            if found is None or found[0] not in MODE_FILE:
                return None
            blob = read_texts(loc, [found[1]], self.max_read_bytes, deadline).get(found[1])
        except (SourceUnavailable, GitError):
            return None
        if blob is None or blob.data is None:
            return None
        try:
            return FileText(blob.oid, blob.data.decode("utf-8"))
        except UnicodeDecodeError:
            return None
