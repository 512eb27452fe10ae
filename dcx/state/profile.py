"""The private goal profile and source registry, read strictly (SPEC §4).

Both files are private: they may hold locators, provider config and
credentials. Nothing here is ever copied into a public packet except through
the manifest projection, which lists policy fields only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from dcx.core.canonical import content_digest
from dcx.core.errors import InvalidInput
from dcx.core.fields import (
    Any_,
    Bool,
    Const,
    Enum,
    Int,
    Number,
    Obj,
    PrivateText,
    Records,
    Shape,
    Token,
    Tokens,
    bad,
)
from dcx.core.tomlerrors import load_toml, locate_error, once
from dcx.core.vocab import (
    BUILTIN_ADAPTERS,
    EVIDENCE_LEVELS,
    PRIORITIES,
    PROVIDERS,
    READ_POLICIES,
    SCAN_MODES,
    SOURCE_KINDS,
)
from dcx.core.workspace import Workspace

PROFILE_SCHEMA = "decision_context_profile_v0"
REGISTRY_SCHEMA = "decision_source_registry_v0"
MIB = 1024 * 1024


class _PathList(Any_):
    """A list of path strings (private): only their shape is checked here."""

    def check(self, value: Any, path: str) -> Any:
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise bad(path, "expected a list of paths")
        return list(value)


class _Table(Any_):
    """A private table whose keys the owning adapter or provider checks strictly."""

    def check(self, value: Any, path: str) -> Any:
        if not isinstance(value, dict):
            raise bad(path, "expected a table", "invalid_type")
        return value


_CONTEXT_PROVIDER = Shape(
    "context_provider",
    {
        "provider": Enum(values=PROVIDERS, optional=True),
        "namespace": Token(limit=120, optional=True),
        "scope_ref": PrivateText(limit=2048, optional=True),
        "max_results": Int(lo=1, hi=8, optional=True),
        "timeout_seconds": Number(lo=1, hi=120, optional=True),
        "max_content_chars": Int(lo=1, hi=1_000_000, optional=True),
        "config": _Table(optional=True),
    },
)


def check_provider_key(key: str, value: Any, *, field: str) -> Any:
    """A ``[context_provider]`` value by the profile's own rule, named as the caller gave it
    (``--max-results: 99 is outside 1..8``) before anything is written."""
    return _CONTEXT_PROVIDER.fields[key].check(value, field)


_BOUNDS = Shape(
    "bounds",
    {
        "timeout_seconds": Number(lo=0.1, hi=3600, optional=True),
        "max_read_bytes": Int(lo=1, hi=256 * MIB, optional=True),
        "max_scan_bytes": Int(lo=1, hi=1 << 40, optional=True),
    },
)

_COMMIT = Shape(
    "commit",
    {
        "allow_self_confirmation": Bool(optional=True),
        "external_event_logs": _PathList(optional=True),
        "require_review": Bool(optional=True),
    },
)

# SPEC §5.5 v4: consecutive failed scan/read attempts before a source is `source_failing`
DEFAULT_FAILURE_ALERT_AFTER = 3

_ALERTS = Shape(
    "alerts",
    {
        "failure_alert_after": Int(lo=1, hi=1000, optional=True),
    },
)

PROFILE_SHAPE = Shape(
    "profile",
    {
        "schema_version": Const(value=PROFILE_SCHEMA),
        "goal_id": Token(),
        "enabled": Bool(optional=True),
        "enabled_agents": Tokens(optional=True, max_items=64),
        "context_provider": Obj(shape=_CONTEXT_PROVIDER, optional=True),
        "bounds": Obj(shape=_BOUNDS, optional=True),
        "commit": Obj(shape=_COMMIT, optional=True),
        "alerts": Obj(shape=_ALERTS, optional=True),
    },
)


class _Locator(Any_):
    """A path string, or ``{path, include, exclude}`` with gitwildmatch patterns.

    A table with ``repo`` is a git locator, ``{repo, ref, path?, include?,
    exclude?}`` (SPEC §15); one with ``command`` an mcp locator, ``{command,
    env?, uri_prefix, include?}`` (SPEC §15.1); ``load_registry`` checks that
    the form matches the binding's adapter.
    """

    def check(self, value: Any, path: str) -> Any:
        if isinstance(value, str):
            value = {"path": value}
        if not isinstance(value, dict):
            raise bad(path, "expected a path or a table { path, include, exclude }", "invalid_type")
        if "command" in value:
            return _mcp_locator(value, path)
        git = "repo" in value or "ref" in value
        allowed = (
            {"repo", "ref", "path", "include", "exclude"} if git else {"path", "include", "exclude"}
        )
        unknown = sorted(set(value) - allowed)
        if unknown:
            raise bad(path, f"unknown field(s): {', '.join(unknown)}", "unknown_field")
        out: dict[str, Any] = {}
        if git:
            for name in ("repo", "ref"):
                if not isinstance(value.get(name), str) or not value[name].strip():
                    raise bad(
                        f"{path}.{name}",
                        f"expected a non-empty {'path' if name == 'repo' else 'ref name'}",
                    )
                out[name] = value[name]
            if not isinstance(value.get("path", ""), str):
                raise bad(f"{path}.path", "expected a path inside the repository")
            out["path"] = value.get("path", "")
        elif not isinstance(value.get("path"), str) or not value["path"].strip():
            raise bad(f"{path}.path", "expected a non-empty path")
        else:
            out["path"] = value["path"]
        for name in ("include", "exclude"):
            patterns = value.get(name, [])
            if not isinstance(patterns, list) or not all(
                isinstance(p, str) and p for p in patterns
            ):
                raise bad(f"{path}.{name}", "expected a list of glob patterns")
            out[name] = list(patterns)
        return out


def _env_name(name: str) -> bool:
    """``[A-Za-z_][A-Za-z0-9_]*`` (without ``re``: the registry loads at every start-up)."""
    return (
        bool(name)
        and not name[0].isdigit()
        and all(c.isascii() and (c.isalnum() or c == "_") for c in name)
    )


def _mcp_locator(value: dict[str, Any], path: str) -> dict[str, Any]:
    """``{command, env?, uri_prefix, include?}``: the server's argv, the variables it gets beyond
    the allow-list, the URI prefix of its resources and gitwildmatch globs on the rest."""
    unknown = sorted(set(value) - {"command", "env", "uri_prefix", "include"})
    if unknown:
        raise bad(path, f"unknown field(s): {', '.join(unknown)}", "unknown_field")
    command = value["command"]
    if (
        not isinstance(command, list)
        or not command
        or not all(isinstance(c, str) and c and "\0" not in c for c in command)
    ):
        raise bad(f"{path}.command", "expected a non-empty list of strings (the argv)")
    env = value.get("env", {})
    if not isinstance(env, dict):
        raise bad(f"{path}.env", 'expected a table of NAME = "value"', "invalid_type")
    for name, text in env.items():
        if not _env_name(name) or not isinstance(text, str) or "\0" in text:
            raise bad(f"{path}.env.{name}", 'expected NAME = "value" (a string)')
    prefix = value.get("uri_prefix")
    if not isinstance(prefix, str):
        raise bad(f"{path}.uri_prefix", 'expected the URI prefix of the resources ("" for all)')
    patterns = value.get("include", [])
    if not isinstance(patterns, list) or not all(isinstance(p, str) and p for p in patterns):
        raise bad(f"{path}.include", "expected a list of glob patterns")
    return {
        "command": list(command),
        "env": dict(env),
        "uri_prefix": prefix,
        "include": list(patterns),
    }


_BINDING = Shape(
    "binding",
    {
        "provider_id": Token(),
        "adapter": Token(),
        "config": _Table(optional=True),
    },
)

SOURCE = Shape(
    "source",
    {
        "source_id": Token(),
        "provider_id": Token(),
        "source_kind": Enum(values=SOURCE_KINDS),
        "priority": Enum(values=PRIORITIES),
        "evidence_level": Enum(values=EVIDENCE_LEVELS),
        "objectives": Tokens(min_items=1),
        "scan_mode": Enum(values=SCAN_MODES),
        "exact_read_policy": Enum(values=READ_POLICIES),
        "freshness_seconds": Int(lo=1, hi=31_536_000),
        "locator": _Locator(),
        "max_changes": Int(lo=1, hi=10_000, optional=True),
        "conflict_rule": Token(optional=True),
        "enabled": Bool(optional=True),
    },
)

REGISTRY_SHAPE = Shape(
    "registry",
    {
        "schema_version": Const(value=REGISTRY_SCHEMA),
        "bindings": Records(
            shape=_BINDING, id_field="provider_id", max_items=16, ordered=True, optional=True
        ),
        "sources": Records(
            shape=SOURCE, id_field="source_id", max_items=64, ordered=True, optional=True
        ),
    },
)


class ContextProviderConfig(NamedTuple):
    # one rule: bm25 unless `provider` names another, whether or not the table exists
    provider: str = "bm25"
    namespace: str = "decision-context"
    scope_ref: str | None = None
    max_results: int = 4
    timeout_seconds: float = 10
    max_content_chars: int = 128_000
    config: dict[str, Any] = {}  # noqa: RUF012 — never mutated; NamedTuples keep start-up cheap


class Profile(NamedTuple):
    goal_id: str
    enabled: bool
    enabled_agents: tuple[str, ...]
    context_provider: ContextProviderConfig
    scan_timeout_seconds: float
    max_read_bytes: int
    max_scan_bytes: int
    allow_self_confirmation: bool
    external_event_logs: tuple[str, ...]
    raw: dict[str, Any]
    require_review: bool = False
    failure_alert_after: int = DEFAULT_FAILURE_ALERT_AFTER

    @property
    def digest(self) -> str:
        """blake3 over the JCS of the parsed file: comments and key order change nothing."""
        return content_digest(_jsonable(self.raw))


class Binding(NamedTuple):
    provider_id: str
    adapter: str
    config: dict[str, Any]

    @property
    def builtin(self) -> bool:
        return self.adapter in BUILTIN_ADAPTERS


class Source(NamedTuple):
    """A registry source: the fields of ``SOURCE``, with its defaults for the optional ones."""

    source_id: str
    provider_id: str
    source_kind: str
    priority: str
    evidence_level: str
    objectives: tuple[str, ...]
    scan_mode: str
    exact_read_policy: str
    freshness_seconds: int
    locator: dict[str, Any]
    max_changes: int = 1000
    conflict_rule: str | None = None
    enabled: bool = True


class Registry(NamedTuple):
    bindings: tuple[Binding, ...]
    sources: tuple[Source, ...]
    raw: dict[str, Any]

    @property
    def digest(self) -> str:
        return content_digest(_jsonable(self.raw))

    def binding(self, provider_id: str) -> Binding:
        return next(b for b in self.bindings if b.provider_id == provider_id)

    def source(self, source_id: str) -> Source | None:
        return next((s for s in self.sources if s.source_id == source_id), None)


def _validated(shape: Shape, data: dict[str, Any], display: str, text: str) -> dict[str, Any]:
    try:
        return shape.check(data, "")
    except InvalidInput as exc:
        raise locate_error(exc, display, text) from None


def load_profile(ws: Workspace) -> Profile | None:
    """The parsed profile, or None when ``profile.toml`` does not exist."""
    if not ws.profile.exists():
        return None
    return once("profile", ws.profile, lambda: read_profile(ws.profile, ws.rel(ws.profile)))


def read_profile(path: Path, display: str) -> Profile:
    """A profile file anywhere (``dcx compare`` reads its plan's), errors naming ``display``."""
    data, text = load_toml(path, display)
    return parse_profile(data, display, text)


def parse_profile(data: dict[str, Any], display: str, text: str = "") -> Profile:
    """A profile from parsed TOML (or an object with the same keys), checked strictly.

    ``display`` names the input in errors; ``text`` (the TOML source, when
    there is one) lets an error name its line.
    """
    clean = _validated(PROFILE_SHAPE, data, display, text)
    enabled = clean.get("enabled", False)
    agents = tuple(clean.get("enabled_agents", []))
    if enabled and not agents:
        raise locate_error(
            InvalidInput(
                "enabled_agents: needs at least one agent when enabled = true",
                field="enabled_agents",
            ),
            display,
            text,
        )
    cp_raw = clean.get("context_provider")
    if cp_raw is None:
        cp = ContextProviderConfig()
    else:
        cp = ContextProviderConfig(
            provider=cp_raw.get("provider", "bm25"),
            namespace=cp_raw.get("namespace", "decision-context"),
            scope_ref=cp_raw.get("scope_ref"),
            max_results=cp_raw.get("max_results", 4),
            timeout_seconds=cp_raw.get("timeout_seconds", 10),
            max_content_chars=cp_raw.get("max_content_chars", 128_000),
            config=cp_raw.get("config", {}),
        )
    if cp.config:  # checked strictly by the chosen provider (imported only when there is config)
        from dcx.state.provider_config import validate_config

        try:
            validate_config(cp.provider, cp.namespace, cp.config)
        except InvalidInput as exc:
            raise locate_error(exc, display, text) from None
    bounds = clean.get("bounds", {})
    commit = clean.get("commit", {})
    return Profile(
        goal_id=clean["goal_id"],
        enabled=enabled,
        enabled_agents=agents,
        context_provider=cp,
        scan_timeout_seconds=bounds.get("timeout_seconds", 30),
        max_read_bytes=bounds.get("max_read_bytes", MIB),
        max_scan_bytes=bounds.get("max_scan_bytes", 64 * MIB),
        allow_self_confirmation=commit.get("allow_self_confirmation", False),
        external_event_logs=tuple(commit.get("external_event_logs", [])),
        raw=data,
        require_review=commit.get("require_review", False),
        failure_alert_after=clean.get("alerts", {}).get(
            "failure_alert_after", DEFAULT_FAILURE_ALERT_AFTER
        ),
    )


def load_registry(ws: Workspace) -> Registry:
    """The parsed source registry; a missing file is an empty registry."""
    display = ws.rel(ws.sources)
    if not ws.sources.exists():
        return Registry((), (), {})

    def parse() -> Registry:
        data, text = load_toml(ws.sources, display)
        return parse_registry(data, display, text)

    return once("registry", ws.sources, parse)


def parse_registry(data: dict[str, Any], display: str, text: str = "") -> Registry:
    """A source registry from parsed TOML, checked strictly (errors name ``display`` and the line)."""
    clean = _validated(REGISTRY_SHAPE, data, display, text)
    bindings = tuple(
        Binding(b["provider_id"], b["adapter"], b.get("config", {}))
        for b in clean.get("bindings", [])
    )
    declared = {b.provider_id for b in bindings}
    sources = []
    for index, raw in enumerate(clean.get("sources", [])):
        if raw["provider_id"] not in declared:
            raise locate_error(
                InvalidInput(
                    f"sources[{index}].provider_id: no [[bindings]] entry declares {raw['provider_id']!r}",
                    field=f"sources[{index}].provider_id",
                    code="binding_missing",
                ),
                display,
                text,
            )
        adapter = next(b.adapter for b in bindings if b.provider_id == raw["provider_id"])
        form = "git" if "repo" in raw["locator"] else "mcp" if "command" in raw["locator"] else None
        if form != (adapter if adapter in ("git", "mcp") else None):
            wanted = {
                "git": "{ repo, ref, path?, include?, exclude? }",
                "mcp": "{ command, env?, uri_prefix, include? }",
            }.get(adapter, "a path or { path, include, exclude }")
            raise locate_error(
                InvalidInput(
                    f"sources[{index}].locator: adapter {adapter!r} takes {wanted}",
                    field=f"sources[{index}].locator",
                    code="invalid_field",
                ),
                display,
                text,
            )
        sources.append(
            Source(**{**raw, "objectives": tuple(raw["objectives"])})
        )  # one shape: SOURCE
    return Registry(bindings, tuple(sources), data)


def _jsonable(value: Any) -> Any:
    """TOML values as JSON values for digests (dates become their ISO text)."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if isinstance(value, str | bool | int) or value is None:
        return value
    if isinstance(value, float):
        return (
            value if value == value and value not in (float("inf"), float("-inf")) else str(value)
        )
    return str(value)


def resolve_agent(profile: Profile | None, explicit: str | None) -> str | None:
    """``--agent-id``/``DCX_AGENT_ID``, else the profile's only enabled agent."""
    if explicit:
        return explicit
    if profile is not None and len(profile.enabled_agents) == 1:
        return profile.enabled_agents[0]
    return None
