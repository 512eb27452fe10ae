"""The workspace key (SPEC §2, §3.3): 32 random bytes that make opaque refs unguessable.

Created by ``init``, or on first use only while ``packets/`` is empty, so the
bundled example works from a fresh clone. A workspace that already has
packets but no key must import the key its packets were minted with.
"""

from __future__ import annotations

import os
from typing import NamedTuple

import blake3

from dcx.errors import InvalidInput, NoWorkspace
from dcx.fsutil import write_private
from dcx.workspace import KEY_BYTES, Workspace

KEY_ID_CONTEXT = b"dcx-key-id"


class Key(NamedTuple):  # immutable; a NamedTuple, not a dataclass (no `inspect` import on read paths)
    secret: bytes

    @property
    def key_id(self) -> str:
        return blake3.blake3(KEY_ID_CONTEXT, key=self.secret).hexdigest()[:8]


def _has_packets(ws: Workspace) -> bool:
    if not ws.packets.is_dir():
        return False
    return any(ws.packets.rglob("*.json"))


def create_key(ws: Workspace) -> Key:
    import secrets  # only where a key is made: keeps it off the read paths

    secret = secrets.token_bytes(KEY_BYTES)
    write_private(ws.key_path, secret)
    return Key(secret)


def load_key(ws: Workspace, *, create: bool = True) -> Key:
    """The workspace key; minted on first use only while no packet exists."""
    try:
        secret = ws.key_path.read_bytes()
    except FileNotFoundError:
        if create and not _has_packets(ws):
            return create_key(ws)
        raise NoWorkspace(
            f"{ws.rel(ws.key_path)} is missing but packets exist",
            code="key_missing",
            hint="import this goal's key with `dcx key import FILE`",
        ) from None
    if len(secret) != KEY_BYTES:
        raise NoWorkspace(
            f"{ws.rel(ws.key_path)} is not a {KEY_BYTES}-byte key",
            code="key_invalid",
            hint="restore it with `dcx key import FILE`",
        )
    return Key(secret)


def export_hex(key: Key) -> str:
    return key.secret.hex()


def import_hex(ws: Workspace, text: str, *, force: bool = False) -> Key:
    value = text.strip()
    try:
        secret = bytes.fromhex(value)
    except ValueError:
        raise InvalidInput("key: expected 64 hex digits", field="key") from None
    if len(secret) != KEY_BYTES:
        raise InvalidInput("key: expected 64 hex digits", field="key")
    if ws.key_path.exists() and ws.key_path.read_bytes() != secret and not force:
        raise InvalidInput(
            f"{ws.rel(ws.key_path)} already holds a different key",
            code="key_exists",
            hint="pass --force to replace it (refs minted with the old key stop resolving)",
        )
    write_private(ws.key_path, secret)
    os.chmod(ws.key_path, 0o600)
    return Key(secret)
