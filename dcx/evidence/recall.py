"""Running one recall: the request bounds, the provider's choice and call, the receipt values.

Shared by ``dcx recall`` (one-off, nothing persisted) and ``dcx prepare``
(evidence assembly). The two entry points:

``build_request(cp, *, scope_ref, query, query_summary, max_results, timeout_seconds,
observed_at, labels=None) -> RetrievalRequest``
    Checks every request-side bound (``InvalidInput``, exit 2, naming the field
    — through ``labels``, e.g. ``{"max_results": "--max-results"}``) and applies
    the profile: ``scope_ref`` None → the profile's ``scope_ref`` (or ""), then
    host normalisation (``codex://threads/<id>`` → ``host-session:codex:<id>``);
    ``max_results`` None → the profile's, else min(request, profile);
    ``timeout_seconds`` None → the profile's, else min(request, profile);
    ``max_content_chars`` from the profile.

``run_recall(ws, profile, request, *, minter, clock, transient=False, provider=None, ready_file=None) -> RecallRun``
    Builds the profile's provider (``InvalidInput`` for a bad
    ``[context_provider.config]``), calls it ONCE with deadline
    ``clock.monotonic() + request.timeout_seconds``, fails open (exception →
    ``provider_retrieval_failed``, broken contract → ``provider_contract_invalid``),
    stamps ``latency_ms`` from ``clock`` (0 under ``DCX_NOW``) and mints one keyed
    ``provider_ref`` per item with ``minter`` (record or not: the caller's
    choice; ``prepare`` flushes it, ``recall`` uses ``record=False``).
    ``transient`` makes the provider persist nothing in the workspace.
    Never raises for provider failures.

``RecallRun``: ``request``; ``retrieval`` (validated; ``items`` in rank order,
with ``resource_ref`` and ``content`` — in-process only, never persist them);
``provider_refs`` (``provider_refs[i]`` belongs to ``retrieval.items[i]``);
``pairs()`` → ``[(provider_ref, item), …]``; ``receipt(ctx)`` → the validated
``context_provider_retrieval_v0`` packet with its ref (``decision_id`` from ``ctx``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from dcx.core.clock import Clock
from dcx.core.envelope import PacketContext
from dcx.core.errors import DcxError
from dcx.core.workspace import Workspace
from dcx.evidence.builders import build_receipt
from dcx.providers.base import (
    ContextProvider,
    Retrieval,
    RetrievalItem,
    RetrievalRequest,
    unavailable,
)
from dcx.providers.scope import normalise_scope
from dcx.providers.validate import check_request, effective_timeout, guarded_retrieve
from dcx.state.profile import ContextProviderConfig, Profile
from dcx.state.provider_config import validate_config
from dcx.state.refmap import RefMinter


class RecallRun(NamedTuple):
    request: RetrievalRequest
    retrieval: Retrieval
    provider_refs: tuple[str, ...]

    def pairs(self) -> list[tuple[str, RetrievalItem]]:
        return list(zip(self.provider_refs, self.retrieval.items, strict=True))

    def receipt(self, ctx: PacketContext) -> dict[str, Any]:
        return build_receipt(ctx, self.retrieval, self.provider_refs)


def build_request(
    cp: ContextProviderConfig,
    *,
    scope_ref: str | None,
    query: str,
    query_summary: str,
    max_results: int | None,
    timeout_seconds: float | None,
    observed_at: str,
    labels: Mapping[str, str] | None = None,
) -> RetrievalRequest:
    """A bounded request under the profile's limits (see the module doc)."""
    scope_field = (labels or {}).get("scope_ref", "scope_ref")
    scope = normalise_scope(
        cp.scope_ref or "" if scope_ref is None else scope_ref, field=scope_field
    )
    limit = cp.max_results if max_results is None else max_results
    timeout = cp.timeout_seconds if timeout_seconds is None else timeout_seconds
    check_request(
        namespace=cp.namespace,
        scope_ref=scope,
        query=query,
        query_summary=query_summary,
        max_results=limit,
        timeout_seconds=timeout,
        labels=labels,
    )
    return RetrievalRequest(
        namespace=cp.namespace,
        scope_ref=scope,
        query=query,
        query_summary=query_summary,
        max_results=min(limit, cp.max_results),
        timeout_seconds=effective_timeout(timeout_seconds, cp.timeout_seconds),
        observed_at=observed_at,
        max_content_chars=cp.max_content_chars,
    )


def run_recall(
    ws: Workspace,
    profile: Profile,
    request: RetrievalRequest,
    *,
    minter: RefMinter,
    clock: Clock,
    transient: bool = False,
    provider: ContextProvider | None = None,
    ready_file: bool | None = None,
) -> RecallRun:
    """Call the profile's provider once, fail open, mint keyed refs (see the module doc)."""
    if provider is None:
        provider = make_provider(
            ws, profile.context_provider, transient=transient, ready_file=ready_file
        )
    started = clock.monotonic()
    answer = guarded_retrieve(provider, request, deadline=started + request.timeout_seconds)
    answer = answer._replace(latency_ms=clock.elapsed_ms(started))
    refs = tuple(minter.provider_ref(answer.provider, item.resource_ref) for item in answer.items)
    return RecallRun(request, answer, refs)


class UnavailableProvider:
    """A provider that cannot run here: every retrieval is ``unavailable/<reason>``."""

    def __init__(self, name: str, reason_code: str) -> None:
        self.name = name
        self.version = ""
        self.reason_code = reason_code

    def retrieve(self, request: RetrievalRequest, *, deadline: float) -> Retrieval:
        return unavailable(request, self.name, self.reason_code)


def make_provider(
    ws: Workspace,
    cp: ContextProviderConfig,
    *,
    transient: bool = False,
    ready_file: bool | None = None,
) -> ContextProvider:
    """The provider the profile selects (STYLE rule 10: an explicit table), ready to ``retrieve``.

    Provider modules are imported only here, lazily, so ``dcx status`` never
    loads one. ``transient`` (``dcx recall``): the provider must persist
    nothing in the workspace, so OpenViking writes its CLI config to a temp
    directory that is removed after the call instead of ``private/openviking/``.
    ``ready_file`` (default: not ``transient``) lets OpenViking keep its preflight's
    answer in ``private/openviking/ready.json`` (SPEC §6.4 v4): ``dcx recall`` passes
    True (the file holds no query, result or packet); the workbench and
    ``prepare --show-content`` leave it False and keep the answer in-process only.
    The ``extension`` provider is handed the extension lifecycle's resolver:
    the provider plane never imports the extension plane.
    """
    config = validate_config(cp.provider, cp.namespace, cp.config)
    if cp.provider == "none":
        return UnavailableProvider("none", "context_provider_disabled")
    if cp.provider == "bm25":
        from dcx.providers.bm25 import Bm25Provider

        return Bm25Provider(ws)
    if cp.provider == "openviking":
        from dcx.providers.openviking import OpenVikingProvider

        return OpenVikingProvider(ws, config, transient=transient, ready_file=ready_file)
    from dcx.extensions.resolve import resolve
    from dcx.providers.extension import ExtensionProvider

    try:
        return ExtensionProvider(ws, config, resolve=resolve)
    except DcxError:
        raise
    except Exception:  # a provider that cannot even start fails open
        return UnavailableProvider("extension", "provider_unavailable")
