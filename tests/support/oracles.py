"""Values SPEC defines, computed here from the SPEC text with other libraries, never with dcx.

A test that needs an expected id or digest takes it from here, so it does not check dcx
against dcx.
"""

from __future__ import annotations

from typing import Any

import blake3
import rfc8785


def event_id(event: dict[str, Any]) -> str:
    """SPEC §8.5: ``dcx-event-<32 hex blake3 of JCS minus event_id>``."""
    body = {k: v for k, v in event.items() if k != "event_id"}
    return "dcx-event-" + blake3.blake3(rfc8785.dumps(body)).hexdigest()[:32]


def key_id(secret: bytes) -> str:
    """SPEC §3.1: a packet's ``key_id`` is the first 8 hex of blake3(key, "dcx-key-id") (keyed)."""
    return blake3.blake3(b"dcx-key-id", key=secret).hexdigest()[:8]


def packet_ref(prefix: str, packet: dict[str, Any], ref_field: str) -> str:
    """SPEC §3.1: ``<prefix>-<first 32 hex of blake3(JCS of the packet without its ref field)>``."""
    body = {k: v for k, v in packet.items() if k != ref_field}
    return f"{prefix}-" + blake3.blake3(rfc8785.dumps(body)).hexdigest()[:32]
