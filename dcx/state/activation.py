"""Activation status (``decision_context_activation_status_v0``, SPEC §4).

Decided in this order, first match wins: no profile → ``disabled``; invalid
profile or registry → ``profile_invalid``; goal mismatch → ``profile_invalid``;
``enabled = false`` → ``disabled``; agent not listed → ``agent_not_enabled``;
a binding's adapter neither built in nor installed → ``provider_unavailable``
(still usable); else ``available``. Adapters show only as ``local-file`` or
``plugin``: never plugin names, locators or configs.
"""

from __future__ import annotations

from typing import Any

from dcx.core.errors import InternalError, InvalidInput, NoWorkspace
from dcx.core.workspace import Workspace
from dcx.state.profile import Profile, Registry, load_profile, load_registry, resolve_agent

SCHEMA = "decision_context_activation_status_v0"
STATUSES = ("disabled", "profile_invalid", "agent_not_enabled", "provider_unavailable", "available")
USABLE = ("available", "provider_unavailable")


def installed_plugin_adapters() -> set[str]:
    """Names in the ``dcx.source_providers`` entry-point group (slow import: only when needed)."""
    from importlib.metadata import entry_points

    return {ep.name for ep in entry_points(group="dcx.source_providers")}


class Activation:
    def __init__(
        self,
        goal_id: str,
        agent_id: str | None,
        status: str,
        reason_code: str | None,
        profile: Profile | None = None,
        registry: Registry | None = None,
        *,
        error: InvalidInput | None = None,
        unavailable_adapters: tuple[str, ...] = (),
        adapters: list[dict[str, Any]] | None = None,
    ) -> None:
        self.goal_id = goal_id
        self.agent_id = agent_id
        self.status = status
        self.reason_code = reason_code
        self.profile = profile
        self.registry = registry
        self.error = error
        self.unavailable_adapters = unavailable_adapters
        self.adapters = adapters or []

    @property
    def usable(self) -> bool:
        return self.status in USABLE

    def settings(self) -> tuple[Profile, Registry]:
        """The profile and registry of a usable activation (a real check: ``assert`` goes under -O)."""
        if self.profile is None or self.registry is None:
            raise InternalError("activation is usable without a profile or registry")
        return self.profile, self.registry

    def acting_agent(self) -> str:
        """The agent a usable activation acts as (prepare, review: every packet names one)."""
        if self.agent_id is None:
            raise InternalError("activation is usable without an agent")
        from dcx.state import statements

        statements.acting(self.agent_id)  # its key signs this command's statement (SPEC §18)
        return self.agent_id

    def public(self) -> dict[str, Any]:
        registry = self.registry
        sources = registry.sources if registry else ()
        out: dict[str, Any] = {
            "schema_version": SCHEMA,
            "goal_id": self.goal_id,
            "agent_id": self.agent_id,
            "status": self.status,
            "reason_code": self.reason_code,
            "active": self.usable,
            "context_provider": self.profile.context_provider.provider if self.profile else "none",
            "source_count": len(sources),
            "enabled_source_count": sum(1 for s in sources if s.enabled),
            "adapters": self.adapters,
            "unavailable_adapter_count": len(self.unavailable_adapters),
        }
        if self.error is not None:
            out["error"] = {"code": self.error.code, "message": self.error.message}
        return out


def activation(ws: Workspace, agent_id: str | None) -> Activation:
    goal_id = ws.goal_id
    try:
        profile = load_profile(ws)
    except InvalidInput as exc:
        return Activation(
            goal_id, agent_id, "profile_invalid", "profile_unavailable_or_invalid", error=exc
        )
    if profile is None:
        return Activation(goal_id, agent_id, "disabled", "profile_missing")
    return judge(ws, profile, resolve_agent(profile, agent_id))


def judge(ws: Workspace, profile: Profile, agent: str | None) -> Activation:
    """The activation of an explicit profile for an explicit agent (the workbench's inspect).

    The registry is the workspace's own; nothing is read from a provider.
    """
    goal_id = ws.goal_id
    try:
        registry = load_registry(ws)
    except InvalidInput as exc:
        return Activation(
            goal_id, agent, "profile_invalid", "profile_unavailable_or_invalid", profile, error=exc
        )
    base: dict[str, Any] = {"profile": profile, "registry": registry}
    if profile.goal_id != goal_id:
        return Activation(goal_id, agent, "profile_invalid", "goal_scope_mismatch", **base)
    if not profile.enabled:
        return Activation(goal_id, agent, "disabled", "profile_disabled", **base)
    if agent is None:
        return Activation(goal_id, None, "agent_not_enabled", "agent_id_required", **base)
    if agent not in profile.enabled_agents:
        return Activation(goal_id, agent, "agent_not_enabled", "agent_not_enabled", **base)
    plugins = [b for b in registry.bindings if not b.builtin]
    installed = installed_plugin_adapters() if plugins else set()
    adapters = []
    missing = []
    for binding in registry.bindings:
        available = binding.builtin or binding.adapter in installed
        adapters.append(
            {
                "provider_id": binding.provider_id,
                "adapter": binding.adapter if binding.builtin else "plugin",
                "available": available,
            }
        )
        if not available:
            missing.append(binding.provider_id)
    if missing:
        return Activation(
            goal_id,
            agent,
            "provider_unavailable",
            "source_provider_adapter_unavailable",
            unavailable_adapters=tuple(missing),
            adapters=adapters,
            **base,
        )
    return Activation(goal_id, agent, "available", None, adapters=adapters, **base)


def require_active(ws: Workspace, agent_id: str | None) -> Activation:
    """Activation for commands that need it (scan, index, prepare, recall, commit): exit 3 otherwise."""
    return require_usable(activation(ws, agent_id))


def require_usable(state: Activation) -> Activation:
    """``state`` itself when usable; exit 3 naming the reason otherwise."""
    if state.usable:
        return state
    if state.error is not None:
        raise NoWorkspace(
            state.error.message,
            code="profile_invalid",
            field=state.error.field,
            hint="fix the file named above; `dcx status` shows the activation",
        )
    hints = {
        "profile_missing": "create .decision-context/profile.toml (`dcx init` writes a template)",
        "profile_disabled": "set enabled = true in .decision-context/profile.toml for this goal",
        "goal_scope_mismatch": "profile.toml's goal_id must equal workspace.toml's goal_id",
        "agent_id_required": "pass --agent-id or set DCX_AGENT_ID",
        "agent_not_enabled": "add the agent to enabled_agents in .decision-context/profile.toml",
    }
    raise NoWorkspace(
        f"decision context is not active: {state.status} ({state.reason_code})",
        code=state.status,
        hint=hints.get(state.reason_code or ""),
    )
