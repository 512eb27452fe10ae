"""The source plane's API, shared by ``dcx scan`` and ``dcx prepare`` (SPEC §5, §8.2).

Everything returned here is private and in-process (paths, revisions,
cursors, content); public packets are built from it by
``dcx.packets.scan.build_scan_receipt``, ``dcx.packets.coverage.build_coverage``
and ``dcx.packets.freshness.build_freshness``, which mint keyed refs.

Use from ``prepare``::

    selected = select_sources(registry, source_ids)            # exit 2 on unknown/disabled ids
    providers = Providers(ws, profile, registry, progress=...)  # dcx.sources.registry
    scans = scan_sources(providers, selected, committed=read_cursors(ws), clock=clock)
    reads = {s.source_id: exact_read_scan(providers, s, clock=clock) for s in scans}
    receipts = [build_scan_receipt(ctx, s, reads[s.source_id], minter) for s in scans]
    coverage = build_coverage(ctx, registry, scans, reads)
    record_freshness(ws, read_times(scans, reads))              # dcx.state.cursors, after the packets
    freshness = build_freshness(ctx, registry, scans, read_freshness(ws), clock.now())

Rules kept here, so every caller gets them:

- Selection: by default the enabled sources whose ``scan_mode`` is
  ``incremental`` or ``snapshot``; explicit ids may name ``on_demand``
  sources; unknown or disabled explicit ids are exit 2. Registry order.
- ``cursor_before`` is the committed cursor (``incremental``, ``on_demand``),
  or None for ``snapshot`` (compared with an empty cursor every time).
- Fail-open: an exception, a timeout, a contract violation or a bad adapter
  configuration becomes an ``unavailable`` scan with a reason code and no
  items; ``cursor_after`` is then None (the committed cursor is kept) and the
  other sources go on. Exception text is dropped here.
- Exact reads follow ``exact_read_policy``: ``always`` reads every item,
  ``material_change`` every item but deletions, ``never`` none. One budget of
  ``[bounds] timeout_seconds`` per source; at most ``max_read_bytes`` each.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from dcx.core.clock import Clock, parse_ts
from dcx.core.errors import InvalidInput
from dcx.core.gcpause import gc_paused
from dcx.core.vocab import policy_reads
from dcx.sources.base import (
    COMPLETED,
    NO_CHANGE,
    PROVIDER_CONTRACT_INVALID,
    PROVIDER_SCAN_FAILED,
    READ_FAILED,
    READ_TIMEOUT,
    SCAN_TIMEOUT,
    UNAVAILABLE,
    ReadResult,
    ScanItem,
    ScanResult,
    ScanTelemetry,
    SourceUnavailable,
    failed_read,
    is_token,
    read_contract_problem,
    scan_contract_problem,
)
from dcx.sources.registry import Providers
from dcx.state.profile import Registry, Source


class SourceScan(NamedTuple):
    """One source's scan, as ``prepare`` needs it. Cursors and items are private."""

    source: Source
    status: str  # completed | no_change | failed | unavailable
    reason_code: str | None  # why failed/unavailable; on an ok scan, a note (cursor_rewound)
    items: tuple[ScanItem, ...]
    cursor_before: (
        str | None
    )  # the committed cursor compared with (None: never committed / snapshot)
    cursor_after: str | None  # absorbs exactly ``items``; None when unavailable or failed
    provider_version: str | None
    observed_at: str
    requested_limit: int
    latency_ms: int
    telemetry: ScanTelemetry

    @property
    def source_id(self) -> str:
        return self.source.source_id

    @property
    def provider_id(self) -> str:
        return self.source.provider_id

    @property
    def ok(self) -> bool:
        return self.status in (COMPLETED, NO_CHANGE)


def select_sources(registry: Registry, source_ids: Sequence[str] = ()) -> tuple[Source, ...]:
    """The sources a run scans (see the module rules); exit 2 on an unknown or disabled id."""
    if not source_ids:
        return tuple(s for s in registry.sources if s.enabled and s.scan_mode != "on_demand")
    wanted = set()
    for source_id in source_ids:
        source = registry.source(source_id)
        shown = repr(source_id) if is_token(source_id) else "given"
        if source is None:
            raise InvalidInput(
                f"--source: no source {shown} in sources.toml",
                code="unknown_source",
                field="--source",
                hint="`dcx sources` lists the source ids",
            )
        if not source.enabled:
            raise InvalidInput(
                f"--source: source {shown} is disabled in sources.toml",
                code="source_disabled",
                field="--source",
                hint="set enabled = true for it, or leave it out",
            )
        wanted.add(source_id)
    return tuple(s for s in registry.sources if s.source_id in wanted)


