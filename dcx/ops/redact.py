"""``dcx redact REF --reason CODE``: replace a stored packet by a ``dcx_redacted_v0`` stub.

The one sanctioned rewrite of a packet file, for what `dcx audit` flags. The
stub keeps the original ref, kind, goal, decision and key id, and the blake3
digest and size of the removed bytes — never the bytes. Works on a packet
that no longer verifies too (a hostile merge), keeping only the identity
fields that are still well-formed. Redacting a stub again is a no-op.
Git history still holds the old bytes: docs/redaction.md says how to rewrite
it and when to rotate a leaked credential.
"""

from __future__ import annotations

import json
from typing import Any

from dcx.core.clock import Clock
from dcx.core.errors import Refused
from dcx.core.fields import DECISION_ID_RE
from dcx.core.fsutil import atomic_write, file_lock, read_bytes
from dcx.core.public import TOKEN_RE, check_token
from dcx.core.result import Result
from dcx.core.workspace import Workspace
from dcx.packets import KINDS
from dcx.state.redaction import SCHEMA, STUB, check_stub, digest, is_stub
from dcx.state.store import PACKET_MODE, Store


def _kept(packet: Any, ws: Workspace) -> dict[str, Any]:
    """The identity fields of the original that are still well-formed."""
    kept: dict[str, Any] = {"goal_id": ws.goal_id}
    if not isinstance(packet, dict):
        return kept
    goal, key, decision = packet.get("goal_id"), packet.get("key_id"), packet.get("decision_id")
    if isinstance(goal, str) and len(goal) <= 128 and TOKEN_RE.fullmatch(goal):
        kept["goal_id"] = goal
    if isinstance(key, str) and len(key) <= 128 and TOKEN_RE.fullmatch(key):
        kept["key_id"] = key
    if isinstance(decision, str) and DECISION_ID_RE.fullmatch(decision):
        kept["decision_id"] = decision
    return kept


def redact(*, ws: Workspace, ref: str, reason_code: str, clock: Clock, wait: float) -> Result:
    check_token(reason_code, field="--reason", limit=120)
    store = Store(ws)
    full = store.resolve(ref)
    kind = store.kind_of(full)
    path = store.path_for(kind, full)
    if not path.exists():
        raise Refused(
            f"packet {full} is missing from packets/{kind}/",
            code="packet_missing",
            hint="run `dcx verify` to list missing and corrupt packets",
        )
    with file_lock(path, wait=wait, display=ws.rel(path)):
        data = read_bytes(path)
        try:
            packet = json.loads(data)
        except (ValueError, UnicodeDecodeError):
            packet = None
        if is_stub(packet) and check_stub(packet, kind, full) is None:
            return Result("redact", {"stub": packet, "file": ws.rel(path), "redacted": False})
        stub = STUB.check(
            {
                "schema_version": SCHEMA,
                "redacted_ref": full,
                "kind": kind,
                **_kept(packet, ws),
                "removed_blake3": digest(data),
                "removed_size": len(data),
                "reason_code": reason_code,
                "redacted_at": clock.now(),
            }
        )
        from dcx.core.canonical import pretty_bytes

        atomic_write(path, pretty_bytes(stub), mode=PACKET_MODE)
    return Result(
        "redact",
        {
            "stub": stub,
            "file": ws.rel(path),
            "redacted": True,
            "schema_version_removed": KINDS[kind].schema_version,
        },
    )
