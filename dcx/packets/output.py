"""The two envelopes every command prints with ``--format json`` (SPEC §3.6).

``dcx_result_v0`` carries a command's ``data``; ``dcx_error_v0`` a refusal
or failure. They are protocol objects, never stored; their JSON Schemas in
``docs/schemas/`` derive from these shapes like every packet's.
"""

from __future__ import annotations

from typing import Any

from dcx.core.fields import Any_, Bool, Const, Enum, Field, Obj, PrivateText, Shape, Token, bad

RESULT_SCHEMA = "dcx_result_v0"
ERROR_SCHEMA = "dcx_error_v0"


class _Lines(Field):
    """A list of one-line messages (warnings); private-grade text, never stored."""

    def check(self, value: Any, path: str) -> Any:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise bad(path, "expected a list of strings", "invalid_type")
        return list(value)

    def schema(self) -> dict[str, Any]:
        return {"type": "array", "items": {"type": "string"}}


RESULT = Shape(
    RESULT_SCHEMA,
    {
        "schema_version": Const(value=RESULT_SCHEMA),
        "ok": Bool(doc="True when the command's exit code is 0."),
        "command": PrivateText(limit=64, doc="The command, e.g. `prepare` or `ext install`."),
        "status": Enum(
            values=("ok", "partial", "error"), doc="partial: a provider or source failed open."
        ),
        "data": Any_(doc="The command's projection; its shape is documented per command."),
        "warnings": _Lines(doc="One line each; the same lines text mode prints on stderr."),
    },
    doc="What a command prints on success (and for verify/status results with a non-zero exit).",
)

ERROR = Shape(
    ERROR_SCHEMA,
    {
        "schema_version": Const(value=ERROR_SCHEMA),
        "ok": Const(value=False),
        "error": Obj(
            shape=Shape(
                "error",
                {
                    "code": Token(doc="A stable code: docs/exit-codes.md lists every one."),
                    "message": PrivateText(
                        limit=2000, doc="One line naming the field or file; never a private value."
                    ),
                    "hint": PrivateText(
                        limit=2000, nullable=True, doc="What to do about it, or null."
                    ),
                    "field": PrivateText(
                        limit=200, optional=True, doc="The flag, key path or argument at fault."
                    ),
                },
            )
        ),
    },
    doc="What a command prints when it refuses or fails (exit 1-5, 130).",
)