def cursor_before(source: Source, committed: Mapping[str, str]) -> str | None:
    return None if source.scan_mode == "snapshot" else committed.get(source.source_id)


def scan_sources(
    providers: Providers,
    selected: Sequence[Source],
    *,
    committed: Mapping[str, str],
    clock: Clock,
    adopt: bool = False,
) -> list[SourceScan]:
    """Scan each selected source against its committed cursor; never raises for a source.

    ``adopt`` (a baseline, SPEC §8.2): each proposed cursor is the source's whole
    current state, every item, bounded only by the scan deadline; the receipt
    lists the first ``max_changes`` items and counts the rest.
    """
    return [
        scan_source(
            providers, s, cursor_before=cursor_before(s, committed), clock=clock, adopt=adopt
        )
        for s in selected
    ]


def _adopt_all(
    provider: Any, source: Source, cursor: str | None, limit: int, deadline: float, observed_at: str
) -> ScanResult:
    """A baseline scan: everything up to the current state, however many max_changes pages it takes."""
    if getattr(provider, "adopts_whole_state", False):
        return provider.scan(source, cursor, limit, deadline, observed_at, adopt=True)
    first = result = provider.scan(source, cursor, limit, deadline, observed_at)
    unlisted = 0
    while result.status == COMPLETED and result.telemetry.result_cap_applied:
        if scan_contract_problem(result, source.source_id, limit) is not None:
            raise SourceUnavailable(PROVIDER_CONTRACT_INVALID)
        if time.monotonic() > deadline:
            raise SourceUnavailable(SCAN_TIMEOUT)
        result = provider.scan(source, result.cursor_after, limit, deadline, observed_at)
        if result.status not in (COMPLETED, NO_CHANGE):
            raise SourceUnavailable(result.reason_code or PROVIDER_SCAN_FAILED)
        unlisted += len(result.items)
    if result is first:
        return first._replace(telemetry=first.telemetry._replace(adopted_unlisted_count=0))
    telemetry = first.telemetry._replace(result_cap_applied=False, adopted_unlisted_count=unlisted)
    return first._replace(cursor_after=result.cursor_after, telemetry=telemetry)


def scan_source(
    providers: Providers,
    source: Source,
    *,
    cursor_before: str | None,
    clock: Clock,
    adopt: bool = False,
) -> SourceScan:
    observed_at = clock.now()
    started = clock.monotonic()
    limit = source.max_changes
    deadline = time.monotonic() + providers.profile.scan_timeout_seconds
    provider = None
    try:
        provider = providers.get(source.provider_id)
        with gc_paused():  # a first scan of 100k files makes 100k items (no cycles)
            if adopt:
                result = _adopt_all(provider, source, cursor_before, limit, deadline, observed_at)
            else:
                result = provider.scan(source, cursor_before, limit, deadline, observed_at)
            problem = scan_contract_problem(result, source.source_id, limit)
        if problem is not None:
            raise SourceUnavailable(PROVIDER_CONTRACT_INVALID)
    except SourceUnavailable as exc:
        result = ScanResult(UNAVAILABLE, reason_code=exc.reason_code)
    except Exception:  # fail-open: the text may hold private values; only the code survives
        result = ScanResult(UNAVAILABLE, reason_code=PROVIDER_SCAN_FAILED)
    version = getattr(provider, "version", None)  # a plugin's is known once its worker answered
    if not is_token(version):
        version = None
    status = result.status
    if status == COMPLETED and not result.items:
        status = NO_CHANGE
    keep = status in (COMPLETED, NO_CHANGE)
    return SourceScan(
        source=source,
        status=status,
        # on a completed or no-change scan a reason code is a note (git's ``cursor_rewound``)
        reason_code=result.reason_code,
        items=result.items if keep else (),
        cursor_before=cursor_before,
        cursor_after=result.cursor_after if keep else None,
        provider_version=version,
        observed_at=observed_at,
        requested_limit=limit,
        latency_ms=clock.elapsed_ms(started),
        telemetry=result.telemetry,
    )


def reads_required(scan: SourceScan) -> tuple[ScanItem, ...]:
    """The items the source's ``exact_read_policy`` asks to read."""
    if not scan.ok:
        return ()
    policy = scan.source.exact_read_policy
    return tuple(
        item for item in scan.items if policy_reads(policy, deleted=item.change == "deleted")
    )


def content_kind_after_read(item: ScanItem, read: ReadResult | None) -> str:
    """The item's content kind: the read's outcome when one ended the matter (``oversize`` is
    known only then), else what the scan saw."""
    kind = read.content_kind if read is not None and read.absorbed else None
    return kind or item.content_kind


