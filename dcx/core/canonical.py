"""The one canonical encoder (RFC 8785 / JCS) and the ref functions (SPEC §3.1, §3.3).

A packet's ref is ``<prefix>-<first 32 hex of blake3(JCS(packet minus its ref field))>``.
A private value's opaque ref is the same shape but keyed with the workspace key,
so a guessable path cannot be confirmed by hashing it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

import blake3

REF_HEX = 32
REF_RE = re.compile(r"^(?P<prefix>[a-z][a-z0-9-]*[a-z0-9])-(?P<hex>[0-9a-f]{32})$")


def canonical_bytes(value: Any) -> bytes:
    """RFC 8785 bytes of ``value`` (sorted keys, minimal numbers, UTF-8)."""
    import rfc8785  # small, but only needed on paths that hash

    try:
        return rfc8785.dumps(value)
    except rfc8785.CanonicalizationError:
        from dcx.core.errors import InvalidInput

        raise InvalidInput(
            "value is not representable in canonical JSON (non-finite number or integer beyond 2^53)",
            code="not_canonical",
        ) from None


def pretty_bytes(value: Any) -> bytes:
    """How packets are stored: indent 2, sorted keys, UTF-8, trailing newline.

    One field per line, so a one-field change is a one-line diff.
    """
    return (json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def digest_hex(data: bytes, *, key: bytes | None = None, length: int = REF_HEX) -> str:
    hasher = blake3.blake3(data, key=key) if key is not None else blake3.blake3(data)
    return hasher.hexdigest()[:length]


def packet_ref(prefix: str, packet: Mapping[str, Any], ref_field: str) -> str:
    body = {k: v for k, v in packet.items() if k != ref_field}
    return f"{prefix}-{digest_hex(canonical_bytes(body))}"


def keyed_ref(key: bytes, prefix: str, fields: Iterable[Any]) -> str:
    """Opaque ref of a private value: blake3 keyed with the workspace key over JCS(fields)."""
    return f"{prefix}-{digest_hex(canonical_bytes(list(fields)), key=key)}"


def content_digest(value: Any) -> str:
    """Full blake3 hex of a value's canonical bytes (profile and registry digests)."""
    return blake3.blake3(canonical_bytes(value)).hexdigest()
