"""Helpers shared by the recall tests: enabled workspaces, requests, scripted providers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dcx.core.workspace import Workspace
from dcx.providers.base import COMPLETED, Retrieval, RetrievalItem, RetrievalRequest
from tests.support.workspace import FIXED_NOW


def registry_toml(*sources: dict[str, Any], extra_bindings: str = "") -> str:
    out = [
        'schema_version = "decision_source_registry_v0"',
        "[[bindings]]",
        'provider_id = "files"',
        'adapter = "local-file"',
        extra_bindings,
    ]
    for source in sources:
        body = {
            "provider_id": "files",
            "source_kind": "document",
            "priority": "p0",
            "evidence_level": "s1",
            "objectives": ["latency"],
            "scan_mode": "incremental",
            "exact_read_policy": "always",
            "freshness_seconds": 3600,
            **source,
        }
        out.append("[[sources]]")
        for key, value in body.items():
            out.append(f"{key} = {_toml(value)}")
    return "\n".join(out) + "\n"


def _toml(value: Any) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + " }"
    return json.dumps(value)


def enable(
    root: Path,
    *,
    provider: str = "bm25",
    config: dict[str, Any] | None = None,
    namespace: str = "decision-context",
    max_results: int = 4,
    timeout: float = 10,
    extra: str = "",
    sources: tuple[dict[str, Any], ...] = ({"source_id": "docs", "locator": "docs"},),
) -> Workspace:
    """Enable ``root`` (an initialised workspace) for agent-a with the given provider."""
    lines = [
        'schema_version = "decision_context_profile_v0"',
        'goal_id = "goal-test"',
        "enabled = true",
        'enabled_agents = ["agent-a"]',
        "[context_provider]",
        f'provider = "{provider}"',
        f'namespace = "{namespace}"',
        f"max_results = {max_results}",
        f"timeout_seconds = {timeout}",
        extra,
    ]
    if config:
        lines.append("[context_provider.config]")
        lines.extend(f"{k} = {_toml(v)}" for k, v in config.items())
    (root / ".decision-context" / "profile.toml").write_text("\n".join(lines) + "\n")
    (root / ".decision-context" / "sources.toml").write_text(registry_toml(*sources))
    return Workspace(root)


def request(**overrides: Any) -> RetrievalRequest:
    base = {
        "namespace": "decision-context",
        "scope_ref": "",
        "query": "how do I roll back the cache TTL change",
        "query_summary": "TTL rollback steps",
        "max_results": 3,
        "timeout_seconds": 10.0,
        "observed_at": FIXED_NOW,
    }
    base.update(overrides)
    return RetrievalRequest(**base)


def answer(
    req: RetrievalRequest, items: tuple[RetrievalItem, ...] = (), **overrides: Any
) -> Retrieval:
    """A contract-abiding completed retrieval for ``req`` (override fields to break it)."""
    base = {
        "provider": "bm25",
        "namespace": req.namespace,
        "status": COMPLETED,
        "reason_code": None,
        "provider_version": "test-1",
        "query_summary": req.query_summary,
        "observed_at": req.observed_at,
        "search_performed": True,
        "read_performed": bool(items),
        "requested_limit": req.max_results,
        "latency_ms": 0,
        "items": items,
    }
    base.update(overrides)
    return Retrieval(**base)


def item(n: int = 1, **overrides: Any) -> RetrievalItem:
    base = {
        "resource_ref": f"res-{n}",
        "summary": f"Match {n}",
        "content": f"content {n}",
        "score": 1.0 / n,
    }
    base.update(overrides)
    return RetrievalItem(**base)


class ScriptedProvider:
    """A provider whose answer (or exception) the test decides: the guard is under test, not it."""

    version = "test-1"

    def __init__(
        self, result: Any = None, *, raises: BaseException | None = None, name: str = "bm25"
    ) -> None:
        self.result = result
        self.raises = raises
        self.name = name
        self.calls = 0

    def retrieve(self, request: RetrievalRequest, *, deadline: float) -> Retrieval:
        self.calls += 1
        if self.raises is not None:
            raise self.raises
        return self.result(request) if callable(self.result) else self.result
