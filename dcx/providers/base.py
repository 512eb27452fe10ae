"""The ContextProvider port: bounded, advisory, read-only recall (SPEC §6.1).

A provider answers one ``RetrievalRequest`` with one ``Retrieval``. It never
creates authority: every content item is untrusted advisory input. A
successful empty retrieval (``completed``, no items) differs from an
``unavailable`` one. Scores are provider-native — never compared across
providers, never a confidence.

Built-ins (``bm25``, ``openviking``) and the ``extension`` provider all sit
behind this one protocol; dcx, not the provider, owns activation, request
bounds, fail-open, public projection and the lifecycle.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Protocol

COMPLETED = "completed"
UNAVAILABLE = "unavailable"
CONTENT_TRUST = "untrusted_advisory"


class RetrievalRequest(NamedTuple):
    """One bounded request. ``query`` and ``scope_ref`` are private: never projected."""

    namespace: str
    scope_ref: str
    query: str
    query_summary: str
    max_results: int
    timeout_seconds: float  # the effective timeout (min of request, profile, extension)
    observed_at: str
    # The profile's total content budget for this call. Adapters drop items
    # that would overflow it (counted in ``items_dropped``) instead of failing.
    max_content_chars: int = 128_000


class RetrievalItem(NamedTuple):
    """One candidate. ``resource_ref`` and ``content`` stay in-process (keyed/omitted in public)."""

    resource_ref: str
    summary: str
    content: str
    score: float | None


class Retrieval(NamedTuple):
    provider: str
    namespace: str
    status: str  # completed | unavailable
    reason_code: str | None
    provider_version: str | None
    query_summary: str
    observed_at: str
    search_performed: bool
    read_performed: bool
    requested_limit: int
    latency_ms: int
    items: tuple[RetrievalItem, ...] = ()
    items_dropped: int = 0
    result_cap_applied: bool = False
    provider_readiness: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return self.status == COMPLETED


class ContextProvider(Protocol):
    """What every recall provider implements."""

    name: str  # bm25 | openviking | extension
    version: str

    def retrieve(self, request: RetrievalRequest, *, deadline: float) -> Retrieval:
        """Answer within ``deadline`` (a ``time.monotonic()`` value). May raise: the
        caller turns any exception into ``unavailable/provider_retrieval_failed``."""
        ...


def unavailable(
    request: RetrievalRequest,
    provider: str,
    reason_code: str,
    *,
    provider_version: str | None = None,
    latency_ms: int = 0,
    search_performed: bool = False,
    read_performed: bool = False,
    provider_readiness: dict[str, Any] | None = None,
) -> Retrieval:
    """The fail-open answer: no items, a reason code, nothing from the backend."""
    return Retrieval(
        provider=provider,
        namespace=request.namespace,
        status=UNAVAILABLE,
        reason_code=reason_code,
        provider_version=provider_version,
        query_summary=request.query_summary,
        observed_at=request.observed_at,
        search_performed=search_performed,
        read_performed=read_performed,
        requested_limit=request.max_results,
        latency_ms=latency_ms,
        provider_readiness=provider_readiness,
    )


def completed(
    request: RetrievalRequest,
    provider: str,
    items: tuple[RetrievalItem, ...],
    *,
    provider_version: str | None,
    read_performed: bool | None = None,
    latency_ms: int = 0,
    items_dropped: int = 0,
    result_cap_applied: bool = False,
    provider_readiness: dict[str, Any] | None = None,
) -> Retrieval:
    """A search that answered (possibly with no items: a successful empty retrieval)."""
    return Retrieval(
        provider=provider,
        namespace=request.namespace,
        status=COMPLETED,
        reason_code=None,
        provider_version=provider_version,
        query_summary=request.query_summary,
        observed_at=request.observed_at,
        search_performed=True,
        read_performed=bool(items) if read_performed is None else read_performed,
        requested_limit=request.max_results,
        latency_ms=latency_ms,
        items=items,
        items_dropped=items_dropped,
        result_cap_applied=result_cap_applied,
        provider_readiness=provider_readiness,
    )
