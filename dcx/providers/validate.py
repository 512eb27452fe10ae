"""The retrieval model's bounds (SPEC §6.1), enforced by rejection, never truncation.

Two sides, two outcomes:

- **Request side** (what the caller asks for): a violation is the caller's
  mistake, so it is ``InvalidInput`` (exit 2) naming the field.
- **Provider side** (what a provider answers): a violation is the provider's
  fault, so the whole answer becomes ``unavailable/provider_contract_invalid``;
  an exception becomes ``unavailable/provider_retrieval_failed``. Neither
  carries exception text: it may hold paths, queries or credentials.

Adapters normalise their backend's output *before* the port with ``admit``:
an item that cannot pass is dropped and counted (``items_dropped``), so one
long item does not cost a valid answer.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from dcx.core import public
from dcx.core.errors import InvalidInput, UnsafeText
from dcx.providers.base import (
    COMPLETED,
    UNAVAILABLE,
    ContextProvider,
    Retrieval,
    RetrievalItem,
    RetrievalRequest,
    unavailable,
)

NAMESPACE_MAX = 120
SCOPE_MAX = 2048
QUERY_MAX = 1000
QUERY_SUMMARY_MAX = public.SUMMARY_MAX
MAX_RESULTS = 8
TIMEOUT_MIN = 1.0
TIMEOUT_MAX = 120.0
RESOURCE_REF_MAX = 512
ITEM_SUMMARY_MAX = public.SUMMARY_MAX
CONTENT_MAX = 16_000
VERSION_MAX = 128


class ContractViolation(Exception):
    """A provider answer that breaks the port contract. Never shown: the receipt
    carries only ``provider_contract_invalid``."""


# -- request side ------------------------------------------------------------


def _label(labels: Mapping[str, str] | None, name: str) -> str:
    return (labels or {}).get(name, name)


def check_max_results(value: Any, *, field: str = "max_results") -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(
            f"{field}: expected an integer from 1 to {MAX_RESULTS}",
            field=field,
            code="invalid_type",
        )
    if not 1 <= value <= MAX_RESULTS:
        raise InvalidInput(
            f"{field}: {value} is outside 1..{MAX_RESULTS}", field=field, code="out_of_range"
        )
    return value


def check_timeout(value: Any, *, field: str = "timeout_seconds") -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidInput(
            f"{field}: expected a number of seconds", field=field, code="invalid_type"
        )
    if not math.isfinite(value):
        raise InvalidInput(
            f"{field}: expected a finite number of seconds", field=field, code="out_of_range"
        )
    if not TIMEOUT_MIN <= value <= TIMEOUT_MAX:
        raise InvalidInput(
            f"{field}: {value} is outside {TIMEOUT_MIN:g}..{TIMEOUT_MAX:g} seconds",
            field=field,
            code="out_of_range",
        )
    return float(value)


def effective_timeout(
    request: float | None, profile: float, manifest: float | None = None
) -> float:
    """The shortest of the request's, the profile's and (for extensions) the manifest's limit."""
    limits = [profile] + [t for t in (request, manifest) if t is not None]
    return float(min(limits))


def check_request(
    *,
    namespace: Any,
    scope_ref: Any,
    query: Any,
    query_summary: Any,
    max_results: Any,
    timeout_seconds: Any,
    labels: Mapping[str, str] | None = None,
) -> None:
    """Raise ``InvalidInput`` (exit 2) naming the first field out of bounds.

    ``labels`` renames fields in messages (the CLI says ``--max-results``).
    Messages never echo the scope or the query: both are private.
    """
    public.check_text(namespace, field=_label(labels, "namespace"), limit=NAMESPACE_MAX)
    scope_field = _label(labels, "scope_ref")
    if not isinstance(scope_ref, str):
        raise InvalidInput(f"{scope_field}: expected text", field=scope_field, code="invalid_type")
    if len(scope_ref) > SCOPE_MAX:
        raise InvalidInput(
            f"{scope_field}: {len(scope_ref)} characters is over the limit of {SCOPE_MAX}",
            field=scope_field,
            code="text_too_long",
        )
    query_field = _label(labels, "query")
    if not isinstance(query, str) or not query.strip():
        raise InvalidInput(
            f"{query_field}: expected non-empty text", field=query_field, code="empty_text"
        )
    if "\x00" in query:  # no provider can take it (argv, C strings): refused for every one, here
        raise InvalidInput(
            f"{query_field}: holds a NUL byte", field=query_field, code="invalid_input"
        )
    if len(query) > QUERY_MAX:
        raise InvalidInput(
            f"{query_field}: {len(query)} characters is over the limit of {QUERY_MAX}",
            field=query_field,
            code="text_too_long",
        )
    public.check_text(query_summary, field=_label(labels, "query_summary"), limit=QUERY_SUMMARY_MAX)
    check_max_results(max_results, field=_label(labels, "max_results"))
    check_timeout(timeout_seconds, field=_label(labels, "timeout_seconds"))


# -- provider side -----------------------------------------------------------


