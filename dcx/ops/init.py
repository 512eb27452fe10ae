"""``dcx init``: create ``.decision-context/`` — only what is missing, overwriting nothing."""

from __future__ import annotations

import os
from pathlib import Path

from dcx.core.errors import InvalidInput
from dcx.core.fsutil import atomic_write
from dcx.core.fsutil import ensure_dir as make_dir
from dcx.core.result import Result
from dcx.core.workspace import DC_DIR, GOAL_ID_RE, WORKSPACE_SCHEMA, Workspace, goal_id_from_name
from dcx.state.keys import create_key, mint_refused

README = """\
# .decision-context

This folder is maintained by **dcx**, the Decision Context CLI
(`dcx --help`). It serves the goal named in `workspace.toml`.

Public — safe to commit, meant to be reviewed in pull requests:

- `workspace.toml` — which goal this folder serves
- `packets/<kind>/<ref>.json` — content-addressed, write-once packets
- `decisions/<decision-id>.jsonl` — the append-only index of each decision
- `events.jsonl` — the append-only lifecycle event log
- `statements.jsonl` — one signed statement per writing command: who read and wrote what
- `signers/<agent-id>/<key-id>.pub` — each agent's public signing key, one per host

Private — never committed (see `.gitignore`), never copied into a packet:

- `profile.toml` — the goal profile (default off)
- `sources.toml` — the source registry: locators and provider config
- `private/` — the key, the agents' signing keys, committed cursors, caches, the search index, logs

Do not edit packets by hand: `dcx verify` re-hashes every one of them.
"""

GITIGNORE = """\
# dcx: private state never leaves this machine
profile.toml
sources.toml
private/
*.lock
*.tmp
.*.tmp
"""

GITATTRIBUTES = """\
# two agents' appends to the same log merge by keeping both lines
*.jsonl merge=union
"""

PROFILE_TEMPLATE = """\
# Decision Context goal profile (private; not committed).
# Default off: nothing scans, recalls or writes cursors until a person sets
# enabled = true and lists the agents allowed to act for this goal.
schema_version = "decision_context_profile_v0"
goal_id = "{goal_id}"
enabled = false
enabled_agents = [{agents}]

# Advisory recall: provider is bm25 (default), openviking, extension or none.
# Without the table, or without `provider` in it, recall uses bm25 (run
# `dcx index` to build its index); provider = "none" turns recall off.
# [context_provider]
# provider = "bm25"
# namespace = "decision-context"
# max_results = 4
# timeout_seconds = 10

# [bounds]
# timeout_seconds = 30          # per source scan
# max_read_bytes = 1048576      # per exact read
# max_scan_bytes = 67108864     # larger files are skipped unhashed

# [commit]
# allow_self_confirmation = false
# external_event_logs = []
"""

SOURCES_TEMPLATE = """\
# Decision Context source registry (private; not committed).
# Locators and provider config stay here; only the policy fields appear in
# the public manifest (`dcx sources`).
schema_version = "decision_source_registry_v0"

# [[bindings]]
# provider_id = "files"
# adapter = "local-file"
#
# [[sources]]
# source_id = "source:authority:docs"
# provider_id = "files"
# source_kind = "document"
# priority = "p0"
# evidence_level = "s1"
# objectives = ["latency"]
# scan_mode = "incremental"
# exact_read_policy = "always"
# freshness_seconds = 86400
# locator = { path = "docs", include = ["**/*.md"] }
"""


def _covering_source(root: Path) -> tuple[Path, str] | None:
    """(enclosing workspace root, source id) of a source of a workspace above ``root`` covering it."""
    from dcx.state.profile import load_registry

    for outer in root.parents:
        if not (outer / DC_DIR / "workspace.toml").is_file():
            continue
        try:
            registry = load_registry(Workspace(outer))
        except Exception:  # an unreadable registry cannot say; the next one up might
            continue
        for source in registry.sources:
            if not source.enabled or "command" in source.locator:  # an mcp server has no folder
                continue
            raw = Path(os.path.expanduser(source.locator["path"]))
            target = Path(os.path.realpath(raw if raw.is_absolute() else outer / raw))
            if target == root or target in root.parents:
                return outer, source.source_id
    return None


