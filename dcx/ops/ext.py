"""``dcx ext``: the extension lifecycle (SPEC §7).

Every mutation follows one discipline: plan from a lock-free read; with
``--dry-run`` stop there (no file, no lock file, no directory is created);
otherwise take the state lock, read again, apply, write atomically, release.
The doctor runs *outside* the lock (it may take up to 120 s) and its proof is
recorded under the lock only if the doctored revision is still the active one
(compare-and-swap), so a concurrent upgrade can never inherit a stale proof.

``install`` pins, stores the revision, enables (unless ``--disabled``) and runs
the doctor, so a good extension is ready in one step; ``upgrade`` and
``rollback`` re-run the doctor too (``--no-doctor`` skips it). A failed doctor
leaves the extension installed, clears its proof and exits 1.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dcx.core.clock import Clock
from dcx.core.errors import ExitCode, InvalidInput, Refused
from dcx.core.result import Result
from dcx.core.workspace import Workspace
from dcx.extensions import runtime
from dcx.extensions.doctor import DoctorOutcome, run_doctor
from dcx.extensions.manifest import load_manifest
from dcx.extensions.resolve import manifest_drifted, record_status, resolve
from dcx.extensions.state import (
    active_record,
    add_revision,
    clear_proof,
    load_state,
    locked,
    revision_record,
    save_state,
)
from dcx.packets.advisory import readiness

PIN_KEYS = ("entrypoint_path", "module_path")


def row(ext_id: str, record: dict[str, Any]) -> dict[str, Any]:
    """The public projection of one installed extension: ids, flags, no paths."""
    rev = active_record(record)
    status, verified = record_status(record)
    runtime_spec = rev["manifest"]["runtime"]
    return {
        "extension_id": ext_id,
        "version": rev["manifest"]["version"],
        "enabled": record["enabled"],
        "active_revision": record["active_revision"],
        "rollback_revision": record["rollback_revision"],
        "revisions": [r["revision"] for r in record["revisions"]],
        "doctor_verified": verified,
        "manifest_changed": manifest_drifted(record, rev),
        "runtime": "python_module" if "python_module" in runtime_spec else "entrypoint",
        "protocol": runtime_spec["protocol"],
        "readiness": readiness(
            status, ext_id, installed=True, enabled=record["enabled"], doctor_verified=verified
        ),
    }


def _new_revision(path: str, clock: Clock) -> tuple[str, dict[str, Any]]:
    manifest = load_manifest(Path(path))
    assert manifest.source is not None
    pinned = runtime.pin(manifest.runtime, manifest.source.parent)
    rev = {
        "revision": manifest.revision,
        "manifest": manifest.normalised,
        **pinned,
        "manifest_path": str(manifest.source),
        "installed_at": clock.now(),
    }
    return manifest.id, rev


def _same_pin(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return all(a.get(k) == b.get(k) for k in PIN_KEYS)


def _require(state: dict[str, Any], ext_id: str) -> dict[str, Any]:
    record = state["extensions"].get(ext_id)
    if record is None:
        raise InvalidInput(
            f"extension {ext_id!r} is not installed",
            code="extension_not_installed",
            field="ID",
            hint="see `dcx ext list`, or install it with `dcx ext install PATH`",
        )
    return record


def _doctor_and_record(ws: Workspace, ext_id: str, wait: float) -> DoctorOutcome:
    record = load_state(ws)["extensions"][ext_id]
    outcome = run_doctor(record, active_record(record), cwd=str(ws.root))
    with locked(ws, wait) as state:
        current = state["extensions"].get(ext_id)
        if current is None or current["active_revision"] != outcome.revision:
            return outcome._replace(passed=False, reason_code="revision_changed_during_doctor")
        if outcome.passed:
            current["doctor_verified_revision"] = outcome.revision
            current["doctor_verified_identity"] = outcome.identity
        else:
            clear_proof(current)
        save_state(ws, state)
    return outcome


def _result(
    command: str,
    ws: Workspace,
    ext_id: str,
    action: str,
    *,
    changed: bool,
    dry_run: bool,
    revision: str | None,
    doctor: DoctorOutcome | None,
) -> Result:
    record = load_state(ws)["extensions"].get(ext_id)
    data = {
        "action": action,
        "changed": changed,
        "dry_run": dry_run,
        "extension_id": ext_id,
        "revision": revision,
        "doctor": None
        if doctor is None
        else {
            "passed": doctor.passed,
            "reason_code": doctor.reason_code,
            "revision": doctor.revision,
        },
        "extension": None if record is None else row(ext_id, record),
    }
    failed = doctor is not None and not doctor.passed
    return Result(
        command,
        data,
        status="error" if failed else "ok",
        exit_code=ExitCode.REFUSED if failed else ExitCode.OK,
    )


def _maybe_doctor(ws: Workspace, ext_id: str, wait: float, *, run: bool) -> DoctorOutcome | None:
    return _doctor_and_record(ws, ext_id, wait) if run else None


def install(
    *,
    ws: Workspace,
    path: str,
    enable: bool = True,
    doctor: bool = True,
    clock: Clock,
    dry_run: bool = False,
    wait: float = 5.0,
) -> Result:
    ext_id, rev = _new_revision(path, clock)

    def plan(state: dict[str, Any]) -> str:
        existing = state["extensions"].get(ext_id)
        if existing is None:
            return "install"
        active = active_record(existing)
        if active["revision"] != rev["revision"] or not _same_pin(active, rev):
            raise Refused(
                f"extension {ext_id!r} is already installed from another revision or location",
                code="extension_already_installed",
                hint="use `dcx ext upgrade PATH` to replace it",
            )
        return "none"

    action = plan(load_state(ws))
    if dry_run:
        return _result(
            "ext install",
            ws,
            ext_id,
            action,
            changed=action != "none",
            dry_run=True,
            revision=rev["revision"],
            doctor=None,
        )
    if action == "install":
        with locked(ws, wait) as state:
            action = plan(state)
            if action == "install":
                state["extensions"][ext_id] = {
                    "enabled": enable,
                    "active_revision": rev["revision"],
                    "rollback_revision": None,
                    "revisions": [rev],
                    "doctor_verified_revision": None,
                    "doctor_verified_identity": None,
                }
                save_state(ws, state)
    record = load_state(ws)["extensions"][ext_id]
    run = doctor and (action == "install" or record_status(record)[1] is False)
    outcome = _maybe_doctor(ws, ext_id, wait, run=run)
    return _result(
        "ext install",
        ws,
        ext_id,
        action,
        changed=action != "none",
        dry_run=False,
        revision=rev["revision"],
        doctor=outcome,
    )


def upgrade(
    *,
    ws: Workspace,
    path: str,
    clock: Clock,
    doctor: bool = True,
    dry_run: bool = False,
    wait: float = 5.0,
) -> Result:
    ext_id, rev = _new_revision(path, clock)

    def apply(state: dict[str, Any]) -> str:
        record = _require(state, ext_id)
        active = active_record(record)
        if active["revision"] == rev["revision"]:
            if _same_pin(active, rev):
                return "none"
            record["revisions"] = [
                rev if r["revision"] == rev["revision"] else r for r in record["revisions"]
            ]
            return "upgrade"  # same manifest, re-pinned entrypoint
        record["rollback_revision"] = record["active_revision"]
        record["active_revision"] = rev["revision"]
        add_revision(record, rev)
        return "upgrade"

    action = apply(load_state(ws))  # applied to a throwaway copy: planning only
    if dry_run:
        return _result(
            "ext upgrade",
            ws,
            ext_id,
            action,
            changed=action != "none",
            dry_run=True,
            revision=rev["revision"],
            doctor=None,
        )
    if action != "none":
        with locked(ws, wait) as state:
            action = apply(state)
            if action != "none":
                save_state(ws, state)
    record = load_state(ws)["extensions"][ext_id]
    run = doctor and (action != "none" or record_status(record)[1] is False)
    outcome = _maybe_doctor(ws, ext_id, wait, run=run)
    return _result(
        "ext upgrade",
        ws,
        ext_id,
        action,
        changed=action != "none",
        dry_run=False,
        revision=rev["revision"],
        doctor=outcome,
    )


def set_enabled(
    *, ws: Workspace, ext_id: str, enabled: bool, dry_run: bool = False, wait: float = 5.0
) -> Result:
    command = "ext enable" if enabled else "ext disable"
    verb = "enable" if enabled else "disable"
    record = _require(load_state(ws), ext_id)
    changed = record["enabled"] != enabled
    if changed and not dry_run:
        with locked(ws, wait) as state:
            current = _require(state, ext_id)
            changed = current["enabled"] != enabled
            current["enabled"] = enabled
            if changed:
                save_state(ws, state)
    return _result(
        command,
        ws,
        ext_id,
        verb if changed else "none",
        changed=changed,
        dry_run=dry_run,
        revision=record["active_revision"],
        doctor=None,
    )


def rollback(
    *, ws: Workspace, ext_id: str, doctor: bool = True, dry_run: bool = False, wait: float = 5.0
) -> Result:
    def apply(state: dict[str, Any]) -> str:
        record = _require(state, ext_id)
        target = record["rollback_revision"]
        if target is None or revision_record(record, target) is None:
            raise Refused(
                f"extension {ext_id!r} has no revision to roll back to",
                code="no_rollback_revision",
                hint="rollback needs an earlier `dcx ext upgrade`",
            )
        record["active_revision"], record["rollback_revision"] = target, record["active_revision"]
        return target

    target = apply(load_state(ws))
    if dry_run:
        return _result(
            "ext rollback",
            ws,
            ext_id,
            "rollback",
            changed=True,
            dry_run=True,
            revision=target,
            doctor=None,
        )
    with locked(ws, wait) as state:
        target = apply(state)
        save_state(ws, state)
    outcome = _maybe_doctor(ws, ext_id, wait, run=doctor)
    return _result(
        "ext rollback",
        ws,
        ext_id,
        "rollback",
        changed=True,
        dry_run=False,
        revision=target,
        doctor=outcome,
    )


def doctor(
    *,
    ws: Workspace,
    ext_id: str | None,
    all_: bool = False,
    dry_run: bool = False,
    wait: float = 5.0,
) -> Result:
    if (ext_id is None) == (not all_):
        raise InvalidInput(
            "ext doctor: give one extension ID or --all", code="usage_error", field="ID"
        )
    state = load_state(ws)
    ids: list[str] = sorted(state["extensions"]) if ext_id is None else [ext_id]
    for one in ids:
        _require(state, one)
    results = [
        _result(
            "ext doctor",
            ws,
            one,
            "doctor",
            changed=not dry_run,
            dry_run=dry_run,
            revision=state["extensions"][one]["active_revision"],
            doctor=None if dry_run else _doctor_and_record(ws, one, wait),
        )
        for one in ids
    ]
    if not all_:
        return results[0]
    failed = any(r.exit_code for r in results)
    return Result(
        "ext doctor",
        {"dry_run": dry_run, "results": [r.data for r in results]},
        status="error" if failed else "ok",
        exit_code=ExitCode.REFUSED if failed else ExitCode.OK,
    )


def list_(*, ws: Workspace) -> Result:
    extensions = load_state(ws)["extensions"]
    resolution, _ = resolve(ws, None)
    rows = [row(ext_id, extensions[ext_id]) for ext_id in sorted(extensions)]
    return Result("ext list", {"extensions": rows, "resolution": resolution})
