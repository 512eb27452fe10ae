"""Small helpers shared by use cases."""

from __future__ import annotations

from dcx.core.envelope import PacketContext
from dcx.core.errors import InvalidInput
from dcx.core.fields import DECISION_ID_RE
from dcx.core.public import refuse_unsafe
from dcx.core.workspace import Workspace
from dcx.state import statements
from dcx.state.keys import load_key


def packet_context(
    ws: Workspace, decision_id: str | None = None, agent_id: str | None = None
) -> PacketContext:
    """The envelope of a stored packet: goal, key id, decision and the acting agent (SPEC §3.1, §16)."""
    key = load_key(ws)
    return PacketContext(
        goal_id=ws.goal_id, key_id=key.key_id, decision_id=decision_id, agent_id=agent_id
    )


def check_decision_id(value: str) -> str:
    """A decision id: safe as a file name, and public-safe (it names ``decisions/<id>.jsonl``)."""
    if not DECISION_ID_RE.fullmatch(value or ""):
        raise InvalidInput(
            "--decision-id: expected [a-z0-9][a-z0-9._-]{0,127} (lower case, safe as a file name)",
            field="--decision-id",
        )
    refuse_unsafe(value, field="--decision-id")
    return value


MAX_JSON_DEPTH = 32  # every input dcx reads (proposal, outcome, rebase) is a few levels deep


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    out: dict[str, object] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def _too_deep(value: object, limit: int) -> bool:
    """Whether ``value`` nests containers more than ``limit`` deep (iterative: no recursion to exhaust)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > limit:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


def without_comments(text: str) -> str:
    """Whole lines starting with ``//`` (after blanks) read as empty lines: the comments of a
    ``--template`` skeleton. A JSON string cannot hold a raw line break, so such a line is never
    inside a value; blanking rather than dropping keeps every error's line number true."""
    if "//" not in text:
        return text
    return "".join(
        "\n" if line.lstrip().startswith("//") else line for line in text.splitlines(keepends=True)
    )


def read_json_input(
    source: str, *, flag: str = "--from", missing_hint: str | None = None
) -> tuple[object, str]:
    """Parse a JSON input file (or ``-`` for stdin); errors name the file and position only.

    A key twice in one object is refused (naming the key) rather than last-wins,
    and so is nesting deeper than ``MAX_JSON_DEPTH``: both exit 2, ``invalid_json``.
    Whole-line ``//`` comments are skipped (:func:`without_comments`).
    """
    import json
    import sys
    from pathlib import Path

    display = "stdin" if source == "-" else Path(source).name
    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InvalidInput(
            f"{flag}: {display} does not exist", field=flag, hint=missing_hint
        ) from None
    except (OSError, UnicodeDecodeError):
        raise InvalidInput(f"{flag}: cannot read {display} as UTF-8 text", field=flag) from None

    def invalid(why: str) -> InvalidInput:
        return InvalidInput(f"{display}: invalid JSON ({why})", field=flag, code="invalid_json")

    try:
        value = json.loads(without_comments(text), object_pairs_hook=_no_duplicates)
    except _DuplicateKey as exc:
        raise invalid(f"duplicate key {exc.key[:80]!r} in one object") from None
    except RecursionError:
        raise invalid(f"nested more than {MAX_JSON_DEPTH} levels deep") from None
    except json.JSONDecodeError as exc:
        raise InvalidInput(
            f"{display}: invalid JSON at line {exc.lineno} column {exc.colno} ({exc.msg})",
            field=flag,
            code="invalid_json",
        ) from None
    if _too_deep(value, MAX_JSON_DEPTH):
        raise invalid(f"nested more than {MAX_JSON_DEPTH} levels deep")
    return value, display


def require_flag(value: str | None, flag: str) -> str:
    """A flag a command needs unless another mode (``--template``) was asked for."""
    if value is None:
        raise InvalidInput(f"Missing option '{flag}'.", field=flag, code="usage_error")
    return value


def json_input(
    source: str | None,
    document: object,
    *,
    flag: str,
    name: str,
    missing_hint: str | None = None,
) -> tuple[object, str]:
    """The input of ``flag``: a JSON file (or ``-``) read here, or ``document`` already parsed.

    ``dcx mcp`` passes documents inline (a tool argument never names a file);
    messages then name the argument, ``name``, where a file would be named.
    """
    if document is not None:
        return document, name
    if source is None:
        raise InvalidInput(f"{flag}: needed", field=flag, code="usage_error", hint=missing_hint)
    return read_json_input(source, flag=flag, missing_hint=missing_hint)


def validated(shape, data: object, display: str) -> dict:
    """``shape.check`` with the file named in the message."""
    try:
        return shape.check(data, "")
    except InvalidInput as exc:
        raise InvalidInput(
            f"{display}: {exc.message}", code=exc.code, field=exc.field, hint=exc.hint
        ) from None


def require_agent(ws: Workspace, explicit: str | None) -> str:
    """The acting agent: --agent-id / DCX_AGENT_ID, else the profile's only enabled agent."""
    from dcx.core.public import check_token
    from dcx.state.profile import load_profile, resolve_agent

    try:
        profile = load_profile(ws)
    except InvalidInput:
        profile = None
    agent = resolve_agent(profile, explicit)
    if agent is None:
        raise InvalidInput(
            "--agent-id: needed (the profile does not enable exactly one agent)", field="--agent-id"
        )
    statements.acting(check_token(agent, field="--agent-id"))  # its key signs (SPEC §18)
    return agent


def acting_agent(ws: Workspace, explicit: str | None) -> str | None:
    """The acting agent when one can be named (``require_agent``), else None: for commands that
    work without an agent but record it when there is one (feedback)."""
    if explicit:
        return require_agent(ws, explicit)  # a bad --agent-id is an input error, not "no agent"
    try:
        return require_agent(ws, None)
    except InvalidInput:
        return None
