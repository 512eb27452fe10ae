"""The plugin worker: ``python -m dcx.sources.worker`` (SPEC §5.1).

Reads one ``dcx_source_worker_request_v0`` object on stdin, loads the one
entry point it names from ``dcx.source_providers``, makes the adapter, runs
one operation (``health``, ``scan`` or ``exact_read``) and writes one
``dcx_source_worker_response_v0`` object on stdout:
``{schema_version, ok, provider_id, version, result}`` or
``{schema_version, ok: false, reason_code}``.

Whatever the plugin prints goes to stderr (file descriptor 1 is pointed at 2
while it runs), so only the response reaches stdout. Exception text never
leaves this process: a failure is a reason code. The parent owns the
deadline and stops this process group when it passes.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

from dcx.sources.base import (
    ADAPTER_UNAVAILABLE,
    PROVIDER_CONFIGURATION_FAILED,
    PROVIDER_CONTRACT_INVALID,
    PROVIDER_SCAN_FAILED,
    READ_FAILED,
    ReadResult,
    ScanItem,
    ScanResult,
    SourceUnavailable,
    is_token,
)
from dcx.sources.registry import (
    ENTRY_POINT_GROUP,
    REQUEST_SCHEMA,
    RESPONSE_SCHEMA,
    read_to_json,
    scan_to_json,
    source_from_record,
)


def _fail(reason_code: str) -> dict[str, Any]:
    return {"schema_version": RESPONSE_SCHEMA, "ok": False, "reason_code": reason_code}


def handle(request: Any) -> dict[str, Any]:
    from importlib.metadata import entry_points

    if not isinstance(request, dict) or request.get("schema_version") != REQUEST_SCHEMA:
        return _fail(PROVIDER_CONTRACT_INVALID)
    operation = request.get("operation")
    failure = READ_FAILED if operation == "exact_read" else PROVIDER_SCAN_FAILED
    found = list(entry_points(group=ENTRY_POINT_GROUP, name=str(request.get("adapter"))))
    if not found:
        return _fail(ADAPTER_UNAVAILABLE)
    try:
        factory = found[0].load()
    except Exception:
        return _fail(ADAPTER_UNAVAILABLE)
    try:
        provider = factory(
            provider_id=request["provider_id"],
            config=request.get("config") or {},
            goal_root=request["goal_root"],
        )
    except SourceUnavailable as exc:
        return _fail(
            exc.reason_code if is_token(exc.reason_code, 120) else PROVIDER_CONFIGURATION_FAILED
        )
    except Exception:
        return _fail(PROVIDER_CONFIGURATION_FAILED)
    deadline = time.monotonic() + float(request.get("timeout_seconds") or 1)
    try:
        if operation == "health":
            health = provider.health()
            result: dict[str, Any] = {"status": health[0], "reason_code": health[1]}
        elif operation == "scan":
            answer = provider.scan(
                source_from_record(request["source"]),
                request.get("after_cursor"),
                int(request["limit"]),
                deadline,
                request["observed_at"],
            )
            if not isinstance(answer, ScanResult):
                return _fail(PROVIDER_CONTRACT_INVALID)
            result = scan_to_json(answer)
        elif operation == "exact_read":
            read = provider.exact_read(
                source_from_record(request["source"]),
                ScanItem(**request["item"]),
                int(request["max_bytes"]),
                deadline,
                request["observed_at"],
            )
            if not isinstance(read, ReadResult):
                return _fail(PROVIDER_CONTRACT_INVALID)
            result = read_to_json(read)
        else:
            return _fail(PROVIDER_CONTRACT_INVALID)
    except SourceUnavailable as exc:
        return _fail(exc.reason_code if is_token(exc.reason_code, 120) else failure)
    except Exception:
        return _fail(failure)
    return {
        "schema_version": RESPONSE_SCHEMA,
        "ok": True,
        "provider_id": getattr(provider, "provider_id", None),
        "version": getattr(provider, "version", None),
        "result": result,
    }


def main() -> int:
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # a plugin's prints (Python or C) go to stderr, never into the response
    sys.stdout = sys.stderr
    try:
        request = json.loads(sys.stdin.buffer.read())
    except (ValueError, UnicodeDecodeError):
        request = None
    try:
        response = handle(request)
        data = json.dumps(response, ensure_ascii=False).encode("utf-8")
    except Exception:  # e.g. a result that is not JSON-serialisable
        data = json.dumps(_fail(PROVIDER_CONTRACT_INVALID)).encode()
    out.write(data)
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