def exact_read_item(
    providers: Providers,
    scan: SourceScan,
    item: ScanItem,
    *,
    clock: Clock,
    deadline: float | None = None,
) -> ReadResult:
    """Re-read one item of ``scan``; every failure is a ``failed`` read with a reason code."""
    observed_at = clock.now()
    max_bytes = providers.profile.max_read_bytes
    if deadline is None:
        deadline = time.monotonic() + providers.profile.scan_timeout_seconds
    if time.monotonic() > deadline:
        return failed_read(item, observed_at, READ_TIMEOUT)
    try:
        provider = providers.get(scan.provider_id)
        result = provider.exact_read(scan.source, item, max_bytes, deadline, observed_at)
    except SourceUnavailable as exc:
        return failed_read(item, observed_at, exc.reason_code)
    except Exception:
        return failed_read(item, observed_at, READ_FAILED)
    if (
        read_contract_problem(result, item, max_bytes) is not None
        or result.revision != item.revision
    ):
        return failed_read(item, observed_at, PROVIDER_CONTRACT_INVALID)
    return result


def exact_read_scan(
    providers: Providers, scan: SourceScan, *, clock: Clock
) -> dict[str, ReadResult]:
    """Every read the policy requires, within one per-source budget; keyed by resource ref.

    An adapter with ``exact_read_many`` (git, local files) answers them in one
    call, all stamped with one read time; the contract is checked per answer
    exactly as for ``exact_read``.
    """
    deadline = time.monotonic() + providers.profile.scan_timeout_seconds
    items = reads_required(scan)
    if len(items) > 1:
        try:
            many = getattr(providers.get(scan.provider_id), "exact_read_many", None)
        except Exception:
            many = None  # exact_read_item reports why, item by item
        if many is not None:
            with gc_paused():  # 100k texts and read results (no cycles)
                return _read_many(many, providers, scan, items, clock=clock, deadline=deadline)
    return {
        item.resource_ref: exact_read_item(providers, scan, item, clock=clock, deadline=deadline)
        for item in items
    }


def _read_many(
    many: Any,
    providers: Providers,
    scan: SourceScan,
    items: Sequence[ScanItem],
    *,
    clock: Clock,
    deadline: float,
) -> dict[str, ReadResult]:
    observed_at = clock.now()
    max_bytes = providers.profile.max_read_bytes
    reason = None
    results: Any = ()
    if time.monotonic() > deadline:
        reason = READ_TIMEOUT
    else:
        try:
            results = many(scan.source, items, max_bytes, deadline, observed_at)
        except SourceUnavailable as exc:
            reason = exc.reason_code
        except Exception:
            reason = READ_FAILED
        if reason is None and (not isinstance(results, list) or len(results) != len(items)):
            reason = PROVIDER_CONTRACT_INVALID
    if reason is not None:
        return {item.resource_ref: failed_read(item, observed_at, reason) for item in items}
    out: dict[str, ReadResult] = {}
    for item, result in zip(items, results, strict=True):
        if _read_ok(result, item, max_bytes):
            out[item.resource_ref] = result
        else:
            out[item.resource_ref] = failed_read(item, observed_at, PROVIDER_CONTRACT_INVALID)
    return out


def _read_ok(result: Any, item: ScanItem, max_bytes: int) -> bool:
    """``read_contract_problem(...) is None`` and the revision asked for, with a shortcut for the
    common verified answer: a text of at most ``max_bytes // 4`` characters fits in ``max_bytes``."""
    if (
        type(result) is ReadResult
        and result.status == "verified"
        and type(result.content) is str
        and result.resource_ref == item.resource_ref
        and result.revision == item.revision
        and 4 * len(result.content) <= max_bytes
    ):
        return True
    return (
        read_contract_problem(result, item, max_bytes) is None and result.revision == item.revision
    )


def read_complete(scan: SourceScan, reads: Mapping[str, ReadResult]) -> bool:
    """Every read the policy requires ended verified or terminal (no transient failure, none missing)."""
    return all(
        (read := reads.get(item.resource_ref)) is not None and read.absorbed
        for item in reads_required(scan)
    )


def read_times(
    scans: Sequence[SourceScan], reads: Mapping[str, Mapping[str, ReadResult]]
) -> dict[str, str]:
    """``{source_id: time}`` of the latest verified exact read per source (for ``record_freshness``)."""
    out: dict[str, str] = {}
    for scan in scans:
        times = [r.observed_at for r in reads.get(scan.source_id, {}).values() if r.verified]
        if times:
            out[scan.source_id] = max(times, key=parse_ts)
    return out
