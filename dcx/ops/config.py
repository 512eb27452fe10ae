"""Configuration by command: ``enable``, ``disable``, ``source add|rm|list``, ``provider set``.

Every edit goes the same way: lock the file, parse it with tomlkit (so
comments, blank lines and key order survive), change only what the command
names, then validate the *new text* exactly as every other command will read
it (``parse_profile`` / ``parse_registry``). Only a text that validates is
written, atomically and 0600; a refused edit changes nothing. Both files are
private: what a command prints names the change, never a locator or a
provider config value.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from dcx.core.errors import InvalidInput
from dcx.core.fsutil import atomic_write, file_lock, read_text
from dcx.core.public import check_token
from dcx.core.result import Result
from dcx.core.vocab import PRIORITIES, PROVIDERS, SOURCE_KINDS
from dcx.core.workspace import Workspace
from dcx.state.profile import (
    PROFILE_SCHEMA,
    REGISTRY_SCHEMA,
    check_provider_key,
    parse_profile,
    parse_registry,
)

LOCAL_FILE_BINDING = "files"
GIT_BINDING = "repos"
MCP_BINDING = "mcp-servers"
MCP_CHECK_SECONDS = 30.0  # when the profile sets no [bounds] timeout_seconds
DEFAULT_FRESHNESS = 86_400
PROVIDER_KEYS = ("max_results", "timeout_seconds")


def _edit(
    ws: Workspace,
    path: Path,
    template: str,
    mutate: Callable[[Any], None],
    check: Callable[[dict[str, Any], str, str], Any],
    *,
    wait: float,
) -> bool:
    """Apply ``mutate`` to the TOML document at ``path``; validate; write. True when the bytes changed."""
    import tomlkit

    display = ws.rel(path)
    with file_lock(path, wait=wait, display=display):
        try:
            before = read_text(path) if path.exists() else template
        except UnicodeDecodeError:
            raise InvalidInput(f"{display}: not UTF-8 text", code="invalid_toml") from None
        try:
            doc = tomlkit.parse(before)
        except tomlkit.exceptions.ParseError as exc:
            raise InvalidInput(
                f"{display}: invalid TOML: {exc}",
                code="invalid_toml",
                hint="fix the file by hand first; dcx edits only files it can read",
            ) from None
        mutate(doc)
        after = tomlkit.dumps(doc)
        if not after.endswith("\n"):
            after += "\n"
        check(tomllib.loads(after), display, after)
        if path.exists() and after == before:
            return False
        atomic_write(path, after.encode(), mode=0o600)
        return True


def _spaced(doc: Any) -> Any:
    """``doc``, with a blank line added when its text does not end in one (new tables stand apart)."""
    import tomlkit

    if not tomlkit.dumps(doc).endswith("\n\n"):
        doc.add(tomlkit.nl())
    return doc


def _profile_template(ws: Workspace) -> str:
    return f'schema_version = "{PROFILE_SCHEMA}"\ngoal_id = "{ws.goal_id}"\nenabled = false\nenabled_agents = []\n'


def _edit_profile(ws: Workspace, mutate: Callable[[Any], None], *, wait: float) -> bool:
    return _edit(ws, ws.profile, _profile_template(ws), mutate, parse_profile, wait=wait)


def _edit_registry(ws: Workspace, mutate: Callable[[Any], None], *, wait: float) -> bool:
    return _edit(
        ws, ws.sources, f'schema_version = "{REGISTRY_SCHEMA}"\n', mutate, parse_registry, wait=wait
    )


# --- enable / disable -----------------------------------------------------------------------------


def enable(*, ws: Workspace, agents: Sequence[str], wait: float = 5.0) -> Result:
    """``enabled = true``; each ``--agent`` joins ``enabled_agents`` (kept in the order given)."""
    for agent in agents:
        check_token(agent, field="--agent")
    added: list[str] = []

    def mutate(doc: Any) -> None:
        import tomlkit

        doc["enabled"] = True
        current = doc.get("enabled_agents")
        if current is None:
            current = tomlkit.array()
            doc["enabled_agents"] = current
        for agent in agents:
            if agent not in current:
                current.append(agent)
                added.append(agent)

    try:
        changed = _edit_profile(ws, mutate, wait=wait)
    except InvalidInput as exc:
        if exc.field == "enabled_agents":
            raise InvalidInput(
                "no agent is enabled for this goal",
                field="--agent",
                code="agent_required",
                hint="name one: dcx enable --agent AGENT_ID",
            ) from None
        raise
    from dcx.core.clock import clock_from_env
    from dcx.state.signers import ensure_signer

    now = clock_from_env(None).now()
    keys = []
    for agent in agents:  # each agent named gets its signing key on this host (SPEC §18)
        signer, wrote = ensure_signer(ws, agent, now=now, wait=wait)
        keys.append({"agent_id": agent, "key_id": signer.key_id, "created": wrote})
    return Result(
        "enable",
        {"enabled": True, "agents_added": added, "changed": changed, "signing_keys": keys},
    )


def disable(*, ws: Workspace, wait: float = 5.0) -> Result:
    def mutate(doc: Any) -> None:
        doc["enabled"] = False

    return Result("disable", {"enabled": False, "changed": _edit_profile(ws, mutate, wait=wait)})


# --- sources ----------------------------------------------------------------------------------------


def _check_path(ws: Workspace, path: str) -> None:
    from dcx.core.walk import LocatorError, resolve_locator

    try:
        resolve_locator(ws, {"path": path})
    except LocatorError as exc:
        code = str(exc.args[0]) if exc.args else "locator_invalid"
        hints = {
            "locator_missing": "create it first, or check the path (relative paths start at the goal root)",
            "locator_outside_root": "a relative path may not leave the goal root; give an absolute path instead",
            "locator_inside_workspace": ".decision-context/ is dcx's own folder, never a source",
        }
        raise InvalidInput(
            f"--path: {code.replace('_', ' ')}", field="--path", code=code, hint=hints.get(code)
        ) from None


_MCP_HINTS = {
    "mcp_start_failed": "check that the command runs from the goal root and speaks MCP on stdio",
    "mcp_timeout": "the server did not answer in time; raise [bounds] timeout_seconds in profile.toml",
    "mcp_protocol_error": "the server wrote something that is not MCP JSON-RPC on stdout (logs go to stderr)",
    "mcp_server_exited": "the server exited while it was being listed",
    "mcp_output_too_large": "the server wrote a line larger than [bounds] max_scan_bytes allows",
    "mcp_request_failed": "the server answered resources/list with an error",
    "mcp_resources_unsupported": "the server declares no resources capability",
    "mcp_sdk_missing": "install the MCP SDK: pip install 'dcx[mcp]'",
}


def _check_mcp(ws: Workspace, source_id: str, locator: dict[str, Any]) -> int:
    """Start the server once and list its resources under the prefix (SPEC §15.1); their count."""
    import time

    from dcx.sources.base import SourceUnavailable
    from dcx.sources.mcp_source import McpProvider
    from dcx.state.profile import MIB, Source, load_profile

    try:
        profile = load_profile(ws)
    except InvalidInput:
        profile = None
    seconds = profile.scan_timeout_seconds if profile is not None else MCP_CHECK_SECONDS
    max_scan_bytes = profile.max_scan_bytes if profile is not None else 64 * MIB
    source = Source(
        source_id, MCP_BINDING, "document", "p0", "s1", (ws.goal_id,), "incremental", "always",
        DEFAULT_FRESHNESS, locator,
    )  # fmt: skip
    provider = McpProvider(ws, MCP_BINDING, {}, max_scan_bytes=max_scan_bytes, persist=False)
    try:
        return provider.check(source, time.monotonic() + seconds)
    except SourceUnavailable as exc:
        code = exc.reason_code
        raise InvalidInput(
            f"--mcp: the server did not start and list its resources ({code})",
            field="--mcp",
            code=code,
            hint=_MCP_HINTS.get(code),
        ) from None


GIT_HINTS = {
    "git_unavailable": "install git and put it on PATH",
    "git_version_unsupported": "upgrade git (docs/sources.md names the oldest dcx reads)",
    "git_repository_missing": "give the path of a repository (a work tree or a bare one); "
    "relative paths start at the goal root",
    "git_repository_corrupt": "check the repository with `git fsck`",
    "git_ref_missing": "name a branch, tag or commit the repository has (`git branch -a`)",
    "locator_outside_root": "--path is a folder inside the repository, without `..`",
}
GIT_CHECK_SECONDS = 10.0


def _check_git(ws: Workspace, source_id: str, repo: str, ref: str, path: str | None) -> None:
    """As ``--path`` is checked: the repository opens and the ref resolves, before anything is
    written (the same checks as ``status --check``; SPEC §15)."""
    import time

    from dcx.sources.base import SourceUnavailable
    from dcx.sources.git import GitProvider
    from dcx.state.profile import Source

    locator: dict[str, Any] = {"repo": repo, "ref": ref}
    if path:
        locator["path"] = path
    source = Source(
        source_id, GIT_BINDING, "repository", "p0", "s1", (ws.goal_id,), "incremental",
        "always", DEFAULT_FRESHNESS, locator,
    )  # fmt: skip
    provider = GitProvider(ws, GIT_BINDING, {})
    health = provider.health()
    code = health.reason_code if health.status != "healthy" else None
    if code is None:
        try:
            provider.check(source, time.monotonic() + GIT_CHECK_SECONDS)
        except SourceUnavailable as exc:
            code = exc.reason_code
    if code is not None:
        field = (
            "--ref"
            if code == "git_ref_missing"
            else "--path"
            if code.startswith("locator")
            else "--git"
        )
        raise InvalidInput(
            f"{field}: {code.replace('_', ' ')}", field=field, code=code, hint=GIT_HINTS.get(code)
        )


def source_add(
    *,
    ws: Workspace,
    source_id: str,
    path: str | None,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    priority: str = "p0",
    kind: str | None = None,
    objectives: Sequence[str] = (),
    on_demand: bool = False,
    git: str | None = None,
    ref: str | None = None,
    mcp: Sequence[str] | None = None,
    wait: float = 5.0,
) -> Result:
    """Add a local-file source, with ``git`` a git source at ``ref`` (SPEC §15), or with ``mcp``
    (the server's argv) an MCP server's resources under the prefix ``path`` (SPEC §15.1), checked
    at once: the server must start and list. The binding (``files``, ``repos`` or
    ``mcp-servers``) is added when there is none."""
    check_token(source_id, field="ID")
    if priority not in PRIORITIES:
        raise InvalidInput(
            f"--priority: expected one of {', '.join(PRIORITIES)}", field="--priority"
        )
    kind = kind or ("repository" if git else "document")
    if kind not in SOURCE_KINDS:
        raise InvalidInput(f"--kind: expected one of {', '.join(SOURCE_KINDS)}", field="--kind")
    for objective in objectives:
        check_token(objective, field="--objective")
    listed = None
    if mcp is not None:
        if git is not None or ref is not None or exclude:
            raise InvalidInput(
                "--mcp: not with --git, --ref or --exclude", field="--mcp", code="usage_error"
            )
        if not mcp:
            raise InvalidInput(
                "--mcp: the server's command goes after --: dcx source add ID --mcp -- CMD ARGS…",
                field="--mcp",
                code="usage_error",
            )
        mcp_locator = {
            "command": list(mcp),
            "env": {},
            "uri_prefix": path or "",
            "include": list(include),
        }
        listed = _check_mcp(ws, source_id, mcp_locator)
        binding_id, adapter = MCP_BINDING, "mcp"
    elif git is None:
        if ref is not None:
            raise InvalidInput("--ref: only with --git", field="--ref", code="usage_error")
        if not path:
            raise InvalidInput(
                "--path: required (or --git REPO --ref REF)", field="--path", code="usage_error"
            )
        _check_path(ws, path)
        binding_id, adapter = LOCAL_FILE_BINDING, "local-file"
    else:
        if not ref:
            raise InvalidInput(
                "--ref: required with --git (a branch, tag or commit)",
                field="--ref",
                code="usage_error",
            )
        binding_id, adapter = GIT_BINDING, "git"
        _check_git(ws, source_id, git, ref, path)
    added_binding: list[str] = []

    def mutate(doc: Any) -> None:
        import tomlkit

        sources = doc.get("sources")
        if sources is not None and any(s.get("source_id") == source_id for s in sources):
            raise InvalidInput(
                f"ID: a source {source_id!r} exists already",
                field="ID",
                code="duplicate_id",
                hint=f"remove it first: dcx source rm {source_id}",
            )
        bindings = doc.get("bindings")
        if bindings is None:
            bindings = tomlkit.aot()
            _spaced(doc).append("bindings", bindings)
        if not any(
            b.get("adapter") == adapter and b.get("provider_id") == binding_id for b in bindings
        ):
            if any(b.get("provider_id") == binding_id for b in bindings):
                raise InvalidInput(
                    f"bindings: provider_id {binding_id!r} is not a {adapter} binding",
                    field="bindings",
                    code="binding_conflict",
                )
            bindings.append(tomlkit.item({"provider_id": binding_id, "adapter": adapter}))
            added_binding.append(binding_id)
        locator = tomlkit.inline_table()
        if mcp is not None:
            locator["command"] = list(mcp)
            locator["uri_prefix"] = path or ""
        elif git is not None:
            locator["repo"] = git
            locator["ref"] = ref
            if path:
                locator["path"] = path
        else:
            locator["path"] = path
        if include:
            locator["include"] = list(include)
        if exclude:
            locator["exclude"] = list(exclude)
        row = tomlkit.table()
        row["source_id"] = source_id
        row["provider_id"] = binding_id
        row["source_kind"] = kind
        row["priority"] = priority
        row["evidence_level"] = "s1"
        row["objectives"] = list(objectives) or [ws.goal_id]
        row["scan_mode"] = "on_demand" if on_demand else "incremental"
        row["exact_read_policy"] = "always"
        row["freshness_seconds"] = DEFAULT_FRESHNESS
        row["locator"] = locator
        if sources is None:
            sources = tomlkit.aot()
            _spaced(doc).append("sources", sources)
        sources.append(row)

    _edit_registry(ws, mutate, wait=wait)
    return Result(
        "source add",
        {
            "source_id": source_id,
            "bindings_added": added_binding,
            "adapter": adapter,
            "scan_mode": "on_demand" if on_demand else "incremental",
            "priority": priority,
            **({"resources_listed": listed} if listed is not None else {}),
        },
    )


def source_rm(*, ws: Workspace, source_id: str, wait: float = 5.0) -> Result:
    def mutate(doc: Any) -> None:
        sources = doc.get("sources")
        index = next(
            (i for i, s in enumerate(sources or []) if s.get("source_id") == source_id), None
        )
        if index is None:
            raise InvalidInput(
                f"ID: no source {source_id!r} in {ws.rel(ws.sources)}",
                field="ID",
                code="unknown_source",
                hint="`dcx source list` shows the sources",
            )
        del sources[index]
        if len(sources) == 0:
            del doc["sources"]

    _edit_registry(ws, mutate, wait=wait)
    return Result("source rm", {"source_id": source_id, "removed": True})


# --- provider -----------------------------------------------------------------------------------------


def _config_value(text: str) -> Any:
    """``KEY=VALUE``'s value: a TOML value when it parses as one (``[0, 1]``, ``3``, ``true``), else the text."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def provider_set(
    *,
    ws: Workspace,
    provider: str,
    max_results: int | None = None,
    timeout: float | None = None,
    config: Sequence[str] = (),
    wait: float = 5.0,
) -> Result:
    """Set ``[context_provider]``; a change of provider drops the old provider's config table."""
    if provider not in PROVIDERS:
        raise InvalidInput(f"PROVIDER: expected one of {', '.join(PROVIDERS)}", field="PROVIDER")
    if max_results is not None:
        check_provider_key("max_results", max_results, field="--max-results")
    if timeout is not None:
        check_provider_key("timeout_seconds", timeout, field="--timeout")
    pairs: list[tuple[str, Any]] = []
    for item in config:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InvalidInput("--config: expected KEY=VALUE", field="--config")
        pairs.append((key.strip(), _config_value(value)))
    dropped: list[str] = []

    def mutate(doc: Any) -> None:
        import tomlkit

        table = doc.get("context_provider")
        if table is None:
            table = tomlkit.table()
            _spaced(doc).append("context_provider", table)
        if table.get("provider") != provider and "config" in table:
            dropped.extend(sorted(table["config"]))
            del table["config"]
        table["provider"] = provider
        if max_results is not None:
            table["max_results"] = max_results
        if timeout is not None:
            table["timeout_seconds"] = timeout
        if pairs:
            section = table.get("config")
            if section is None:
                section = tomlkit.table()
                table["config"] = section
            for key, value in pairs:
                section[key] = value

    changed = _edit_profile(ws, mutate, wait=wait)
    return Result(
        "provider set",
        {
            "provider": provider,
            "config_keys_set": sorted(k for k, _ in pairs),
            "config_keys_dropped": dropped,
            "changed": changed,
        },
    )
