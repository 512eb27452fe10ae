"""What the MCP server answers before the SDK sees a line (SPEC §14 v4).

The SDK's stdio reader drops a line it cannot validate without a word, so a
client that sent a request with an id would wait for ever. Every line is
judged here first, by JSON-RPC 2.0's own rules: a line that is not JSON is
``-32700`` (``id: null``); an object that is not a valid request — no
``jsonrpc: "2.0"``, a method that is not a string, an id that is neither a
string nor an integer, params that are not an object, a batch (MCP has none)
— is ``-32600``, with the request's id when it has a usable one. A line
judged fine is handed to the SDK unchanged; the SDK answers the rest
(``-32601`` for an unknown method, ``-32602`` before ``initialize``).
A notification (no id) that is malformed gets no answer: there is no one to
answer.

Plain JSON rules, no SDK import: ``dcx.mcp.server`` passes in the SDK's own
validator as ``accepts`` for the last word.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600

PASS = "pass"  # hand the line to the SDK
DROP = "drop"  # nothing to answer: a blank line, a malformed notification or response


class Answer:
    """An error answer the server owes: ``code``, ``message`` and the ``id`` (None: ``null``)."""

    __slots__ = ("code", "id", "message")

    def __init__(self, code: int, message: str, ident: int | str | None) -> None:
        self.code, self.message, self.id = code, message, ident

    def __repr__(self) -> str:
        return f"Answer({self.code}, {self.message!r}, {self.id!r})"


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def usable_id(value: Any) -> bool:
    """A request id MCP allows: a string or an integer (never null, a fraction or a boolean)."""
    return isinstance(value, str) or type(value) is int


def judge(line: bytes, accepts: Callable[[str], bool] = lambda _text: True) -> str | Answer:
    """``PASS``, ``DROP`` or the ``Answer`` a raw line from the client gets."""
    if not line.strip():
        return DROP
    try:
        text = line.decode("utf-8")
        message = json.loads(text, parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return Answer(PARSE_ERROR, "Parse error: the line is not JSON", None)
    if isinstance(message, list):
        return Answer(INVALID_REQUEST, "Invalid Request: batches are not supported", None)
    if not isinstance(message, dict):
        return Answer(INVALID_REQUEST, "Invalid Request: a message is a JSON object", None)
    has_id = "id" in message
    ident = message.get("id") if usable_id(message.get("id")) else None
    is_request = "method" in message
    is_response = not is_request and ("result" in message or "error" in message)

    def invalid(why: str) -> str | Answer:
        if is_response or (is_request and not has_id and message.get("jsonrpc") == "2.0"):
            return DROP  # a response or a notification: nothing to answer
        return Answer(INVALID_REQUEST, f"Invalid Request: {why}", ident)

    if message.get("jsonrpc") != "2.0":
        return invalid('jsonrpc must be "2.0"')
    if not is_request and not is_response:
        return invalid("no method")
    if has_id and not usable_id(message["id"]):
        return Answer(INVALID_REQUEST, "Invalid Request: an id is a string or an integer", None)
    if is_request:
        if not isinstance(message["method"], str):
            return invalid("method must be a string")
        if "params" in message and not isinstance(message["params"], dict):
            return invalid("params must be an object")
    if not accepts(text):
        return invalid("not a valid message")
    return PASS


def request_id(line: bytes) -> int | str | None:
    """The id of a request line ``judge`` passed (None for a notification or a response)."""
    message = json.loads(line)
    if "method" in message and usable_id(message.get("id")):
        return message["id"]  # type: ignore[no-any-return]
    return None
