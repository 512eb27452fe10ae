"""The SourceProvider port (SPEC §5.1): detect bounded changes, read exactly.

A source provider (an *adapter* bound to a ``provider_id`` in
``sources.toml``) answers three calls:

- ``health()`` — cheap, touches no content;
- ``scan(source, after_cursor, limit, deadline, observed_at)`` — the items
  (added, modified, deleted) of ``source`` relative to ``after_cursor`` (the
  **committed** cursor, or None), at most ``limit`` of them, and the cursor
  that would absorb exactly those items;
- ``exact_read(source, item, max_bytes, deadline, observed_at)`` — re-read one
  item, re-hash it, and return its content only if it still has the scanned
  revision.

``deadline`` is a ``time.monotonic()`` value. Adapters may raise
``SourceUnavailable(reason_code)`` for a clean refusal; any other exception is
reduced by the caller to a reason code (fail-open, SPEC §5.2) and its text is
never shown. Everything here is private and in-process: resource refs,
revisions, cursors and content reach public packets only as keyed refs.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple, Protocol

from dcx.core.vocab import (  # noqa: F401 (the plane's words, re-read by its adapters)
    CHANGE_KINDS,
    COMPLETED,
    CONTENT_KINDS,
    FAILED,
    HEALTH_STATUSES,
    NO_CHANGE,
    READ_STATUSES,
    READ_TERMINAL,
    SCAN_STATUSES,
    UNAVAILABLE,
    VERIFIED,
)
from dcx.state.profile import Source

DELETED = "deleted"  # the revision of a deletion
MAX_CURSOR_CHARS = 256
MAX_RESOURCE_REF_CHARS = 1024
MAX_REVISION_CHARS = 256

# Reason codes of this plane (docs/sources.md lists each with its meaning).
PROVIDER_SCAN_FAILED = "provider_scan_failed"
PROVIDER_CONTRACT_INVALID = "provider_contract_invalid"
PROVIDER_CONFIGURATION_FAILED = "provider_configuration_failed"
ADAPTER_UNAVAILABLE = "source_provider_adapter_unavailable"
IDENTITY_MISMATCH = "runtime_provider_identity_mismatch"
SCAN_TIMEOUT = "scan_timeout"
READ_MISMATCH = "exact_read_revision_mismatch"
READ_IO_ERROR = "exact_read_io_error"
READ_TIMEOUT = "exact_read_timeout"
READ_FAILED = "exact_read_failed"
READ_NOT_TEXT = "exact_read_not_text"
READ_OVERSIZE = "exact_read_oversize"

_TOKEN_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")


class SourceUnavailable(Exception):
    """A clean refusal by an adapter or the plane; ``reason_code`` is public, the rest is not."""

    def __init__(self, reason_code: str) -> None:
        super().__init__(reason_code)
        self.reason_code = reason_code


class ScanItem(NamedTuple):
    """One change. ``resource_ref`` (a path for local-file) and ``revision`` are private."""

    source_id: str
    resource_ref: str
    revision: str  # "deleted" for a deletion
    observed_at: str  # the scan time, never a file mtime
    content_kind: str  # text | binary | oversize | deleted
    change: str  # added | modified | deleted


class ScanTelemetry(NamedTuple):
    result_cap_applied: bool = False
    skipped_outside_locator: int = 0
    skipped_oversize: int = 0
    hashed: int = 0  # files read this scan (the rest came from the stat cache)
    file_count: int = 0  # files the locator holds now
    adopted_unlisted_count: int | None = (
        None  # baseline: changes the cursor adopts beyond the listed items
    )
    skipped_submodules: int | None = (
        None  # git: submodule entries skipped (None: the adapter has none)
    )
    skipped_symlinks: int | None = None  # git: symlinks skipped, never followed
    skipped_binary: int | None = None  # mcp: blob resources skipped (text only, SPEC §15.1)


class ScanResult(NamedTuple):
    status: str
    items: tuple[ScanItem, ...] = ()
    cursor_after: str | None = None  # private; absorbs exactly ``items``
    reason_code: str | None = None
    telemetry: ScanTelemetry = ScanTelemetry()


class ReadResult(NamedTuple):
    """One exact read. ``content`` is private, transient and only set when ``verified``."""

    status: str  # verified | binary | oversize | deleted | failed
    resource_ref: str
    revision: str  # the revision that was asked for
    observed_at: str
    content: str | None = None
    reason_code: str | None = None

    @property
    def absorbed(self) -> bool:
        """Verified or terminal: the item may be absorbed into a committed cursor."""
        return self.status == VERIFIED or self.status in READ_TERMINAL

    @property
    def verified(self) -> bool:
        """The scanned revision was confirmed: re-hashed, or the deletion seen."""
        return self.status in (VERIFIED, "binary", "deleted")

    @property
    def content_kind(self) -> str | None:
        if self.status == VERIFIED:
            return "text"
        return self.status if self.status in READ_TERMINAL else None


class Health(NamedTuple):
    status: str  # healthy | degraded | unavailable
    reason_code: str | None = None


class SourceProvider(Protocol):
    """What every source adapter implements (built-in, or a plugin behind the worker)."""

    provider_id: str
    version: str | None

    def health(self) -> Health: ...

    def scan(
        self,
        source: Source,
        after_cursor: str | None,
        limit: int,
        deadline: float,
        observed_at: str,
    ) -> ScanResult: ...

    def exact_read(
        self, source: Source, item: ScanItem, max_bytes: int, deadline: float, observed_at: str
    ) -> ReadResult: ...


def failed_read(item: ScanItem, observed_at: str, reason_code: str) -> ReadResult:
    return ReadResult("failed", item.resource_ref, item.revision, observed_at, None, reason_code)


def is_token(value: Any, limit: int = 128) -> bool:
    return isinstance(value, str) and len(value) <= limit and bool(_TOKEN_RE.match(value))


def scan_contract_problem(result: Any, source_id: str, limit: int) -> str | None:
    """Why a scan answer breaks the port's contract (in words for tests), or None.

    Checked for every adapter, built-in or plugin, before anything is used.
    """
    if not isinstance(result, ScanResult):
        return "not a ScanResult"
    if result.status not in SCAN_STATUSES:
        return "unknown status"
    if result.reason_code is not None and not is_token(result.reason_code, 120):
        return "reason_code is not a token"
    if result.status in (FAILED, UNAVAILABLE):
        if result.reason_code is None:
            return "a failed or unavailable scan needs a reason_code"
        if result.items:
            return "a failed or unavailable scan holds items"
    if result.status == NO_CHANGE and result.items:
        return "a no_change scan holds items"
    if len(result.items) > limit:
        return "more items than the limit"
    cursor = result.cursor_after
    if cursor is not None and (
        not isinstance(cursor, str) or not cursor or len(cursor) > MAX_CURSOR_CHARS
    ):
        return "cursor_after is not a string of 1..256 characters"
    if len(result.items) > 64 and _items_ok(result.items, source_id):
        return None
    seen: set[str] = set()
    for item in result.items:
        if not isinstance(item, ScanItem):
            return "an item is not a ScanItem"
        if item.source_id != source_id:
            return "an item belongs to another source"
        if (
            not isinstance(item.resource_ref, str)
            or not item.resource_ref
            or len(item.resource_ref) > MAX_RESOURCE_REF_CHARS
        ):
            return "an item's resource_ref is not a string of 1..1024 characters"
        if item.resource_ref in seen:
            return "two items share a resource_ref"
        seen.add(item.resource_ref)
        if (
            not isinstance(item.revision, str)
            or not item.revision
            or len(item.revision) > MAX_REVISION_CHARS
        ):
            return "an item's revision is not a string of 1..256 characters"
        if item.change not in CHANGE_KINDS or item.content_kind not in CONTENT_KINDS:
            return "an item's change or content_kind is unknown"
        if (item.change == "deleted") != (item.revision == DELETED) or (
            item.change == "deleted"
        ) != (item.content_kind == "deleted"):
            return "a deletion must have revision and content_kind 'deleted' (and only a deletion)"
    return None


def _items_ok(items: tuple[Any, ...], source_id: str) -> bool:
    """The per-item checks of ``scan_contract_problem`` column by column, in C loops (a first scan
    lists 100k items); False when any may fail, and the item loop then says which."""
    if set(map(type, items)) != {ScanItem}:
        return False
    ids, refs, revisions, _, kinds, changes = zip(*items, strict=True)
    return (
        set(ids) == {source_id}
        and set(map(type, refs)) == {str}
        and set(map(type, revisions)) == {str}
        and min(map(len, refs)) >= 1
        and max(map(len, refs)) <= MAX_RESOURCE_REF_CHARS
        and min(map(len, revisions)) >= 1
        and max(map(len, revisions)) <= MAX_REVISION_CHARS
        and len(set(refs)) == len(refs)
        and set(changes) <= _CHANGE_SET
        and set(kinds) <= _KIND_SET
        and list(map(DELETED.__eq__, changes))
        == list(map(DELETED.__eq__, revisions))
        == list(map(DELETED.__eq__, kinds))
    )


_CHANGE_SET = frozenset(CHANGE_KINDS)
_KIND_SET = frozenset(CONTENT_KINDS)


def read_contract_problem(result: Any, item: ScanItem, max_bytes: int) -> str | None:
    """Why an exact-read answer breaks the contract, or None."""
    if not isinstance(result, ReadResult):
        return "not a ReadResult"
    if result.status not in READ_STATUSES:
        return "unknown status"
    if result.resource_ref != item.resource_ref:
        return "answer for another resource"
    if result.status == VERIFIED:
        if not isinstance(result.content, str):
            return "verified without content"
        if len(result.content.encode("utf-8", "surrogatepass")) > max_bytes:
            return "content over max_bytes"
    elif result.content is not None:
        return "content on an unverified read"
    if result.status == "failed" and not is_token(result.reason_code, 120):
        return "a failed read needs a reason_code token"
    return None