def init(*, root: Path, goal_id: str | None, agent_id: str | None, nested: bool = False) -> Result:
    root = root.resolve()
    goal = goal_id or goal_id_from_name(root.name)
    if not GOAL_ID_RE.fullmatch(goal):
        raise InvalidInput(
            "--goal-id: expected a token ([A-Za-z0-9][A-Za-z0-9_.:-]*)", field="--goal-id"
        )
    if agent_id is not None and not GOAL_ID_RE.fullmatch(agent_id):
        raise InvalidInput(
            "--agent-id: expected a token ([A-Za-z0-9][A-Za-z0-9_.:-]*)", field="--agent-id"
        )
    ws = Workspace(root)
    if ws.workspace_toml.exists():
        if goal_id is not None and goal_id != ws.goal_id:
            raise InvalidInput(
                f"--goal-id: this workspace already serves goal {ws.goal_id!r}",
                field="--goal-id",
                code="goal_exists",
                hint="a workspace serves one goal: leave out --goal-id, or init another folder",
            )
        goal = ws.goal_id  # an existing workspace keeps its goal
    elif not nested:
        covered = _covering_source(root)
        if covered is not None:
            outer, source_id = covered
            where = os.path.relpath(outer, root)
            raise InvalidInput(
                f"this folder lies inside source {source_id} of the workspace at {where}: a workspace here "
                "would sit inside that goal's authority",
                code="nested_workspace",
                hint="init the goal somewhere no source covers, or pass --nested to create it anyway "
                "(the outer goal never scans a .decision-context/ folder)",
            )
    if not ws.key_path.exists() and ws.workspace_toml.exists():
        refused = mint_refused(ws)  # a clone of a pinned goal imports its key (SPEC §16 v4)
        if refused is not None:
            raise refused
    created: list[str] = []

    def ensure_file(path: Path, text: str, mode: int = 0o644) -> None:
        if not path.exists():
            atomic_write(path, text.encode(), mode=mode)
            created.append(ws.rel(path))

    def ensure_dir(path: Path) -> None:
        if not path.is_dir():
            make_dir(path)  # never through a link (SPEC §3.5 v4)
            created.append(ws.rel(path) + "/")

    ensure_dir(ws.dc)
    ensure_file(ws.dc / "README.md", README)
    ensure_file(ws.dc / ".gitignore", GITIGNORE)
    ensure_file(ws.dc / ".gitattributes", GITATTRIBUTES)
    ensure_file(ws.workspace_toml, f'schema_version = "{WORKSPACE_SCHEMA}"\ngoal_id = "{goal}"\n')
    agents = f'"{agent_id}"' if agent_id else ""
    ensure_file(ws.profile, PROFILE_TEMPLATE.format(goal_id=goal, agents=agents), 0o600)
    ensure_file(ws.sources, SOURCES_TEMPLATE, 0o600)
    ensure_dir(ws.packets)
    ensure_dir(ws.decisions)
    ensure_file(ws.events, "")
    ensure_dir(ws.private)
    ws.private.chmod(0o700)
    if not ws.key_path.exists():
        create_key(ws)
        created.append(ws.rel(ws.key_path))
    if agent_id is not None:  # the agent's signing key on this host (SPEC §18)
        from dcx.core.clock import clock_from_env
        from dcx.state.signers import ensure_signer, public_path

        signer, wrote = ensure_signer(ws, agent_id, now=clock_from_env(None).now())
        if wrote:
            created.append(ws.rel(public_path(ws, agent_id, signer.key_id)))
    return Result(
        "init",
        {
            "goal_id": goal,
            "agent_id": agent_id,
            "workspace": DC_DIR,
            "created": created,
            "already_initialised": not created,
        },
    )