def item_problem(item: Any, _safe: dict[str, bool] | None = None) -> str | None:
    """Why ``item`` cannot cross the port (a short tag for tests), or None.

    ``_safe`` memoises the detector's verdict on summaries within one call
    (adapters often give every item the same generic summary)."""
    if not isinstance(item, RetrievalItem):
        return "not_an_item"
    ref, summary, content, score = item
    if not isinstance(ref, str) or not ref or len(ref) > RESOURCE_REF_MAX:
        return "resource_ref"
    if not isinstance(summary, str) or not summary.strip() or len(summary) > ITEM_SUMMARY_MAX:
        return "summary"
    safe = _safe.get(summary) if _safe is not None else None
    if safe is None:
        safe = public.unsafe_class(summary) is None
        if _safe is not None:
            _safe[summary] = safe
    if not safe:
        return "summary_unsafe"
    if not isinstance(content, str) or len(content) > CONTENT_MAX:
        return "content"
    if score is not None and (
        isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score)
    ):
        return "score"
    return None


def admit(
    candidates: Iterable[RetrievalItem], request: RetrievalRequest
) -> tuple[tuple[RetrievalItem, ...], int, bool]:
    """An adapter's normalisation: keep valid items in rank order within the result
    limit and the content budget. Returns (items, dropped, result_cap_applied)."""
    kept: list[RetrievalItem] = []
    seen: set[str] = set()
    dropped = 0
    budget = request.max_content_chars
    capped = False
    verdicts: dict[str, bool] = {}
    for item in candidates:
        if (
            item_problem(item, verdicts) is not None
            or item.resource_ref in seen
            or len(item.content) > budget
        ):
            dropped += 1
            continue
        if len(kept) == request.max_results:
            capped = True
            break
        kept.append(item)
        seen.add(item.resource_ref)
        budget -= len(item.content)
    return tuple(kept), dropped, capped


def _check_readiness(value: Any) -> None:
    if value is None:
        return
    if not isinstance(value, Mapping):
        raise ContractViolation("provider_readiness")
    try:
        public.check_record(value, where="provider_readiness")
    except UnsafeText:
        raise ContractViolation("provider_readiness") from None
    if next(public.unsafe_strings(value), None) is not None:
        raise ContractViolation("provider_readiness")


def check_retrieval(request: RetrievalRequest, answer: Any, provider_name: str) -> Retrieval:
    """Return ``answer`` if it keeps every provider-side bound, else raise ``ContractViolation``."""
    if not isinstance(answer, Retrieval):
        raise ContractViolation("not_a_retrieval")
    if answer.provider != provider_name:
        raise ContractViolation("provider")
    echoed = (answer.namespace, answer.query_summary, answer.observed_at, answer.requested_limit)
    if echoed != (
        request.namespace,
        request.query_summary,
        request.observed_at,
        request.max_results,
    ):
        raise ContractViolation("request_echo")
    _check_status(answer)
    _check_flags(answer)
    if not isinstance(answer.items, tuple | list) or len(answer.items) > request.max_results:
        raise ContractViolation("items")
    seen: set[str] = set()
    total = 0
    verdicts: dict[str, bool] = {}
    for item in answer.items:
        if item_problem(item, verdicts) is not None or item.resource_ref in seen:
            raise ContractViolation("item")
        seen.add(item.resource_ref)
        total += len(item.content)
    if total > request.max_content_chars:
        raise ContractViolation("content_budget")
    _check_readiness(answer.provider_readiness)
    return answer._replace(items=tuple(answer.items))


def _check_status(answer: Retrieval) -> None:
    """A completed answer has no reason code; an unavailable one has a reason code, no items."""
    if answer.status not in (COMPLETED, UNAVAILABLE):
        raise ContractViolation("status")
    if answer.status == COMPLETED and answer.reason_code is not None:
        raise ContractViolation("reason_code")
    if answer.status == UNAVAILABLE:
        reason = answer.reason_code
        if (
            not isinstance(reason, str)
            or len(reason) > public.REASON_MAX
            or not public.TOKEN_RE.match(reason)
        ):
            raise ContractViolation("reason_code")
        if answer.items:
            raise ContractViolation("items_on_unavailable")


def _check_flags(answer: Retrieval) -> None:
    """The provider version (public-safe text), the three flags and the dropped count."""
    version = answer.provider_version
    if version is not None and (
        not isinstance(version, str)
        or not version
        or len(version) > VERSION_MAX
        or public.unsafe_class(version)
    ):
        raise ContractViolation("provider_version")
    for flag in (answer.search_performed, answer.read_performed, answer.result_cap_applied):
        if not isinstance(flag, bool):
            raise ContractViolation("flag")
    dropped = answer.items_dropped
    if isinstance(dropped, bool) or not isinstance(dropped, int) or dropped < 0:
        raise ContractViolation("items_dropped")


def _safe_version(provider: ContextProvider) -> str | None:
    version = getattr(provider, "version", None)
    if (
        isinstance(version, str)
        and version
        and len(version) <= VERSION_MAX
        and not public.unsafe_class(version)
    ):
        return version
    return None


def guarded_retrieve(
    provider: ContextProvider, request: RetrievalRequest, *, deadline: float
) -> Retrieval:
    """Call the provider once and fail open: an exception or a broken contract becomes
    an unavailable retrieval with a reason code and nothing from the provider."""
    name = provider.name
    try:
        answer = provider.retrieve(request, deadline=deadline)
    except Exception:  # any provider failure fails open; its text may hold private values
        return unavailable(
            request, name, "provider_retrieval_failed", provider_version=_safe_version(provider)
        )
    try:
        return check_retrieval(request, answer, name)
    except ContractViolation:
        return unavailable(
            request, name, "provider_contract_invalid", provider_version=_safe_version(provider)
        )
