"""Drive the real `dcx mcp` process with the MCP SDK's own stdio client."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import IO, Any

import anyio

from tests.support.cli import DCX_EXE
from tests.support.workspace import FIXED_CHAIN_NONCE, FIXED_NOW


def server_env(**extra: str) -> dict[str, str]:
    """What the host gives the server: the SDK's default environment (HOME, PATH…) plus these."""
    return {
        "DCX_NOW": FIXED_NOW,
        "DCX_CHAIN_NONCE": FIXED_CHAIN_NONCE,
        "HOME": os.environ["HOME"],
        **extra,
    }


@asynccontextmanager
async def connect(
    root: Path, *args: str, errlog: IO[str] | None = None, **env: str
) -> AsyncIterator[Any]:
    """An initialised SDK ``Client`` on ``dcx -C root mcp ARGS`` (a real subprocess on stdio)."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=DCX_EXE, args=["-C", str(root), "mcp", *args], env=server_env(**env)
    )
    transport = stdio_client(params, errlog=errlog or sys.stderr)
    async with Client(transport, read_timeout_seconds=60) as client:
        yield client


def run(main: Callable[[], Any]) -> Any:
    return anyio.run(main)


def data(result: Any) -> Any:
    """A successful tool result's data: the JSON text, which must equal the structured content."""
    assert not result.is_error, result.content[0].text
    parsed = json.loads(result.content[0].text)
    assert parsed == result.structured_content
    return parsed


def error(result: Any) -> dict[str, Any]:
    """A tool error's dcx error object (code, message, hint, exit_code)."""
    assert result.is_error, result.content[0].text
    parsed = json.loads(result.content[0].text)
    assert parsed == result.structured_content
    return parsed
