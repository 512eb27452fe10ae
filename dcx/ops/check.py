"""``dcx status --check``: live checks, for when reading state is not enough.

Unlike plain ``status`` this touches providers: each enabled source's adapter
health and locator (a git source's ref resolves; an mcp source's server starts and lists), and whether the recall provider can answer (the bm25
index opens read-only, the extension resolves to a ready revision, the ``ov``
server answers recall's own preflight and a tiny ``find``). It reads only: no
scan, no hash, no write.
"""

from __future__ import annotations

from typing import Any

from dcx.core.errors import InternalError
from dcx.core.workspace import Workspace
from dcx.state.activation import Activation

CHECK_TIMEOUT = 5.0


def _sources(ws: Workspace, state: Activation) -> list[dict[str, Any]]:
    from dcx.core.walk import LocatorError, resolve_locator
    from dcx.sources.base import SourceUnavailable
    from dcx.sources.registry import Providers

    profile, registry = state.settings()
    providers = Providers(ws, profile, registry, persist=False)
    rows = []
    for source in registry.sources:
        if not source.enabled:
            continue
        row: dict[str, Any] = {"source_id": source.source_id, "status": "ok", "reason_code": None}
        try:
            provider = providers.get(source.provider_id)
            health = provider.health()
            if health.status != "healthy":
                row.update(status=health.status, reason_code=health.reason_code)
            elif (adapter := registry.binding(source.provider_id).adapter) == "local-file":
                resolve_locator(ws, source.locator)
            elif adapter in ("git", "mcp"):
                import time

                # an mcp server starts a process that may import a whole SDK: a scan's budget
                seconds = CHECK_TIMEOUT if adapter == "git" else profile.scan_timeout_seconds
                provider.check(source, time.monotonic() + seconds)  # type: ignore[attr-defined]
        except SourceUnavailable as exc:
            row.update(status="unavailable", reason_code=exc.reason_code)
        except LocatorError as exc:
            row.update(status="unavailable", reason_code=exc.reason_code)
        except Exception:  # a check fails open like the scan it predicts
            row.update(status="unavailable", reason_code="provider_health_failed")
        rows.append(row)
    return rows


def _recall(ws: Workspace, state: Activation) -> dict[str, Any]:
    cp = state.settings()[0].context_provider
    if cp.provider == "none":
        return {"provider": "none", "status": "disabled", "reason_code": None}
    if cp.provider == "bm25":
        from dcx.providers.bm25_index import IndexUnavailable, index_path, open_read_only

        try:
            open_read_only(index_path(ws.index), busy_timeout=1.0)[0].close()
        except IndexUnavailable as exc:
            return {"provider": "bm25", "status": "unavailable", "reason_code": exc.reason_code}
        return {"provider": "bm25", "status": "ready", "reason_code": None}
    if cp.provider == "extension":
        from dcx.extensions.resolve import resolve

        readiness, binding = resolve(ws, cp.config.get("extension_id"))
        ready = binding is not None
        return {
            "provider": "extension",
            "status": "ready" if ready else "unavailable",
            "reason_code": None if ready else readiness["status"],
            "next_action": readiness.get("next_action"),
        }
    from dcx.evidence.recall import make_provider
    from dcx.providers.openviking import OpenVikingProvider

    provider = make_provider(
        ws, cp, transient=True
    )  # the same provider, config and preflight as recall
    if not isinstance(
        provider, OpenVikingProvider
    ):  # the one provider left once the others answered
        raise InternalError(f"check: provider {cp.provider} has no preflight")
    reason = provider.check(CHECK_TIMEOUT, cp.scope_ref)
    return {
        "provider": "openviking",
        "status": "ready" if reason is None else "unavailable",
        "reason_code": reason,
    }


def live_checks(ws: Workspace, state: Activation) -> dict[str, Any]:
    if state.profile is None or state.registry is None:
        return {"sources": [], "recall": None}
    return {"sources": _sources(ws, state), "recall": _recall(ws, state)}
