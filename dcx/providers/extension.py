"""The ``extension`` context provider: an installed advisory extension over a subprocess (SPEC §6.5).

Per call: resolve readiness (re-read, so ``dcx ext`` repairs recover without a
profile edit) → build the ``decision_context_advisory_retrieve_request_v0``
object → run the *pinned* argv through the one process boundary with the
allow-listed environment plus the manifest's ``env`` names, within
min(request timeout, manifest timeout, the caller's deadline) → check the
response exactly → a ``Retrieval``.

Every expected failure is an ``unavailable`` retrieval with a reason code and
the readiness packet; nothing the process wrote (stdout beyond the validated
response, stderr, exit text) and no path reaches the result. The one detail
kept for diagnostics is ``last_detail``: which fields were missing/unknown or
which rule failed — in-process only, never in a receipt.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from typing import Any

from dcx.core.clock import clock_from_env
from dcx.core.errors import InvalidInput
from dcx.core.process import run_bounded
from dcx.core.workspace import Workspace
from dcx.packets.advisory import REQUEST, REQUEST_SCHEMA, check_response
from dcx.providers.base import (
    COMPLETED,
    Retrieval,
    RetrievalItem,
    RetrievalRequest,
    completed,
    unavailable,
)
from dcx.state.provider_config import validate_extension

NAME = "extension"
Resolver = Callable[[Workspace, Any], tuple[dict[str, Any], Any]]
MIN_BUDGET = 0.05  # seconds: below this there is no point spawning anything

# ProcessOutcome.status -> reason code
PROCESS_REASONS = {
    "timeout": "extension_timeout",
    "output_too_large": "response_too_large",
    "request_too_large": "request_too_large",
    "spawn_failed": "extension_spawn_failed",
}


def _reject_constant(name: str) -> float:
    # NaN/Infinity are not JSON; parse them so the score rule names the problem
    return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}[name]


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError("duplicate key")
        out[key] = value
    return out


class ExtensionProvider:
    """A ``ContextProvider`` backed by one installed, enabled, doctor-ready extension."""

    name = NAME

    def __init__(self, ws: Workspace, config: dict[str, Any], *, resolve: Resolver) -> None:
        """``resolve(ws, extension_id) -> (readiness packet, binding | None)``: the extension
        lifecycle's resolver (``dcx.extensions.resolve.resolve``), handed in by the caller."""
        self.ws = ws
        self.config = validate_extension(config)
        self.last_detail: str | None = None
        self.resolve = resolve
        self.provider_readiness, binding = resolve(ws, self.config.get("extension_id"))
        self.version = binding.version if binding else "unresolved"

    def retrieve(self, request: RetrievalRequest, *, deadline: float) -> Retrieval:
        clock = clock_from_env()
        started = clock.monotonic()
        self.last_detail = None
        packet, binding = self.resolve(self.ws, self.config.get("extension_id"))
        self.provider_readiness = packet
        self.version = binding.version if binding else "unresolved"

        def fail(code: str, detail: str | None = None, *, searched: bool = False) -> Retrieval:
            self.last_detail = detail or code
            return unavailable(
                request,
                NAME,
                code,
                provider_version=binding.version if binding else None,
                latency_ms=clock.elapsed_ms(started),
                search_performed=searched,
                provider_readiness=packet,
            )

        if binding is None:
            return fail(packet["status"])
        effective = min(
            float(request.timeout_seconds), float(binding.timeout_seconds)
        )  # what the request states
        budget = min(effective, deadline - time.monotonic())  # when the process is stopped
        if budget < MIN_BUDGET:
            return fail("extension_timeout", "no time left before the deadline")
        try:
            body = REQUEST.check(
                {
                    "schema_version": REQUEST_SCHEMA,
                    "operation": "retrieve",
                    "namespace": request.namespace,
                    "scope_ref": request.scope_ref,
                    "query": request.query,
                    "query_summary": request.query_summary,
                    "max_results": request.max_results,
                    "timeout_seconds": effective,  # the stated limit; the kill comes at `budget`
                    "observed_at": request.observed_at,
                }
            )
        except InvalidInput as exc:
            return fail("extension_request_invalid", exc.field)
        stdin = json.dumps(body, ensure_ascii=False, allow_nan=False).encode()
        out = run_bounded(
            binding.argv, timeout=budget, stdin=stdin, env_allow=binding.env, cwd=str(self.ws.root)
        )
        if out.status != "exited":
            return fail(PROCESS_REASONS[out.status], searched=out.status != "spawn_failed")
        if out.returncode != 0:
            return fail("extension_exit_nonzero", f"exit status {out.returncode}", searched=True)
        try:
            parsed = json.loads(
                out.stdout.decode("utf-8"),
                parse_constant=_reject_constant,
                object_pairs_hook=_unique_keys,
            )
        except (UnicodeDecodeError, ValueError):
            return fail("response_not_json", searched=True)
        if not isinstance(parsed, dict):
            return fail("response_not_json", "not a JSON object", searched=True)
        try:
            response = check_response(parsed, max_results=request.max_results)
        except InvalidInput as exc:
            # the message names fields and rules only (never values), but it may
            # echo extension-chosen field names, so it stays in-process
            return fail("provider_contract_invalid", exc.message, searched=True)
        latency = clock.elapsed_ms(started)
        if response["status"] != COMPLETED:
            return unavailable(
                request,
                NAME,
                response["reason_code"],
                provider_version=binding.version,
                latency_ms=latency,
                search_performed=True,
                provider_readiness=packet,
            )
        items = tuple(
            RetrievalItem(i["resource_ref"], i["summary"], i["content"], i["score"])
            for i in response["items"]
        )
        return completed(
            request,
            NAME,
            items,
            provider_version=binding.version,
            latency_ms=latency,
            provider_readiness=packet,
        )
