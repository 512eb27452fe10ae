"""One error base, one exit-code table (SPEC §3.6).

Core code raises a ``DcxError`` subclass; the CLI boundary turns it into one
line (or the ``dcx_error_v0`` envelope) and the subclass's exit code. Messages
name workspace-relative files and key paths, never private values.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any


class ExitCode(IntEnum):
    OK = 0
    REFUSED = 1
    INVALID_INPUT = 2
    NO_WORKSPACE = 3
    LOCK_BUSY = 4
    INTERNAL = 5
    INTERRUPTED = 130


class DcxError(Exception):
    """An expected failure with a stable code, a one-line message and a hint."""

    exit_code: ExitCode = ExitCode.INTERNAL
    default_code = "internal_error"

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        hint: str | None = None,
        field: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code or self.default_code
        self.hint = hint
        self.field = field

    def envelope(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message, "hint": self.hint}
        if self.field is not None:
            error["field"] = self.field
        return {"schema_version": "dcx_error_v0", "ok": False, "error": error}


class Refused(DcxError):
    """A verification or protocol check said no (exit 1)."""

    exit_code = ExitCode.REFUSED
    default_code = "refused"


class InvalidInput(DcxError):
    """Bad flags, invalid profile/registry/JSON input, unsafe public text (exit 2)."""

    exit_code = ExitCode.INVALID_INPUT
    default_code = "invalid_input"


class NoWorkspace(DcxError):
    """No workspace, or the capability is not active for this command (exit 3)."""

    exit_code = ExitCode.NO_WORKSPACE
    default_code = "workspace_not_found"


class LockBusy(DcxError):
    exit_code = ExitCode.LOCK_BUSY
    default_code = "lock_busy"


class InternalError(DcxError):
    exit_code = ExitCode.INTERNAL
    default_code = "internal_error"


class UnsafeText(InvalidInput):
    """Text that may not enter a public file (SPEC §3.4)."""

    default_code = "unsafe_public_text"


class WorkspaceSymlink(NoWorkspace):
    """A link or special file inside ``.decision-context/`` (SPEC §3.5 v4): never followed."""

    default_code = "workspace_symlink"

    def __init__(self, message: str, *, path: str, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.path = path  # workspace-relative: the entry refused


class DiskFull(NoWorkspace):
    """The device is full (or the file size limit was hit) while dcx wrote a file (SPEC §3.5 v4)."""

    default_code = "disk_full"
