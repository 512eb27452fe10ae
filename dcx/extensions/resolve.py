"""Which extension answers recall, and whether it may (SPEC §6.5).

Re-read on every call — state, the entrypoint's bytes, the manifest file's
drift — so ``dcx ext enable``/``doctor``/``upgrade`` recover a provider
without touching the profile. Resolving only reads: it never creates a state
file, a lock or a directory.

With an ``extension_id`` that extension is used or its status reported.
Without one, exactly one enabled, doctor-ready implementation must exist; when
exactly one extension is installed its own status is reported (a person with
one extension wants "enable it", not "select one").

A doctor proof is valid while (1) the verified revision is the active one,
(2) the pinned entrypoint's live identity equals the verified identity, and
(3) the manifest file the revision came from does not hold a manifest that was
never installed (edited without ``dcx ext upgrade``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from dcx.core.errors import DcxError
from dcx.core.workspace import Workspace
from dcx.extensions import runtime
from dcx.extensions.manifest import implements_protocol, load_manifest
from dcx.extensions.state import StateUnavailable, active_record, load_state
from dcx.packets.advisory import readiness


class Binding(NamedTuple):
    """A resolved, ready extension: dispatch uses only this pinned revision."""

    extension_id: str
    revision: dict[str, Any]

    @property
    def version(self) -> str:
        return self.revision["manifest"]["version"]

    @property
    def timeout_seconds(self) -> int:
        return self.revision["manifest"]["runtime"]["timeout_seconds"]

    @property
    def argv(self) -> list[str]:
        return runtime.argv(self.revision)

    @property
    def env(self) -> list[str]:
        return runtime.env_names(self.revision)


def manifest_drifted(record: dict[str, Any], rev: dict[str, Any]) -> bool:
    """The revision's manifest file now holds a manifest this extension never installed."""
    source = rev.get("manifest_path")
    if not source or not Path(source).is_file():
        return False  # moved or deleted: nothing claims a newer revision
    try:
        on_disk = load_manifest(Path(source)).revision
    except (DcxError, OSError):
        return True
    return on_disk not in {r["revision"] for r in record["revisions"]}


def proof_valid(record: dict[str, Any], rev: dict[str, Any]) -> bool:
    if (
        record["doctor_verified_revision"] != rev["revision"]
        or record["doctor_verified_identity"] is None
    ):
        return False
    if runtime.identity(rev) != record["doctor_verified_identity"]:
        return False
    return not manifest_drifted(record, rev)


def record_status(record: dict[str, Any]) -> tuple[str, bool]:
    """(status, doctor_verified) of one installed extension."""
    rev = active_record(record)
    verified = proof_valid(record, rev)
    if not implements_protocol(rev["manifest"]):
        return "extension_incompatible", verified
    if not record["enabled"]:
        return "extension_disabled", verified
    if not verified:
        return "extension_doctor_not_ready", verified
    return "ready", verified


def _one(ext_id: str, record: dict[str, Any]) -> tuple[dict[str, Any], Binding | None]:
    status, verified = record_status(record)
    packet = readiness(
        status, ext_id, installed=True, enabled=record["enabled"], doctor_verified=verified
    )
    return packet, (Binding(ext_id, active_record(record)) if status == "ready" else None)


def resolve(
    ws: Workspace, extension_id: str | None = None
) -> tuple[dict[str, Any], Binding | None]:
    """The readiness packet, and the binding to dispatch when it is ``ready``."""
    try:
        extensions = load_state(ws)["extensions"]
    except StateUnavailable:
        return readiness("extension_state_unavailable", extension_id), None
    if extension_id is not None:
        record = extensions.get(extension_id)
        if record is None:
            return readiness("extension_not_installed", extension_id), None
        return _one(extension_id, record)
    if not extensions:
        return readiness("extension_provider_not_installed"), None
    if len(extensions) == 1:
        ((only, record),) = extensions.items()
        return _one(only, record)
    statuses = {ext_id: record_status(record) for ext_id, record in sorted(extensions.items())}
    if all(status == "extension_incompatible" for status, _ in statuses.values()):
        return readiness("extension_provider_not_installed"), None
    ready = [ext_id for ext_id, (status, _) in statuses.items() if status == "ready"]
    if len(ready) == 1:
        return _one(ready[0], extensions[ready[0]])
    enabled = any(r["enabled"] for r in extensions.values())
    verified = any(verified for _, verified in statuses.values())
    status = "extension_provider_ambiguous" if len(ready) > 1 else "extension_provider_not_ready"
    return readiness(status, installed=True, enabled=enabled, doctor_verified=verified), None
