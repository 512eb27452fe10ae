"""What every use case returns: one Result, rendered by one renderer (STYLE rule 4)."""

from __future__ import annotations

from typing import Any, Literal

from dcx.core.errors import ExitCode

Status = Literal["ok", "partial", "error"]


class Result:
    """``data`` is the machine projection; ``exit_code`` is non-zero only for a
    result that is still worth printing whole (verify's problem list, status of
    an invalid profile). ``raw_json``: `show --format json` prints stored bytes."""

    def __init__(
        self,
        command: str,
        data: Any,
        status: Status = "ok",
        warnings: list[str] | None = None,
        exit_code: ExitCode = ExitCode.OK,
        raw_json: bytes | None = None,
    ) -> None:
        self.command = command
        self.data = data
        self.status = status
        self.warnings = list(warnings or [])
        self.exit_code = exit_code
        self.raw_json = raw_json

    def envelope(self) -> dict[str, Any]:
        return {
            "schema_version": "dcx_result_v0",
            "ok": self.exit_code == ExitCode.OK,
            "command": self.command,
            "status": self.status,
            "data": self.data,
            "warnings": list(self.warnings),
        }
