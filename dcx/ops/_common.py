"""Small helpers shared by use cases."""

from __future__ import annotations

from dcx.errors import InvalidInput
from dcx.keys import load_key
from dcx.packets.spec import DECISION_ID_RE, PacketContext
from dcx.workspace import Workspace


def packet_context(ws: Workspace, decision_id: str | None = None) -> PacketContext:
    key = load_key(ws)
    return PacketContext(goal_id=ws.goal_id, key_id=key.key_id, decision_id=decision_id)


def check_decision_id(value: str) -> str:
    if not DECISION_ID_RE.match(value or ""):
        raise InvalidInput(
            "--decision-id: expected [a-z0-9][a-z0-9._-]{0,127} (lower case, safe as a file name)",
            field="--decision-id",
        )
    return value
