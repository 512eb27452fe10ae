"""`dcx mcp` answers every malformed message (SPEC §14 v4), driven by raw lines, not the SDK.

A real ``dcx mcp`` process; each line below is written by hand to its stdin.
The oracle is JSON-RPC 2.0 itself: a line that is not JSON is ``-32700`` with
``id: null``; a request without ``jsonrpc: "2.0"``, with a non-string method,
an invalid id (an object, a fraction, ``true``, ``null``), or a batch (MCP has
none) is ``-32600`` (with the request's id when it has a usable one); an
unknown method is ``-32601``; a request before ``initialize`` gets the SDK's
documented init-gate code (``-32602``, ``mcp.server.runner``). Every message
carrying an id gets exactly one answer, and the server keeps serving.
"""

from __future__ import annotations

import json
import select
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import DCX_EXE
from tests.support.mcp import server_env

INIT = {
    "jsonrpc": "2.0",
    "id": "init",
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}


class Wire:
    def __init__(self, root: Path) -> None:
        self.proc = subprocess.Popen(
            [DCX_EXE, "-C", str(root), "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=server_env(PATH="/usr/bin:/bin"),
        )

    def send(self, line: str | bytes | object) -> None:
        assert self.proc.stdin is not None
        if not isinstance(line, str | bytes):
            line = json.dumps(line)
        data = line if isinstance(line, bytes) else line.encode()
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def answer(self, timeout: float = 30) -> dict | None:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            return None
        line = self.proc.stdout.readline()
        return json.loads(line) if line else None

    def close(self) -> tuple[int, str]:
        assert self.proc.stdin is not None and self.proc.stderr is not None
        self.proc.stdin.close()
        rest = self.proc.stdout.read() if self.proc.stdout else b""
        code = self.proc.wait(timeout=30)
        return code, rest.decode() + self.proc.stderr.read().decode()


@pytest.fixture
def wire(example: Path):
    w = Wire(example)
    yield w
    if w.proc.poll() is None:
        w.proc.kill()
        w.proc.wait()


def test_a_request_before_initialize_gets_the_sdk_s_init_gate_code(wire: Wire) -> None:
    wire.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    answer = wire.answer()
    assert answer is not None and answer["id"] == 1 and answer["error"]["code"] == -32602


MALFORMED = [
    ("not_json", "this is not json {", None, -32700),
    ("truncated", '{"jsonrpc": "2.0", "id": 5, "method": "ping"', None, -32700),
    ("invalid_utf8", b'{"jsonrpc": "2.0", "id": 6, "method": "\xff"}', None, -32700),
    ("no_jsonrpc", {"id": 10, "method": "tools/list"}, 10, -32600),
    ("jsonrpc_1", {"jsonrpc": "1.0", "id": 11, "method": "tools/list"}, 11, -32600),
    ("method_number", {"jsonrpc": "2.0", "id": 12, "method": 5}, 12, -32600),
    ("method_missing", {"jsonrpc": "2.0", "id": 13}, 13, -32600),
    ("id_object", {"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}, None, -32600),
    ("id_fraction", {"jsonrpc": "2.0", "id": 8.5, "method": "ping"}, None, -32600),
    ("id_true", {"jsonrpc": "2.0", "id": True, "method": "ping"}, None, -32600),
    ("id_null", {"jsonrpc": "2.0", "id": None, "method": "ping"}, None, -32600),
    ("params_scalar", {"jsonrpc": "2.0", "id": 14, "method": "ping", "params": 5}, 14, -32600),
    ("batch", [{"jsonrpc": "2.0", "id": 15, "method": "ping"}], None, -32600),
    ("empty_batch", [], None, -32600),
    ("scalar", "42", None, -32600),
    ("string", '"ping"', None, -32600),
    ("unknown_method", {"jsonrpc": "2.0", "id": 16, "method": "no/such"}, 16, -32601),
]


@pytest.mark.parametrize("name,line,answer_id,code", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_every_malformed_message_is_answered_and_the_server_goes_on(
    wire: Wire, name: str, line: object, answer_id: object, code: int
) -> None:
    wire.send(INIT)
    assert wire.answer()["result"]["serverInfo"]["name"] == "dcx"
    wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    wire.send(line)
    answer = wire.answer()
    assert answer is not None, f"{name}: no answer"
    assert answer.get("jsonrpc") == "2.0" and "result" not in answer, answer
    assert answer["id"] == answer_id and answer["error"]["code"] == code, answer
    assert isinstance(answer["error"]["message"], str)
    wire.send({"jsonrpc": "2.0", "id": "after", "method": "ping"})
    assert wire.answer() == {"jsonrpc": "2.0", "id": "after", "result": {}}
    code_, rest = wire.close()
    assert code_ == 0 and "Traceback" not in rest, rest


def test_no_request_with_an_id_is_left_unanswered(wire: Wire) -> None:
    """A burst of good and bad lines, then stdin closes at once: every id gets exactly one
    answer before the server exits (the SDK alone cancels what it has not finished)."""
    wire.send(INIT)
    wire.answer()
    wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    sent = []
    for n in range(12):
        wire.send({"jsonrpc": "2.0", "id": n, "method": "ping" if n % 3 else "tools/list"})
        wire.send({"jsonrpc": "2.0", "id": 100 + n, "method": n})
        wire.send(f'{{"jsonrpc": "2.0", "id": {200 + n}, "method": "ping"')  # cut short: not JSON
        sent += [n, 100 + n]
        if n % 4 == 0:
            wire.send(
                {
                    "jsonrpc": "2.0",
                    "id": f"call-{n}",
                    "method": "tools/call",
                    "params": {"name": "status", "arguments": {}},
                }
            )
            sent.append(f"call-{n}")
    wire.send({"jsonrpc": "2.0", "method": "notifications/nothing"})  # a notification: no answer
    out, err = wire.proc.communicate(timeout=300)  # closes stdin at once, then reads to the end
    answers = [json.loads(line) for line in out.decode().splitlines()]
    ids = [a["id"] for a in answers]
    assert sorted(map(str, (i for i in ids if i is not None))) == sorted(map(str, sent)), ids
    assert ids.count(None) == 12, "one -32700 answer (id null) per line that is not JSON"
    assert wire.proc.returncode == 0, err
