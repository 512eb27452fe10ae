"""OpenViking's preflight answer, remembered for a short while (SPEC §6.4 v4).

A recall's version and readiness checks (``ov version`` and ``ov status -o
json``) cost two ``ov`` processes before the one ``find``: most of a recall's
time against a live server. Their answer — both versions passed
``minimum_version`` and the server said it is healthy — is kept:

- **per process**, for the life of the process (the MCP server, the workbench,
  a ``prepare``), and
- **privately**, in ``private/openviking/ready.json`` (mode 0600), so that the
  next ``dcx recall`` process starts one ``ov`` process, not three.

Both expire after ``TTL_SECONDS``; both are keyed by a digest of what the
answer depends on (the resolved binary and its size and mtime, the server
URL, account, user, API key, ``minimum_version`` and ``HOME``, which holds
``ov``'s language setting), so another config or an upgraded ``ov`` is asked
afresh. The file holds that digest, the two versions and the time of the
check: no query, no result, no packet, no URL or key in the clear — so
``dcx recall``, which persists nothing of a recall, may write it. A recall
that fails after a remembered answer forgets it and asks again (so the
reason code is the preflight's, e.g. ``provider_service_unavailable``).
Only a passed preflight is remembered.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from typing import Any, NamedTuple

from dcx.core.canonical import content_digest
from dcx.core.fsutil import write_private
from dcx.core.workspace import Workspace

SCHEMA = "dcx_openviking_ready_v0"
FILE_NAME = "ready.json"
TTL_SECONDS = 60.0

_PROCESS: dict[str, tuple[float, Ready]] = {}  # key -> (time.monotonic() of the check, answer)


class Ready(NamedTuple):
    cli_version: str
    server_version: str


def cache_key(binary: str, config: dict[str, Any]) -> str:
    """The digest of everything the preflight's answer depends on."""
    path = shutil.which(binary) or binary
    try:
        stat = os.stat(path)
        identity: list[Any] = [os.path.realpath(path), str(stat.st_size), str(stat.st_mtime_ns)]
    except OSError:
        identity = [path, None, None]
    return content_digest(
        {
            "binary": identity,
            "config": {
                k: config.get(k) for k in ("url", "account", "user", "api_key", "minimum_version")
            },
            "home": os.environ.get("HOME", ""),
        }
    )[:32]


def _path(ws: Workspace):
    return ws.openviking / FILE_NAME


def lookup(ws: Workspace, key: str, *, use_file: bool) -> Ready | None:
    """The remembered answer for ``key`` younger than the TTL: this process's, else the file's."""
    held = _PROCESS.get(key)
    if held is not None and 0 <= time.monotonic() - held[0] <= TTL_SECONDS:
        return held[1]
    if not use_file:
        return None
    try:
        data = json.loads(_path(ws).read_bytes())
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(data, dict) or data.get("schema_version") != SCHEMA or data.get("key") != key:
        return None
    checked_at, cli, server = (
        data.get("checked_at"),
        data.get("cli_version"),
        data.get("server_version"),
    )
    if (
        isinstance(checked_at, bool)
        or not isinstance(checked_at, int | float)
        or not isinstance(cli, str)
        or not isinstance(server, str)
    ):
        return None
    age = time.time() - checked_at
    if not 0 <= age <= TTL_SECONDS:  # a check "from the future" (the clock moved back) is stale too
        return None
    ready = Ready(cli, server)
    _PROCESS[key] = (time.monotonic() - age, ready)
    return ready


def remember(ws: Workspace, key: str, ready: Ready, *, use_file: bool) -> None:
    """Keep a passed preflight for this process and, when ``use_file``, in the private file.
    A file that cannot be written is simply not kept (the next recall checks again)."""
    _PROCESS[key] = (time.monotonic(), ready)
    if not use_file:
        return
    body = {
        "schema_version": SCHEMA,
        "key": key,
        "cli_version": ready.cli_version,
        "server_version": ready.server_version,
        "checked_at": round(time.time(), 3),
    }
    try:
        folder = ws.openviking
        folder.mkdir(mode=0o700, parents=False, exist_ok=True)
        write_private(_path(ws), (json.dumps(body, sort_keys=True) + "\n").encode())
    except OSError:
        pass


def forget(ws: Workspace, key: str, *, use_file: bool) -> None:
    """Drop the remembered answer for ``key`` (a recall failed after using it)."""
    _PROCESS.pop(key, None)
    if not use_file:
        return
    try:
        data = json.loads(_path(ws).read_bytes())
        if isinstance(data, dict) and data.get("key") == key:
            _path(ws).unlink()
    except (OSError, ValueError, UnicodeDecodeError):
        pass
