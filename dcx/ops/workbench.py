"""The recall workbench's two calls: inspect a posted profile, recall through it (SPEC §12).

The workbench is a transient caller of the same recall port as ``dcx
recall``. The profile is an explicit object posted by the page (``profile``,
an object with the keys of ``profile.toml``, or ``profile_toml``, the
editor's text), validated strictly like the file and judged against this
workspace's goal and source registry. The agent is the one fixed when the
workbench started: a posted profile that enables other agents does not
change who acts. Nothing is written anywhere; the posted configuration and
the query reach only the provider and the caller's answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from dcx.core.clock import Clock
from dcx.core.errors import InvalidInput, NoWorkspace
from dcx.core.fsutil import read_text
from dcx.core.public import check_token
from dcx.core.result import Result
from dcx.core.tomlerrors import load_toml, parse_toml
from dcx.core.workspace import Workspace
from dcx.ops.recall import recall_once
from dcx.state.activation import Activation, judge, require_usable
from dcx.state.profile import Profile, load_profile, parse_profile, resolve_agent

PROFILE_KEYS = ("profile", "profile_toml")
INSPECT_KEYS = frozenset(PROFILE_KEYS)
RECALL_KEYS = frozenset(
    (*PROFILE_KEYS, "scope_ref", "query", "query_summary", "max_results", "timeout_seconds")
)
LABELS = {
    "namespace": "profile.context_provider.namespace",
    "scope_ref": "scope_ref",
    "query": "query",
    "query_summary": "query_summary",
    "max_results": "max_results",
    "timeout_seconds": "timeout_seconds",
}


class Session(NamedTuple):
    """What one workbench run is fixed to when it starts."""

    ws: Workspace
    agent_id: str
    profile_text: str  # the editor's first text: the workspace's profile.toml, or a template


def start(*, ws: Workspace, agent_id: str | None) -> Session:
    """Fix the agent and read the editor's first text. Refuses without an agent (exit 3)."""
    text = _profile_text(ws)
    agent = agent_id
    if not agent:
        try:
            agent = resolve_agent(load_profile(ws), None)
        except InvalidInput:
            agent = None  # an invalid profile.toml is for the page to fix; the agent must come from --agent-id
    if not agent:
        raise NoWorkspace(
            "the workbench needs the agent it acts for",
            code="agent_id_required",
            hint="pass --agent-id or set DCX_AGENT_ID",
        )
    check_token(agent, field="--agent-id")
    return Session(ws, agent, text)


def _profile_text(ws: Workspace) -> str:
    try:
        return read_text(ws.profile)
    except (OSError, UnicodeDecodeError):
        return TEMPLATE.format(goal_id=ws.goal_id)


TEMPLATE = """schema_version = "decision_context_profile_v0"
goal_id = "{goal_id}"
enabled = true
enabled_agents = []

[context_provider]
provider = "bm25"
max_results = 4
timeout_seconds = 10
"""


def _check_keys(body: Mapping[str, Any], allowed: frozenset[str]) -> None:
    unknown = sorted(set(body) - allowed)
    if unknown:
        raise InvalidInput(f"{unknown[0]}: unknown field", field=unknown[0], code="unknown_field")


# Keys that name a program to start (SPEC §3.7, §12 v4): a request never chooses one; the
# workspace's own profile.toml does. Refused wherever they appear in a posted profile.
EXECUTABLE_KEYS = frozenset(
    {
        "argv",
        "binary",
        "command",
        "commands",
        "entrypoint",
        "executable",
        "interpreter",
        "path_prepend",
        "program",
        "python",
        "python_module",
        "shell",
    }
)


def _no_executables(value: Any, where: str, own: Any) -> None:
    """Refuse a program setting the posted profile makes; the same value the workspace's own
    profile.toml holds at that place is no choice (the page starts from that text)."""
    if isinstance(value, dict):
        for key, item in value.items():
            here = f"{where}.{key}"
            mine = own.get(key) if isinstance(own, dict) else None
            if key in EXECUTABLE_KEYS and item != mine:
                raise InvalidInput(
                    f"{here}: a posted profile may not choose a program to run; the workspace's "
                    "own profile.toml decides it",
                    field=here,
                    code="executable_not_allowed",
                )
            _no_executables(item, here, mine)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            mine = own[index] if isinstance(own, list) and index < len(own) else None
            _no_executables(item, f"{where}[{index}]", mine)


def _own_data(ws: Workspace | None) -> dict[str, Any]:
    """The workspace's own profile.toml as parsed TOML ({} when missing or unreadable)."""
    if ws is None:
        return {}
    try:
        return load_toml(ws.profile, ws.rel(ws.profile))[0]
    except (OSError, InvalidInput):
        return {}


