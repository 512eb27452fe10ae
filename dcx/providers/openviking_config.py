"""OpenViking's private provider config (SPEC §6.4) and the ``ovcli.conf`` dcx writes.

``[context_provider.config]`` keys, all optional: ``binary`` (default ``ov``:
a command on PATH, an absolute path, or a path relative to the goal root),
``minimum_version`` (default ``0.5.0``), ``url``, ``account``, ``user``,
``api_key``, ``result_levels`` (a non-empty, sorted subset of {0, 1, 2}; sent
as ``-L``). Namespace ``reward_memory`` always needs L2 records: it implies
``[2]`` and rejects any other explicit setting. Messages name the key, never
its value (``api_key`` and ``url`` are private).

dcx never uses the person's own ``~/.openviking/ovcli.conf``: it writes its own
(mode 0600, ``echo_command`` false, an HTTP ``timeout`` within the deadline)
and passes it in ``OPENVIKING_CLI_CONFIG_FILE``.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dcx.core.errors import InvalidInput
from dcx.core.fsutil import write_private
from dcx.core.workspace import Workspace

FIELD = "context_provider.config"
KEYS = ("binary", "minimum_version", "url", "account", "user", "api_key", "result_levels")
DEFAULT_MINIMUM_VERSION = "0.5.0"
REWARD_MEMORY = "reward_memory"
VERSION_RE = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")
CONF_NAME = "ovcli.conf"


def _bad(key: str, message: str, code: str = "invalid_field") -> InvalidInput:
    return InvalidInput(f"{FIELD}.{key}: {message}", field=f"{FIELD}.{key}", code=code)


def parse_version(text: str) -> tuple[int, int, int] | None:
    match = VERSION_RE.fullmatch(text.strip())
    if not match:
        return None
    return int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)


def _text(config: dict[str, Any], key: str, *, limit: int = 2048) -> str | None:
    if key not in config:
        return None
    value = config[key]
    if not isinstance(value, str) or not value.strip() or len(value) > limit or any(ord(c) < 32 for c in value):
        raise _bad(key, f"expected non-empty text of at most {limit} characters", "invalid_type")
    return value


def _levels(value: Any) -> list[int]:
    if not isinstance(value, list) or not value:
        raise _bad("result_levels", "expected a non-empty list drawn from 0, 1, 2", "invalid_type")
    if any(isinstance(v, bool) or not isinstance(v, int) or v not in (0, 1, 2) for v in value):
        raise _bad("result_levels", "every level must be 0, 1 or 2", "out_of_range")
    if any(a >= b for a, b in itertools.pairwise(value)):
        raise _bad("result_levels", "levels must be sorted and distinct (e.g. [0, 2])")
    return list(value)


def validate_config(config: dict[str, Any], *, namespace: str) -> dict[str, Any]:
    """The config with defaults filled, or ``InvalidInput`` (exit 2) naming the key."""
    for key in sorted(config):
        if key not in KEYS:
            raise _bad(key, f"unknown key for provider openviking (allowed: {', '.join(KEYS)})", "unknown_field")
    out: dict[str, Any] = {
        "binary": _text(config, "binary") or "ov",
        "minimum_version": _text(config, "minimum_version", limit=32) or DEFAULT_MINIMUM_VERSION,
    }
    if parse_version(out["minimum_version"]) is None:
        raise _bad("minimum_version", "expected a version such as 0.5.0")
    url = _text(config, "url")
    if url is not None and not url.lower().startswith(("http://", "https://")):
        raise _bad("url", "expected an http:// or https:// URL")
    for key, value in (("url", url), ("account", _text(config, "account", limit=128)),
                       ("user", _text(config, "user", limit=128)), ("api_key", _text(config, "api_key"))):
        if value is not None:
            out[key] = value
    levels = _levels(config["result_levels"]) if "result_levels" in config else None
    if namespace == REWARD_MEMORY:
        if levels is not None and levels != [2]:
            raise _bad("result_levels", "namespace reward_memory requires [2] (L2 records only)")
        levels = [2]
    out["result_levels"] = levels
    return out


def conf_bytes(config: dict[str, Any], http_timeout: float) -> bytes:
    body: dict[str, Any] = {k: config[k] for k in ("url", "account", "user", "api_key") if k in config}
    body["timeout"] = http_timeout
    body["echo_command"] = False
    return (json.dumps(body, sort_keys=True) + "\n").encode()


@contextlib.contextmanager
def cli_conf(ws: Workspace, config: dict[str, Any], http_timeout: float, *, transient: bool) -> Iterator[Path]:
    """The ``ovcli.conf`` path for one retrieval.

    Normally ``private/openviking/ovcli.conf``, rewritten only when its bytes
    change. ``transient`` (``dcx recall``, which persists nothing in the
    workspace): a fresh 0700 temp directory, removed when the call ends.
    """
    data = conf_bytes(config, http_timeout)
    if transient:
        folder = Path(tempfile.mkdtemp(prefix="dcx-ov-"))
        try:
            write_private(folder / CONF_NAME, data)
            yield folder / CONF_NAME
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        return
    path = ws.openviking / CONF_NAME
    try:
        current = path.read_bytes()
    except OSError:
        current = None
    if current != data:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.parent.chmod(0o700)
        write_private(path, data)
    yield path


def resolve_binary(ws: Workspace, binary: str) -> str:
    """A relative path (with a '/') is taken from the goal root; a bare name stays for PATH."""
    binary = os.path.expanduser(binary)
    if "/" in binary and not binary.startswith("/"):
        return str(ws.root / binary)
    return binary
