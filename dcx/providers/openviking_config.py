"""The ``ovcli.conf`` dcx writes for OpenViking (SPEC §6.4).

Its config rules live with the profile (``dcx.state.provider_config``):
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
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dcx.core.fsutil import read_bytes, write_private
from dcx.core.workspace import Workspace

CONF_NAME = "ovcli.conf"


def conf_bytes(config: dict[str, Any], http_timeout: float) -> bytes:
    body: dict[str, Any] = {
        k: config[k] for k in ("url", "account", "user", "api_key") if k in config
    }
    body["timeout"] = http_timeout
    body["echo_command"] = False
    return (json.dumps(body, sort_keys=True) + "\n").encode()


@contextlib.contextmanager
def cli_conf(
    ws: Workspace, config: dict[str, Any], http_timeout: float, *, transient: bool
) -> Iterator[Path]:
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
        current = read_bytes(path)
    except OSError:
        current = None
    if current != data:
        write_private(path, data)  # its folders are made 0700, none of them a link (SPEC §3.5)
    yield path


def resolve_binary(ws: Workspace, binary: str) -> str:
    """A relative path (with a '/') is taken from the goal root; a bare name stays for PATH."""
    binary = os.path.expanduser(binary)
    if "/" in binary and not binary.startswith("/"):
        return str(ws.root / binary)
    return binary
