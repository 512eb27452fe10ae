"""Redaction stubs (``dcx_redacted_v0``): what is left of a packet `dcx redact` removed.

Packets are write-once, so a packet `dcx audit` flags cannot be repaired in
place. ``dcx redact REF --reason CODE`` replaces its file with a stub that
keeps what the chain needs to stay readable — the original ref, its kind,
goal, decision and key id — and the blake3 digest of the removed bytes (never
the bytes), so whoever still holds them can prove which bytes were removed.
Readers treat a stub as "redacted": verify reports it and checks every other
link, show/log/diff/feedback say so, and a commit whose chain needs it is
refused ``chain_redacted``.
"""

from __future__ import annotations

from typing import Any

from dcx.core.errors import Refused
from dcx.core.fields import Const, DecisionId, Int, Pattern, ReasonCode, Shape, Timestamp, Token

SCHEMA = "dcx_redacted_v0"
# The digest in dcx's own ref shape (`blake3-<32 hex>`), which the public-safety
# detector exempts from its entropy rules: 128 bits identify the bytes.
DIGEST_PREFIX = "blake3"

STUB = Shape(
    SCHEMA,
    {
        "schema_version": Const(value=SCHEMA),
        "redacted_ref": Pattern(regex=r"[a-z][a-z-]*-[0-9a-f]{32}", limit=160, what="a packet ref"),
        "kind": Token(),
        "goal_id": Token(),
        "key_id": Token(optional=True),
        "decision_id": DecisionId(optional=True),
        "removed_blake3": Pattern(
            regex=rf"{DIGEST_PREFIX}-[0-9a-f]{{32}}",
            limit=40,
            what="blake3-<32 hex> of the removed bytes",
        ),
        "removed_size": Int(lo=0),
        "reason_code": ReasonCode(),
        "redacted_at": Timestamp(),
    },
    doc="What is left of a packet `dcx redact` removed: its identity and the digest of the removed bytes.",
)


class Redacted(Refused):
    """A packet that was redacted is needed (exit 1)."""

    default_code = "packet_redacted"

    def __init__(
        self, stub: dict[str, Any], *, code: str = "packet_redacted", hint: str | None = None
    ) -> None:
        self.stub = stub
        super().__init__(
            f"{stub['redacted_ref']} was redacted ({stub['reason_code']}, {stub['redacted_at']}): "
            "its content is gone",
            code=code,
            hint=hint
            or "`dcx show` prints what the stub keeps; `dcx verify` checks everything else",
        )


def is_stub(packet: Any) -> bool:
    return isinstance(packet, dict) and packet.get("schema_version") == SCHEMA


def check_stub(packet: dict[str, Any], kind: str, ref: str) -> str | None:
    """Why ``packet`` is not a valid stub for the file ``packets/<kind>/<ref>.json``, or None."""
    from dcx.core.errors import DcxError

    try:
        STUB.check(packet)
    except DcxError as exc:
        return exc.message
    if packet["redacted_ref"] != ref:
        return "redaction stub: redacted_ref does not match the file name"
    if packet["kind"] != kind:
        return f"redaction stub: kind {packet['kind']!r} is not its folder {kind!r}"
    return None


def digest(data: bytes) -> str:
    from dcx.core.canonical import digest_hex

    return f"{DIGEST_PREFIX}-{digest_hex(data)}"
