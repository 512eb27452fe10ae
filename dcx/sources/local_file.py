"""The built-in ``local-file`` source adapter (SPEC §5.3).

- ``scan`` walks the locator (walker + stat cache), diffs the current files
  against the tree the **committed** cursor names, and reports added,
  modified and deleted files in path order, at most ``limit``. The proposed
  cursor is the committed tree with exactly the reported items applied, so a
  capped scan advances only over what it reported and the rest stays for
  later; uncapped, that is the current tree. A baseline (``adopt``) proposes
  the whole current tree whatever the cap, listing the first ``limit`` items
  and counting the rest (``adopted_unlisted_count``). Files present but not hashed
  (over ``max_scan_bytes``, unreadable) keep their committed entry: skipping a
  file never reads as deleting it.
- ``exact_read`` re-reads one item (at most ``max_bytes``), re-hashes it and
  returns its text only if the revision still matches. A changed file fails
  ``exact_read_revision_mismatch``; I/O errors and timeouts fail too (all
  transient: the cursor is kept). Binary content, a file over ``max_bytes``
  and a deletion seen again are terminal outcomes, recorded and absorbable.

Scanning or reading never marks anything absorbed; only the commit path
writes cursors.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from dcx.core import trees
from dcx.core.sweep import HashDeadline
from dcx.core.walk import (
    LocatorError,
    WalkTimeout,
    glob_matcher,
    hash_file,
    resolve_locator,
    revision_of,
    walk,
)
from dcx.core.workspace import Workspace
from dcx.sources.base import (
    COMPLETED,
    DELETED,
    NO_CHANGE,
    PROVIDER_CONFIGURATION_FAILED,
    READ_IO_ERROR,
    READ_MISMATCH,
    READ_NOT_TEXT,
    READ_OVERSIZE,
    READ_TIMEOUT,
    SCAN_TIMEOUT,
    VERIFIED,
    Health,
    ReadResult,
    ScanItem,
    ScanResult,
    ScanTelemetry,
    SourceUnavailable,
    failed_read,
)
from dcx.state.profile import Source

ADAPTER = "local-file"
VERSION = "1"


class LocalFileProvider:
    """One ``local-file`` binding. ``progress(source_id)`` may return a per-file callback."""

    version: str | None = VERSION

    def __init__(
        self,
        ws: Workspace,
        provider_id: str,
        config: dict[str, Any],
        *,
        max_scan_bytes: int,
        progress: Callable[[str], Callable[[int], None] | None] | None = None,
        persist: bool = True,
    ) -> None:
        if config:
            raise SourceUnavailable(
                PROVIDER_CONFIGURATION_FAILED
            )  # local-file takes no config keys
        self.ws = ws
        self.provider_id = provider_id
        self.max_scan_bytes = max_scan_bytes
        self.progress = progress
        self.persist = persist  # False: compute cursors, write no tree map or cache (show-content)

    def _tree(self, entries: Any, digest: str | None = None) -> str:
        if self.persist:
            return trees.store_tree(self.ws, entries, digest)
        return trees.cursor_of(digest or trees.tree_digest(entries))

    def health(self) -> Health:
        return Health("healthy")

    # -- scan ----------------------------------------------------------------
    adopts_whole_state = True  # scan(adopt=True): one walk proposes the whole current tree

    def scan(
        self,
        source: Source,
        after_cursor: str | None,
        limit: int,
        deadline: float,
        observed_at: str,
        *,
        adopt: bool = False,
    ) -> ScanResult:
        if after_cursor is not None:
            try:
                committed_digest = trees.digest_of(after_cursor)
            except trees.TreeError as exc:
                raise SourceUnavailable(exc.reason_code) from None
        callback = self.progress(source.source_id) if self.progress else None
        try:
            walked = walk(
                self.ws,
                source.source_id,
                source.locator,
                max_scan_bytes=self.max_scan_bytes,
                deadline=deadline,
                progress=callback,
                digest=True,
                save_cache=self.persist,
            )
        except LocatorError as exc:
            raise SourceUnavailable(exc.reason_code) from None
        except WalkTimeout:
            raise SourceUnavailable(SCAN_TIMEOUT) from None
        telemetry = ScanTelemetry(
            skipped_outside_locator=walked.skipped_outside_locator,
            skipped_oversize=walked.skipped_oversize,
            hashed=walked.hashed,
            file_count=len(walked.files),
        )
        if after_cursor is not None and walked.digest == committed_digest:
            # the hashed files are exactly the committed tree (and skipped files cannot be in it):
            # no need to load its map at all
            if not trees.tree_path(self.ws, committed_digest).exists():
                raise SourceUnavailable("cursor_tree_missing")
            return ScanResult(NO_CHANGE, (), after_cursor, None, telemetry)
        try:
            base = trees.load_tree(self.ws, after_cursor)
        except trees.TreeError as exc:
            raise SourceUnavailable(exc.reason_code) from None
        items = _diff(
            base,
            walked.files,
            walked.unhashed,
            source.source_id,
            observed_at,
            None if adopt else limit + 1,
        )
        capped = len(items) > limit
        reported = items[:limit]
        # a baseline adopts every change (listing the first `limit`); a scan only what it lists
        applied = items if adopt else reported
        if (capped and not adopt) or walked.unhashed:
            proposed = dict(base)
            for item in applied:
                if item.change == "deleted":
                    proposed.pop(item.resource_ref, None)
                else:
                    proposed[item.resource_ref] = item.revision
            cursor = self._tree(proposed)
        elif walked.digest is not None and trees.tree_path(self.ws, walked.digest).exists():
            cursor = trees.cursor_of(walked.digest)
        else:
            cursor = self._tree(walked.revisions(), walked.digest)
        if time.monotonic() > deadline:
            raise SourceUnavailable(SCAN_TIMEOUT)
        status = COMPLETED if reported else NO_CHANGE
        if adopt:
            telemetry = telemetry._replace(adopted_unlisted_count=len(items) - len(reported))
        else:
            telemetry = telemetry._replace(result_cap_applied=capped)
        return ScanResult(status, tuple(reported), cursor, None, telemetry)

    # -- exact read ----------------------------------------------------------
    def exact_read_many(
        self,
        source: Source,
        items: Sequence[ScanItem],
        max_bytes: int,
        deadline: float,
        observed_at: str,
    ) -> list[ReadResult]:
        """``exact_read`` of every item, in order (each file is opened and re-hashed on its own)."""
        return [self.exact_read(source, item, max_bytes, deadline, observed_at) for item in items]

    def exact_read(
        self, source: Source, item: ScanItem, max_bytes: int, deadline: float, observed_at: str
    ) -> ReadResult:
        try:
            path = self._path_of(source, item.resource_ref)
        except LocatorError as exc:
            return failed_read(item, observed_at, exc.reason_code)
        if time.monotonic() > deadline:
            return failed_read(item, observed_at, READ_TIMEOUT)
        if item.revision == DELETED:
            if os.path.lexists(path) and _in_view(source, item.resource_ref):
                return failed_read(item, observed_at, READ_MISMATCH)  # it came back
            # gone, or still on disk but out of the locator's view (its include/exclude now reject it)
            return ReadResult("deleted", item.resource_ref, item.revision, observed_at)
        try:
            with open(path, "rb") as handle:
                data = handle.read(max_bytes + 1)
        except FileNotFoundError:
            return failed_read(item, observed_at, READ_MISMATCH)  # deleted since the scan
        except OSError:
            return failed_read(item, observed_at, READ_IO_ERROR)
        if time.monotonic() > deadline:
            return failed_read(item, observed_at, READ_TIMEOUT)
        if len(data) > max_bytes:
            # terminal only while the file still has the scanned revision: one that grew past
            # the bound since the scan is a transient mismatch, never an absorbed "oversize"
            try:
                whole, _ = hash_file(path, limit=self.max_scan_bytes, deadline=deadline)
            except HashDeadline:
                return failed_read(item, observed_at, READ_TIMEOUT)
            except OSError:
                return failed_read(item, observed_at, READ_IO_ERROR)
            if whole != item.revision:
                return failed_read(item, observed_at, READ_MISMATCH)
            return ReadResult(
                "oversize", item.resource_ref, item.revision, observed_at, None, READ_OVERSIZE
            )
        if revision_of(data) != item.revision:
            return failed_read(item, observed_at, READ_MISMATCH)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return ReadResult(
                "binary", item.resource_ref, item.revision, observed_at, None, READ_NOT_TEXT
            )
        return ReadResult(VERIFIED, item.resource_ref, item.revision, observed_at, text)

    def _path_of(self, source: Source, rel: str) -> Path:
        """The file an item names, re-checked: never outside the locator."""
        loc = resolve_locator(self.ws, source.locator)
        if loc.is_file:
            if rel != loc.path.name:
                raise LocatorError("locator_outside_root")
            return loc.path
        parts = rel.split("/")
        if rel.startswith("/") or any(p in ("", ".", "..") for p in parts):
            raise LocatorError("locator_outside_root")
        path = loc.path.joinpath(*parts)
        real = Path(os.path.realpath(path))
        if real != loc.path and loc.path not in real.parents:
            raise LocatorError("locator_outside_root")
        return path


def _in_view(source: Source, rel: str) -> bool:
    """Whether the locator's include/exclude patterns admit ``rel`` (a single-file locator admits it)."""
    locator = source.locator if isinstance(source.locator, dict) else {}
    match = glob_matcher(tuple(locator.get("include") or ()), tuple(locator.get("exclude") or ()))
    return match is None or match(rel)


def _diff(
    base: dict[str, str],
    files: Mapping[str, Any],
    unhashed: frozenset[str],
    source_id: str,
    observed_at: str,
    stop: int | None,
) -> list[ScanItem]:
    """Changes from ``base`` to the walked files, in path order; at most ``stop`` of them (None: all)."""
    items: list[ScanItem] = []
    for rel in sorted(base.keys() | files.keys()):
        if stop is not None and len(items) >= stop:
            break
        entry = files.get(rel)
        old = base.get(rel)
        if entry is None:
            if old is not None and rel not in unhashed:
                items.append(ScanItem(source_id, rel, DELETED, observed_at, "deleted", "deleted"))
        elif old is None:
            items.append(ScanItem(source_id, rel, entry.revision, observed_at, entry.kind, "added"))
        elif old != entry.revision:
            items.append(
                ScanItem(source_id, rel, entry.revision, observed_at, entry.kind, "modified")
            )
    return items
