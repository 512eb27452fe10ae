"""Which adapter serves a binding: built-ins by name, plugins by declaration (SPEC §5.1).

- Built-in adapters (``local-file``, ``git``, ``mcp``) live in ``BUILTINS`` and
  run in-process: local-file checks its deadline between files; git passes the
  remaining time to each ``git`` process it runs; mcp bounds each session with
  its server (SPEC §15.1) by the deadline, in-process and in its relay.
- Any other ``adapter`` name must be an installed entry point of the group
  ``dcx.source_providers`` **and** be declared by a ``[[bindings]]`` entry of
  ``sources.toml``; an installed plugin nobody declared is never loaded. A
  plugin runs in a worker subprocess (``python -m dcx.sources.worker``)
  through the one process boundary, so its deadline holds even if it hangs:
  the whole process group is stopped at the deadline.
- A plugin instance whose ``provider_id`` differs from the declaring binding
  is refused (``runtime_provider_identity_mismatch``).

Plugin entry points name a factory ``factory(*, provider_id, config,
goal_root)`` returning an object with the port's ``provider_id``,
``version``, ``health()``, ``scan(...)`` and ``exact_read(...)``
(``dcx.sources.base``); docs/sources.md has the full contract.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from dcx.core.workspace import Workspace
from dcx.sources.base import (
    ADAPTER_UNAVAILABLE,
    IDENTITY_MISMATCH,
    PROVIDER_CONFIGURATION_FAILED,
    PROVIDER_CONTRACT_INVALID,
    PROVIDER_SCAN_FAILED,
    READ_FAILED,
    READ_TIMEOUT,
    SCAN_TIMEOUT,
    Health,
    ReadResult,
    ScanItem,
    ScanResult,
    ScanTelemetry,
    SourceProvider,
    SourceUnavailable,
    failed_read,
    is_token,
)
from dcx.state.profile import Binding, Profile, Registry, Source

ENTRY_POINT_GROUP = "dcx.source_providers"
REQUEST_SCHEMA = "dcx_source_worker_request_v0"
RESPONSE_SCHEMA = "dcx_source_worker_response_v0"
WORKER_MODULE = "dcx.sources.worker"
WORKER_PYTHON_ENV = (
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONPYCACHEPREFIX",
)  # passed through to the worker
ProgressFactory = Callable[[str], "Callable[[int], None] | None"]


def _local_file(
    ws: Workspace,
    binding: Binding,
    profile: Profile,
    progress: ProgressFactory | None,
    persist: bool = True,
) -> SourceProvider:
    from dcx.sources.local_file import LocalFileProvider

    return LocalFileProvider(
        ws,
        binding.provider_id,
        binding.config,
        max_scan_bytes=profile.max_scan_bytes,
        progress=progress,
        persist=persist,
    )


def _git(
    ws: Workspace,
    binding: Binding,
    profile: Profile,
    progress: ProgressFactory | None,
    persist: bool = True,
) -> SourceProvider:
    from dcx.sources.git import GitProvider

    return GitProvider(
        ws, binding.provider_id, binding.config
    )  # writes no private state: persist is moot


def _mcp(
    ws: Workspace,
    binding: Binding,
    profile: Profile,
    progress: ProgressFactory | None,
    persist: bool = True,
) -> SourceProvider:
    from dcx.sources.mcp_source import McpProvider  # the SDK itself only on the first session

    return McpProvider(
        ws,
        binding.provider_id,
        binding.config,
        max_scan_bytes=profile.max_scan_bytes,
        persist=persist,
    )


Factory = Callable[..., SourceProvider]  # (ws, binding, profile, progress[, persist=False])
BUILTINS: dict[str, Factory] = {"local-file": _local_file, "git": _git, "mcp": _mcp}


def installed_adapter(name: str) -> bool:
    from importlib.metadata import entry_points

    return any(True for _ in entry_points(group=ENTRY_POINT_GROUP, name=name))


class Providers:
    """The providers of one registry, created on first use and kept for the run."""

    def __init__(
        self,
        ws: Workspace,
        profile: Profile,
        registry: Registry,
        *,
        progress: ProgressFactory | None = None,
        builtins: dict[str, Factory] | None = None,
        persist: bool = True,
    ) -> None:
        self.ws = ws
        self.profile = profile
        self.registry = registry
        self.progress = progress
        self.persist = (
            persist  # False: built-in adapters write no private state (prepare --show-content)
        )
        self.builtins = dict(BUILTINS if builtins is None else builtins)
        self._made: dict[str, SourceProvider | SourceUnavailable] = {}

    def get(self, provider_id: str) -> SourceProvider:
        """The provider of a declared binding; ``SourceUnavailable`` with the reason otherwise."""
        if provider_id not in self._made:
            self._made[provider_id] = self._make(provider_id)
        made = self._made[provider_id]
        if isinstance(made, SourceUnavailable):
            raise made
        return made

    def _make(self, provider_id: str) -> SourceProvider | SourceUnavailable:
        binding = next((b for b in self.registry.bindings if b.provider_id == provider_id), None)
        if binding is None:  # the registry loader already refuses this; kept as a guard
            return SourceUnavailable(ADAPTER_UNAVAILABLE)
        factory = self.builtins.get(binding.adapter)
        if factory is None:
            if not installed_adapter(binding.adapter):
                return SourceUnavailable(ADAPTER_UNAVAILABLE)
            return PluginProvider(
                self.ws, binding, health_timeout=self.profile.scan_timeout_seconds
            )
        try:
            provider = (
                factory(self.ws, binding, self.profile, self.progress)
                if self.persist
                else factory(self.ws, binding, self.profile, self.progress, persist=False)
            )
        except SourceUnavailable as exc:
            return exc
        except Exception:
            return SourceUnavailable(PROVIDER_CONFIGURATION_FAILED)
        if getattr(provider, "provider_id", None) != binding.provider_id:
            return SourceUnavailable(IDENTITY_MISMATCH)
        return provider


class PluginProvider:
    """A declared plugin adapter, run call by call in a bounded worker subprocess."""

    def __init__(self, ws: Workspace, binding: Binding, *, health_timeout: float = 10) -> None:
        self.ws = ws
        self.health_timeout = health_timeout
        self.provider_id = binding.provider_id
        self.adapter = binding.adapter
        self.config = binding.config
        self.version: str | None = None

    def health(self) -> Health:
        try:
            result = self._call(
                "health",
                {},
                time.monotonic() + self.health_timeout,
                timeout_reason="health_timeout",
            )
            status, reason = result.get("status"), result.get("reason_code")
            if status not in ("healthy", "degraded", "unavailable") or (
                reason is not None and not is_token(reason)
            ):
                return Health("unavailable", PROVIDER_CONTRACT_INVALID)
            return Health(status, reason)
        except SourceUnavailable as exc:
            return Health("unavailable", exc.reason_code)

    def scan(
        self,
        source: Source,
        after_cursor: str | None,
        limit: int,
        deadline: float,
        observed_at: str,
    ) -> ScanResult:
        payload = {
            "source": source_record(source),
            "after_cursor": after_cursor,
            "limit": limit,
            "observed_at": observed_at,
        }
        result = self._call("scan", payload, deadline, timeout_reason=SCAN_TIMEOUT)
        try:
            return scan_from_json(result)
        except (TypeError, ValueError, KeyError):
            raise SourceUnavailable(PROVIDER_CONTRACT_INVALID) from None

    def exact_read(
        self, source: Source, item: ScanItem, max_bytes: int, deadline: float, observed_at: str
    ) -> ReadResult:
        payload = {
            "source": source_record(source),
            "item": item._asdict(),
            "max_bytes": max_bytes,
            "observed_at": observed_at,
        }
        # room for the content, JSON-escaped, beyond the boundary's default cap
        cap = 1_000_000 + 2 * max_bytes
        try:
            result = self._call(
                "exact_read",
                payload,
                deadline,
                timeout_reason=READ_TIMEOUT,
                cap=cap,
                failure_reason=READ_FAILED,
            )
        except SourceUnavailable as exc:
            return failed_read(item, observed_at, exc.reason_code)
        try:
            return read_from_json(result)
        except (TypeError, ValueError, KeyError):
            return failed_read(item, observed_at, PROVIDER_CONTRACT_INVALID)

    def _call(
        self,
        operation: str,
        payload: dict[str, Any],
        deadline: float,
        *,
        timeout_reason: str,
        cap: int = 1_000_000,
        failure_reason: str = PROVIDER_SCAN_FAILED,
    ) -> dict[str, Any]:
        from dcx.core.process import run_bounded

        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise SourceUnavailable(timeout_reason)
        request = {
            "schema_version": REQUEST_SCHEMA,
            "operation": operation,
            "adapter": self.adapter,
            "provider_id": self.provider_id,
            "config": self.config,
            "goal_root": str(self.ws.root),
            "timeout_seconds": remaining,
            **payload,
        }
        try:
            stdin = json.dumps(request, ensure_ascii=False).encode("utf-8")
        except (TypeError, ValueError):
            raise SourceUnavailable(PROVIDER_CONFIGURATION_FAILED) from None
        outcome = run_bounded(
            [sys.executable, "-m", WORKER_MODULE],
            timeout=remaining,
            stdin=stdin,
            # the worker must resolve the same dcx and the same entry points as this process,
            # and write bytecode (or not, or elsewhere) as this one was told to
            env_allow=WORKER_PYTHON_ENV,
            extra_env={"PYTHONPATH": os.pathsep.join(p for p in sys.path if p)},
            cwd=str(self.ws.root),
            cap=cap,
        )
        if outcome.status == "timeout":
            raise SourceUnavailable(timeout_reason)
        if outcome.status == "request_too_large":
            raise SourceUnavailable(PROVIDER_CONFIGURATION_FAILED)
        if outcome.status != "exited":
            raise SourceUnavailable(
                PROVIDER_CONTRACT_INVALID
                if outcome.status == "output_too_large"
                else failure_reason
            )
        try:
            response = json.loads(outcome.stdout)
        except (ValueError, UnicodeDecodeError):
            raise SourceUnavailable(PROVIDER_CONTRACT_INVALID) from None
        if not isinstance(response, dict) or response.get("schema_version") != RESPONSE_SCHEMA:
            raise SourceUnavailable(PROVIDER_CONTRACT_INVALID)
        if response.get("ok") is not True:
            reason = response.get("reason_code")
            raise SourceUnavailable(
                reason if isinstance(reason, str) and is_token(reason, 120) else failure_reason
            )
        if response.get("provider_id") != self.provider_id:
            raise SourceUnavailable(IDENTITY_MISMATCH)
        version = response.get("version")
        if version is not None and not is_token(version):
            raise SourceUnavailable(PROVIDER_CONTRACT_INVALID)
        self.version = version
        result = response.get("result")
        if not isinstance(result, dict):
            raise SourceUnavailable(PROVIDER_CONTRACT_INVALID)
        return result


def source_record(source: Source) -> dict[str, Any]:
    record = source._asdict()
    record["objectives"] = list(source.objectives)
    return record


def source_from_record(record: dict[str, Any]) -> Source:
    return Source(**{**record, "objectives": tuple(record["objectives"])})


_SCAN_KEYS = {"status", "items", "cursor_after", "reason_code", "telemetry"}
_ITEM_KEYS = set(ScanItem._fields)
_READ_KEYS = set(ReadResult._fields)


def scan_to_json(result: ScanResult) -> dict[str, Any]:
    return {
        "status": result.status,
        "items": [item._asdict() for item in result.items],
        "cursor_after": result.cursor_after,
        "reason_code": result.reason_code,
        "telemetry": {"result_cap_applied": bool(result.telemetry.result_cap_applied)},
    }


def scan_from_json(data: dict[str, Any]) -> ScanResult:
    """A worker's scan answer, strictly: unknown or missing keys are a contract breach."""
    if (
        set(data) != _SCAN_KEYS
        or not isinstance(data["items"], list)
        or not isinstance(data["telemetry"], dict)
    ):
        raise ValueError("scan keys")
    items = []
    for raw in data["items"]:
        if not isinstance(raw, dict) or set(raw) != _ITEM_KEYS:
            raise ValueError("item keys")
        items.append(ScanItem(**raw))
    capped = data["telemetry"].get("result_cap_applied", False)
    if set(data["telemetry"]) - {"result_cap_applied"} or not isinstance(capped, bool):
        raise ValueError("telemetry")
    return ScanResult(
        data["status"],
        tuple(items),
        data["cursor_after"],
        data["reason_code"],
        ScanTelemetry(result_cap_applied=capped),
    )


def read_to_json(result: ReadResult) -> dict[str, Any]:
    return result._asdict()


def read_from_json(data: dict[str, Any]) -> ReadResult:
    if set(data) != _READ_KEYS:
        raise ValueError("read keys")
    return ReadResult(**data)
