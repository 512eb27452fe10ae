"""The doctor: does the pinned revision run? (SPEC §7)

It passes iff the revision's ``doctor_args`` exit 0 within the manifest's
``timeout_seconds``, through the one process boundary, and the entrypoint's
identity is the same before and after the run (a swap during the probe proves
nothing). The proof it yields is ``(revision, identity)``; the caller records
it under the state lock only if the revision is still the active one.

Nothing the process prints is kept: stdout is discarded, stderr only counted.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from dcx.core.process import run_bounded
from dcx.extensions import runtime
from dcx.extensions.resolve import manifest_drifted

# reason codes of a failed doctor (docs/extensions.md)
FAILURES = {
    "timeout": "doctor_timeout",
    "output_too_large": "doctor_output_too_large",
    "request_too_large": "doctor_output_too_large",
    "spawn_failed": "entrypoint_unavailable",
}


class DoctorOutcome(NamedTuple):
    passed: bool
    reason_code: str | None
    revision: str
    identity: str | None


def run_doctor(
    record: dict[str, Any], rev: dict[str, Any], *, cwd: str | None = None
) -> DoctorOutcome:
    """Probe one revision (the caller passes the active one). Never raises for a bad extension."""
    revision = rev["revision"]

    def failed(code: str) -> DoctorOutcome:
        return DoctorOutcome(False, code, revision, None)

    if manifest_drifted(record, rev):
        return failed("manifest_changed")
    before = runtime.identity(rev)
    if before is None:
        return failed("entrypoint_unavailable")
    out = run_bounded(
        runtime.doctor_argv(rev),
        timeout=rev["manifest"]["runtime"]["timeout_seconds"],
        env_allow=runtime.env_names(rev),
        cwd=cwd,
    )
    if out.status != "exited":
        return failed(FAILURES[out.status])
    if out.returncode != 0:
        return failed("doctor_exit_nonzero")
    if runtime.identity(rev) != before:
        return failed("entrypoint_changed_during_doctor")
    return DoctorOutcome(True, None, revision, before)
