"""Helpers for extension tests: build an extension folder from a fixture executable.

The recall tests reuse them to drive ``dcx recall`` through an extension.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from dcx.core.clock import clock_from_env
from tests.support.workspace import REPO

FIXTURES = REPO / "fixtures" / "extensions"
PROTOCOL = "decision_context_advisory_provider_v0"


def manifest_text(
    ext_id: str,
    entrypoint: str,
    *,
    version: str = "1.0.0",
    timeout: object = 10,
    env: tuple[str, ...] = (),
    args: tuple[str, ...] = (),
    schema: str = "dcx_extension_manifest_v0",
    extra_top: str = "",
) -> str:
    timeout_text = str(timeout).lower() if isinstance(timeout, bool) else str(timeout)
    return (
        f'schema_version = "{schema}"\n'
        f'id = "{ext_id}"\n'
        f'version = "{version}"\n'
        f"{extra_top}"
        'permissions = ["decision_context.read"]\n'
        "\n[runtime]\n"
        f'protocol = "{PROTOCOL}"\n'
        f'entrypoint = "{entrypoint}"\n'
        f"args = {list(args)!r}\n".replace("'", '"')
        + 'doctor_args = ["--doctor"]\n'
        'required_permissions = ["decision_context.read"]\n'
        f"timeout_seconds = {timeout_text}\n"
        f"env = {list(env)!r}\n".replace("'", '"')
        + "\n[[implements]]\n"
        'capability_id = "decision-context"\n'
        f'protocol = "{PROTOCOL}"\n'
    )


def make_extension(base: Path, script: str, ext_id: str | None = None, **manifest: object) -> Path:
    """Copy ``fixtures/extensions/<script>`` into ``base/<id>/`` beside a manifest; return the manifest."""
    ext_id = ext_id or script.removesuffix(".py").replace("_", "-")
    folder = base / ext_id
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy2(FIXTURES / script, folder / script)
    path = folder / "extension.toml"
    path.write_text(manifest_text(ext_id, f"./{script}", **manifest))  # type: ignore[arg-type]
    return path


def install(ws_root: Path, manifest: Path, *extra: str) -> None:
    """Install through the ops layer (the CLI tests cover the command itself)."""
    from dcx.core.workspace import Workspace
    from dcx.ops.ext import install as op

    enable = "--disabled" not in extra
    result = op(clock=clock_from_env(), ws=Workspace(ws_root), path=str(manifest), enable=enable)
    assert result.exit_code == 0, result.data


def request(**overrides: object):
    """``tests.support.recall.request`` with what the extension tests ask: a host scope and a canary query."""
    from tests.support.recall import request as recall_request

    values: dict[str, object] = {
        "scope_ref": "host-session:codex:thread-a",
        "query": "cache ttl QUERY-CANARY",
        "query_summary": "Cache TTL question",
        "max_results": 4,
        "timeout_seconds": 10,
    }
    return recall_request(**{**values, **overrides})


def retrieve(
    ws_root: Path, config: dict | None = None, *, deadline_in: float = 30, **overrides: object
):
    from dcx.core.workspace import Workspace
    from dcx.extensions.resolve import resolve
    from dcx.providers.extension import ExtensionProvider

    provider = ExtensionProvider(Workspace(ws_root), config or {}, resolve=resolve)
    result = provider.retrieve(request(**overrides), deadline=time.monotonic() + deadline_in)
    return provider, result
