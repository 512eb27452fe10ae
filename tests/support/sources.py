"""Helpers for source-plane tests: an enabled profile, a registry, the plane's objects."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import blake3

from tests.support.workspace import REPO

PLUGIN_FIXTURE = REPO / "fixtures" / "plugins" / "dcx-example-source"

PROFILE = """\
schema_version = "decision_context_profile_v0"
goal_id = "goal-test"
enabled = true
enabled_agents = ["agent-a"]

[bounds]
timeout_seconds = {timeout}
max_read_bytes = {max_read_bytes}
"""


def file_revision(data: bytes) -> str:
    """A file's revision as SPEC §5.3 defines it (blake3 of its bytes), computed here, not by dcx."""
    return blake3.blake3(data).hexdigest()


def source_block(
    source_id: str,
    locator: str,
    *,
    provider_id: str = "files",
    priority: str = "p0",
    scan_mode: str = "incremental",
    policy: str = "always",
    extra: str = "",
) -> str:
    return f"""
[[sources]]
source_id = "{source_id}"
provider_id = "{provider_id}"
source_kind = "document"
priority = "{priority}"
evidence_level = "s1"
objectives = ["latency"]
scan_mode = "{scan_mode}"
exact_read_policy = "{policy}"
freshness_seconds = 3600
locator = {locator}
{extra}"""


def binding_block(provider_id: str = "files", adapter: str = "local-file", config: str = "") -> str:
    text = f'\n[[bindings]]\nprovider_id = "{provider_id}"\nadapter = "{adapter}"\n'
    if config:
        text += f"config = {config}\n"
    return text


def configure(root: Path, body: str, *, timeout: float = 30, max_read_bytes: int = 1 << 20) -> None:
    """Enable the profile of ``root`` and write ``sources.toml`` (bindings and sources)."""
    dc = root / ".decision-context"
    (dc / "profile.toml").write_text(PROFILE.format(timeout=timeout, max_read_bytes=max_read_bytes))
    (dc / "sources.toml").write_text('schema_version = "decision_source_registry_v0"\n' + body)


def docs_registry(root: Path, *, extra_sources: str = "", **kw: Any) -> None:
    """One local-file binding and one p0 source over ``docs/`` (markdown only)."""
    configure(
        root,
        binding_block()
        + source_block("source:docs", '{ path = "docs", include = ["**/*.md"] }')
        + extra_sources,
        **kw,
    )


def plane(root: Path, **profile_changes: Any):
    """(ws, profile, registry, providers) of an enabled workspace."""
    from dcx.core.workspace import Workspace
    from dcx.sources.registry import Providers
    from dcx.state.profile import load_profile, load_registry

    ws = Workspace(root)
    profile = load_profile(ws)._replace(**profile_changes)
    registry = load_registry(ws)
    return ws, profile, registry, Providers(ws, profile, registry)


def install_plugin(target: Path) -> Path:
    """pip-install the example plugin into ``target`` (offline, no build isolation), never into the venv."""
    build = target.parent / "plugin-src"
    shutil.copytree(PLUGIN_FIXTURE, build, dirs_exist_ok=True)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-build-isolation",
            "--no-deps",
            "--no-index",
            "--target",
            str(target),
            str(build),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return target
