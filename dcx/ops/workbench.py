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
from dcx.core.tomlerrors import parse_toml
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


def posted_profile(body: Mapping[str, Any]) -> Profile:
    """The posted profile, parsed strictly; errors name the key (and line, for TOML)."""
    given = [key for key in PROFILE_KEYS if key in body]
    if len(given) != 1:
        raise InvalidInput(
            "give exactly one of profile and profile_toml", field="profile", code="usage_error"
        )
    if given[0] == "profile_toml":
        text = body["profile_toml"]
        if not isinstance(text, str):
            raise InvalidInput("profile_toml: must be a string", field="profile_toml")
        return parse_profile(parse_toml(text, "profile_toml"), "profile_toml", text)
    data = body["profile"]
    if not isinstance(data, dict):
        raise InvalidInput("profile: must be an object", field="profile")
    return parse_profile(data, "profile")


def _judged(ws: Workspace, agent_id: str | None, body: Mapping[str, Any]) -> Activation:
    state = judge(ws, posted_profile(body), agent_id)
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


def recall(*, ws: Workspace, agent_id: str | None, body: Mapping[str, Any], clock: Clock) -> Result:
    """One recall through the posted profile: the packet ``dcx recall`` would print."""
    _check_keys(body, RECALL_KEYS)
    state = require_usable(_judged(ws, agent_id, body))
    return recall_once(
        ws=ws,
        state=state,
        scope=_text(body, "scope_ref", default=""),
        query=_text(body, "query"),
        query_summary=_text(body, "query_summary"),
        max_results=_optional_int(body, "max_results"),
        timeout=_optional_number(body, "timeout_seconds"),
        clock=clock,
        labels=LABELS,
    )
