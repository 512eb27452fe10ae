"""The workspace key (SPEC §2, §3.3, §16): 32 random bytes that make opaque refs unguessable.

Created by ``init``, or on first use only while ``packets/`` is empty and no
key is pinned, so the bundled example works from a fresh clone. A workspace
that already has packets but no key must import the key its packets were
minted with.

One key per goal, pinned: ``workspace.toml`` (public, committed) records the
goal's ``key_id``. ``init`` writes it with the key; an older workspace is
pinned by the first command that mints refs with its key (the file is edited with
tomlkit, so comments and layout stay). A host without the pinned key never
mints one: it stops with exit 3 ``key_missing`` and the hint ``dcx key
import`` — a clone taken before any packet existed would otherwise mint its
own key and its refs would stop being comparable with the other hosts'.
"""

from __future__ import annotations

import os
from typing import NamedTuple

import blake3

from dcx.core.errors import InvalidInput, NoWorkspace
from dcx.core.fsutil import atomic_write, file_lock, read_bytes, read_text, tighten, write_private
from dcx.core.notices import note
from dcx.core.workspace import KEY_BYTES, Workspace

__all__ = ["KEY_BYTES", "Key", "load_key", "pin_key", "pinned_key_id", "read_secret"]

KEY_ID_CONTEXT = b"dcx-key-id"


class Key(
    NamedTuple
):  # immutable; a NamedTuple, not a dataclass (no `inspect` import on read paths)
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
    key = Key(secret)
    pin_key(ws, key.key_id)
    return key


_HEX8 = frozenset("0123456789abcdef")


def pinned_key_id(ws: Workspace) -> str | None:
    """The goal's ``key_id`` pinned in ``workspace.toml``, or None (not pinned yet, or unreadable:
    ``Workspace.goal_id`` reports a damaged file)."""
    from dcx.core.errors import DcxError

    try:
        value = ws.settings.get("key_id")
    except (DcxError, OSError):
        return None
    if isinstance(value, str) and len(value) == 8 and set(value) <= _HEX8:
        return value
    return None


def pin_key(ws: Workspace, key_id: str, *, replace: bool = False) -> bool:
    """Record ``key_id`` in ``workspace.toml`` unless a key is pinned already (``replace``: ``key import
    --force``, which replaces the goal's key); True if written."""
    import tomlkit

    current = pinned_key_id(ws)
    if (
        not ws.workspace_toml.is_file()
        or current == key_id
        or (current is not None and not replace)
    ):
        return False
    lock = ws.private / "workspace.toml"  # the lock file stays private (never a stray public file)
    with file_lock(lock, display=ws.rel(lock)):
        try:
            before = read_text(ws.workspace_toml)
            doc = tomlkit.parse(before)
        except (OSError, ValueError, UnicodeDecodeError):
            return False  # a damaged workspace.toml is Workspace.goal_id's to report
        if doc.get("key_id") is not None and not replace:
            return False
        if doc.get("key_id") == key_id:
            return False
        doc["key_id"] = key_id
        doc["key_id"].comment("the goal's key: every host imports it (dcx key import FILE)")
        atomic_write(ws.workspace_toml, tomlkit.dumps(doc).encode("utf-8"), mode=0o644)
    return True


def _missing(ws: Workspace, why: str) -> NoWorkspace:
    return NoWorkspace(
        f"{ws.rel(ws.key_path)} is missing but {why}",
        code="key_missing",
        hint="import this goal's key with `dcx key import FILE` (never a new one: refs would not compare)",
    )


def mint_refused(ws: Workspace) -> NoWorkspace | None:
    """Why this host may not mint a key (the goal pins one, or packets exist), or None (SPEC §2, §16)."""
    pinned = pinned_key_id(ws)
    if pinned is not None:
        return _missing(ws, f"this goal's key {pinned} is pinned in workspace.toml")
    if _has_packets(ws):
        return _missing(ws, "packets exist")
    return None


def read_secret(ws: Workspace) -> bytes:
    """``private/key``'s bytes — every reader of the key comes here. A mode looser than 0600 is
    narrowed to 0600 and said (SPEC §3.5 v4)."""
    secret = read_bytes(ws.key_path)
    old = tighten(ws.key_path, 0o600)
    if old is not None:
        note(
            f"{ws.rel(ws.key_path)} was mode {old:04o}; set to 0600 (only its owner may read a key)"
        )
    return secret


def load_key(ws: Workspace, *, create: bool = True) -> Key:
    """The workspace key; minted on first use only while no packet exists and no key is pinned.

    A key whose id is not the goal's pinned ``key_id`` never mints a ref, even when it is the
    only key on this host: exit 3 ``key_mismatch`` (SPEC §3.5 v4, §16)."""
    try:
        secret = read_secret(ws)
    except FileNotFoundError:
        refused = mint_refused(ws)
        if create and refused is None:
            return create_key(ws)
        raise (refused or _missing(ws, "packets exist")) from None
    if len(secret) != KEY_BYTES:
        raise NoWorkspace(
            f"{ws.rel(ws.key_path)} is not a {KEY_BYTES}-byte key",
            code="key_invalid",
            hint="restore it with `dcx key import FILE`",
        )
    key = Key(secret)
    pinned = pinned_key_id(ws)
    if pinned is not None and pinned != key.key_id:
        raise NoWorkspace(
            f"{ws.rel(ws.key_path)} holds key {key.key_id}, not this goal's key {pinned} "
            "(pinned in workspace.toml)",
            code="key_mismatch",
            hint="import the goal's key with `dcx key import FILE` (`dcx key export` on another "
            "host prints it); refs minted with another key would never compare",
        )
    if create and pinned is None:
        pin_key(
            ws, key.key_id
        )  # an older workspace: pinned by the first command that mints with its key
    return key


def export_hex(key: Key) -> str:
    return key.secret.hex()


def _secret_from(data: bytes | str) -> bytes:
    """The key's bytes from what `dcx key export` prints (64 hex digits), or a copy of `private/key` itself."""
    raw = data.encode() if isinstance(data, str) else data
    if len(raw) == KEY_BYTES and not all(chr(b) in "0123456789abcdefABCDEF" for b in raw):
        return raw  # the 32 raw bytes of another host's private/key
    try:
        secret = bytes.fromhex(raw.decode("ascii").strip())
    except (UnicodeDecodeError, ValueError):
        raise InvalidInput(
            "key: expected 64 hex digits (dcx key export) or a copy of private/key", field="key"
        ) from None
    if len(secret) != KEY_BYTES:
        raise InvalidInput(
            "key: expected 64 hex digits (dcx key export) or a copy of private/key", field="key"
        )
    return secret


def import_hex(ws: Workspace, data: bytes | str, *, force: bool = False) -> Key:
    secret = _secret_from(data)
    key = Key(secret)
    pinned = pinned_key_id(ws)
    if pinned is not None and pinned != key.key_id and not force:
        raise InvalidInput(
            f"key: its id {key.key_id} is not this goal's key {pinned} (pinned in workspace.toml)",
            code="key_mismatch",
            hint="import the key the goal's other hosts export (`dcx key export`), or pass --force",
        )
    if ws.key_path.exists() and read_bytes(ws.key_path) != secret and not force:
        raise InvalidInput(
            f"{ws.rel(ws.key_path)} already holds a different key",
            code="key_exists",
            hint="pass --force to replace it (refs minted with the old key stop resolving)",
        )
    write_private(ws.key_path, secret)
    os.chmod(ws.key_path, 0o600)
    if pinned != key.key_id:
        pin_key(ws, key.key_id, replace=force)  # --force replaces the goal's key, and so its pin
    return key