def _own_programs(own: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with the workspace's own program settings (OpenViking's ``binary``) put back."""
    cp = data.get("context_provider")
    mine = own.get("context_provider")
    if not isinstance(cp, dict) or not isinstance(mine, dict):
        return data
    if cp.get("provider") != "openviking" or mine.get("provider") != "openviking":
        return data
    binary = (
        (mine.get("config") or {}).get("binary") if isinstance(mine.get("config"), dict) else None
    )
    if binary is None:
        return data
    config = cp.get("config")
    config = config if isinstance(config, dict) else {}
    return {**data, "context_provider": {**cp, "config": {**config, "binary": binary}}}


def posted_profile(body: Mapping[str, Any], ws: Workspace | None = None) -> Profile:
    """The posted profile, parsed strictly; errors name the key (and line, for TOML). It may not
    name a program (``executable_not_allowed``); the workspace's own profile decides those."""
    given = [key for key in PROFILE_KEYS if key in body]
    if len(given) != 1:
        raise InvalidInput(
            "give exactly one of profile and profile_toml", field="profile", code="usage_error"
        )
    text = ""
    if given[0] == "profile_toml":
        text = body["profile_toml"]
        if not isinstance(text, str):
            raise InvalidInput("profile_toml: must be a string", field="profile_toml")
        data = parse_toml(text, "profile_toml")
    else:
        data = body["profile"]
        if not isinstance(data, dict):
            raise InvalidInput("profile: must be an object", field="profile")
    own = _own_data(ws)
    _no_executables(data, given[0], own)
    return parse_profile(_own_programs(own, data), given[0], text)


def _judged(ws: Workspace, agent_id: str | None, body: Mapping[str, Any]) -> Activation:
    state = judge(ws, posted_profile(body, ws), agent_id)
    if state.reason_code == "goal_scope_mismatch":
        raise InvalidInput(
            f"profile: goal_id is not this workspace's goal ({ws.goal_id})",
            field="profile.goal_id",
            code="goal_scope_mismatch",
        )
    return state


def inspect(*, ws: Workspace, agent_id: str | None, body: Mapping[str, Any]) -> Result:
    """The activation the posted profile would have, for the fixed agent. No provider is called."""
    _check_keys(body, INSPECT_KEYS)
    state = _judged(ws, agent_id, body)
    cp = state.profile.context_provider if state.profile else None
    data = {
        "activation": state.public(),
        "context_provider": None
        if cp is None
        else {
            "provider": cp.provider,
            "namespace": cp.namespace,
            "max_results": cp.max_results,
            "timeout_seconds": cp.timeout_seconds,
        },
    }
    return Result("workbench.inspect", data)


def _optional_int(body: Mapping[str, Any], key: str) -> int | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(f"{key}: must be an integer", field=key)
    return value


def _optional_number(body: Mapping[str, Any], key: str) -> float | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidInput(f"{key}: must be a number", field=key)
    return float(value)


def _text(body: Mapping[str, Any], key: str, *, default: str | None = None) -> str:
    value = body.get(key, default)
    if value is None:
        raise InvalidInput(f"{key}: required", field=key, code="missing_field")
    if not isinstance(value, str):
        raise InvalidInput(f"{key}: must be a string", field=key)
    return value


def _check_scope_sources(state: Activation, scope: str) -> None:
    """A bm25 scope naming a source the registry does not hold is the person's typo, said as
    such on the page ("unknown source in scope"), not a provider that is unavailable."""
    if state.profile is None or state.profile.context_provider.provider != "bm25":
        return
    from dcx.providers.bm25 import parse_scope

    names = parse_scope(scope) or []
    known = {s.source_id for s in state.registry.sources} if state.registry else set()
    for name in names:
        if name not in known and f"source:{name}" not in known:
            raise InvalidInput(
                f"scope_ref: unknown source in scope: {name}",
                field="scope_ref",
                code="unknown_scope_source",
                hint="the scope names sources of sources.toml: source:<id>[,<id>…] (`dcx sources`)",
            )


def recall(*, ws: Workspace, agent_id: str | None, body: Mapping[str, Any], clock: Clock) -> Result:
    """One recall through the posted profile: the packet ``dcx recall`` would print."""
    _check_keys(body, RECALL_KEYS)
    state = require_usable(_judged(ws, agent_id, body))
    scope = _text(body, "scope_ref", default="")
    _check_scope_sources(state, scope)
    return recall_once(
        ws=ws,
        state=state,
        scope=scope,
        query=_text(body, "query"),
        query_summary=_text(body, "query_summary"),
        max_results=_optional_int(body, "max_results"),
        timeout=_optional_number(body, "timeout_seconds"),
        clock=clock,
        labels=LABELS,
    )
