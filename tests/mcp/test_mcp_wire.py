"""`dcx mcp` on the raw wire, and before it serves: malformed JSON-RPC, start-up errors, import budget."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import DCX_EXE
from tests.support.mcp import server_env

SDK = ("mcp", "mcp_types", "pydantic", "pydantic_core", "anyio", "starlette", "httpx")


def test_malformed_messages_get_protocol_errors_and_the_server_goes_on(example: Path) -> None:
    proc = subprocess.Popen(
        [DCX_EXE, "-C", str(example), "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=server_env(PATH="/usr/bin:/bin"),
    )
    assert proc.stdin is not None and proc.stdout is not None

    def send(message: object) -> None:
        proc.stdin.write((message if isinstance(message, str) else json.dumps(message)) + "\n")
        proc.stdin.flush()

    def answer() -> dict:
        return json.loads(proc.stdout.readline())

    try:
        send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "0"},
                },
            }
        )
        assert answer()["result"]["serverInfo"]["name"] == "dcx"
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send("this is not json {")
        assert answer() == {  # JSON-RPC's parse error, id null (SPEC §14 v4)
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32700, "message": "Parse error: the line is not JSON"},
        }
        send(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "log", "arguments": "no"},
            }
        )
        assert answer()["error"]["code"] == -32602  # arguments must be an object
        send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"arguments": {}}})
        assert answer()["error"]["code"] == -32602  # no tool name
        send(
            {
                "jsonrpc": "2.0",
                "id": 4,
                "method": "tools/call",
                "params": {"name": "log", "arguments": {"limit": "x"}},
            }
        )
        typed = answer()["result"]
        assert typed["isError"] is True and typed["structuredContent"]["code"] == "invalid_type"
        send({"jsonrpc": "2.0", "id": 5, "method": "tools/list"})
        assert len(answer()["result"]["tools"]) >= 14
    finally:
        proc.stdin.close()
        code = proc.wait(timeout=30)
    assert code == 0
    assert proc.stderr.read() == ""  # nothing on stderr: the SDK's logging is silenced too


def test_start_up_errors_are_the_cli_errors(dcx, tmp_path: Path, example: Path) -> None:
    missing = dcx("-C", str(tmp_path / "nowhere"), "mcp", "--format", "json")
    assert missing.exit_code == 3
    assert json.loads(missing.stdout)["error"]["code"] == "workspace_not_found"
    bad_agent = dcx("-C", str(example), "mcp", "--agent-id", "not a token")
    assert bad_agent.exit_code == 2 and bad_agent.stderr.startswith("error: --agent-id")


@pytest.mark.parametrize("args", [["--help"], ["mcp", "--help"], ["status", "--format", "json"]])
def test_only_serving_imports_the_sdk(example: Path, args: list[str]) -> None:
    code = (
        "import sys\n"
        "from dcx.cli import main\n"
        "try:\n"
        f"    main({['-C', str(example), *args]!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        f"sdk = sorted(m for m in sys.modules if m.split('.')[0] in {SDK!r})\n"
        "print('SDK', sdk, file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert "SDK []" in proc.stderr, proc.stderr
