"""What a tool call answers, and what a resource read returns, before the SDK wraps it.

A success is the ``data`` that ``--format json`` prints (``show``: the stored
packet bytes exactly), with the status and warnings beside it. A failure is
the ``dcx_error_v0`` error object plus ``exit_code``: what the CLI would have
exited with. A result the CLI prints whole but exits non-zero on (``verify``
with problems, ``audit`` with findings, ``status`` of an invalid profile) is a
failure that also carries ``data``.

Exception text is never shown: it may carry private values or transient
content. Internal errors name only the exception type; their traceback, with
the messages of its exceptions left out, goes to ``private/log/``.
"""

from __future__ import annotations

import json
import re
import secrets
import traceback
from datetime import UTC, datetime
from typing import Any, NamedTuple
from urllib.parse import unquote

from dcx.core.errors import DcxError, ExitCode, InternalError, InvalidInput
from dcx.core.result import Result
from dcx.core.workspace import Workspace
from dcx.mcp.tools import Session, Tool


class Answer(NamedTuple):
    is_error: bool
    text: str  # the JSON document the agent reads
    structured: dict[str, Any]
    status: str  # ok | partial | error
    warnings: list[str]


def dumps(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def error_object(exc: DcxError) -> dict[str, Any]:
    error = dict(exc.envelope()["error"])  # code, message, hint (, field)
    error["exit_code"] = int(exc.exit_code)
    return error


def failed(exc: DcxError, tool: Tool | None = None) -> Answer:
    error = error_object(exc)
    if tool is not None:
        error = in_tool_words(error, tool)
    return Answer(True, dumps(error), error, "error", [])


_FLAG = re.compile(r"(?<![\w`-])--([a-z][a-z0-9-]*)")


def in_tool_words(error: dict[str, Any], tool: Tool) -> dict[str, Any]:
    """The ops' messages name CLI flags (``--baseline``); a tool's caller knows its arguments
    (``baseline``): each flag that is one of this tool's arguments is said by that name, in the
    field and the message. Hints keep their words: they tell a person which command to run."""
    arguments = set(tool.args.fields)

    def say(match: re.Match[str]) -> str:
        name = match.group(1).replace("-", "_")
        for argument in (name, f"{name}s"):  # a repeated flag is a list argument: --source, sources
            if argument in arguments:
                return argument
        return match.group(0)

    out = dict(error)
    if isinstance(out.get("field"), str):
        out["field"] = _FLAG.sub(say, out["field"])
    if isinstance(out.get("message"), str):
        out["message"] = _FLAG.sub(say, out["message"])
    return out


def answer(tool: Tool, result: Result) -> Answer:
    if result.exit_code != ExitCode.OK:
        code, message = tool.failure or ("refused", f"{tool.name} did not pass: see data")
        error = {
            "code": code,
            "message": message,
            "hint": None,
            "exit_code": int(result.exit_code),
            "data": result.data,
        }
        return Answer(True, dumps(error), error, "error", list(result.warnings))
    if result.raw_json is not None:  # show: the stored bytes exactly, as `dcx show --format json`
        text = result.raw_json.decode("utf-8")
        return Answer(False, text, json.loads(text), result.status, list(result.warnings))
    return Answer(False, dumps(result.data), result.data, result.status, list(result.warnings))


def internal(ws: Workspace, exc: BaseException) -> Answer:
    where = _log_internal(ws, exc)
    hint = f"the traceback is in {where}" if where else None
    return failed(InternalError(f"internal error ({type(exc).__name__})", hint=hint))


def _log_internal(ws: Workspace, exc: BaseException) -> str | None:
    """The stack only: exception messages are left out (they may hold transient content)."""
    try:
        from dcx.core.fsutil import atomic_write

        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        path = ws.log_dir / f"internal-mcp-{stamp}-{secrets.token_hex(3)}.log"
        lines = []
        for one in _chain(exc):
            lines += traceback.format_tb(one.__traceback__)
            lines.append(f"{type(one).__module__}.{type(one).__qualname__} (message not logged)\n")
        atomic_write(path, "".join(lines).encode(), mode=0o600)  # never through a link
        return ws.rel(path)
    except Exception:
        return None


def _chain(exc: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    while exc is not None and exc not in out and len(out) < 8:
        out.append(exc)
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return list(reversed(out))


def call(session: Session, tool: Tool, arguments: Any) -> Answer:
    """Validate the arguments with the tool's spec, run its op, answer. Never raises."""
    try:
        args = tool.args.check({} if arguments is None else arguments, "")
        result = tool.call(session, args)
        from dcx.core.notices import drain

        result.warnings += drain()  # what the call fixed on its own (a key's mode)
        return answer(tool, result)
    except DcxError as exc:
        return failed(exc, tool)
    except KeyboardInterrupt:
        return failed(DcxError("interrupted", code="interrupted"))
    except Exception as exc:
        return internal(session.ws, exc)


# -- resources --------------------------------------------------------------------------------

DECISIONS = "dcx://decisions/"
PACKETS = "dcx://packets/"


def decision_uris(ws: Workspace) -> list[tuple[str, str]]:
    """(uri, decision id) of every decision, newest first."""
    from dcx.ops.log import log

    return [
        (DECISIONS + row["decision_id"], row["decision_id"])
        for row in log(ws=ws, decision_id=None, limit=None).data["decisions"]
    ]


def packet_uris(ws: Workspace) -> list[tuple[str, str, str]]:
    """(uri, ref, kind) of every stored packet file, by kind then ref; a read verifies it."""
    from dcx.state.store import Store

    return [(PACKETS + path.stem, path.stem, kind) for kind, path in Store(ws).iter_files()]


def read_resource(ws: Workspace, uri: str) -> tuple[str, str]:
    """(text, mime type) of a ``dcx://`` URI: public, verified records only. Raises DcxError."""
    if uri.startswith(PACKETS):
        from dcx.ops.show import show

        result = show(ws=ws, ref=unquote(uri[len(PACKETS) :]))
        assert result.raw_json is not None
        return result.raw_json.decode("utf-8"), "application/json"
    if uri.startswith(DECISIONS):
        from dcx.ops._common import check_decision_id
        from dcx.ops.log import log

        decision_id = unquote(uri[len(DECISIONS) :])
        try:
            check_decision_id(decision_id)
        except InvalidInput:
            raise InvalidInput(
                "resource: expected dcx://decisions/<decision id>", field="uri", code="invalid_uri"
            ) from None
        from dcx.state.decisions import decision_ids

        known = decision_id in decision_ids(ws)
        rows = log(ws=ws, decision_id=decision_id, limit=None).data["decisions"] if known else []
        if not rows:
            raise InvalidInput(
                f"no decision {decision_id} in this workspace",
                field="uri",
                code="decision_not_found",
                hint="the tool log lists the decisions",
            )
        return dumps(rows[0]), "application/json"
    raise InvalidInput(
        "resource: expected dcx://decisions/<id> or dcx://packets/<ref>",
        field="uri",
        code="invalid_uri",
    )
