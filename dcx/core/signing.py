"""Ed25519 through ``cryptography`` (SPEC §18): make a key, sign, verify, and the text forms.

The library is imported inside each function, never at module load: only the
commands that sign or verify pay its start-up (about 8 ms, most of it loading
its Rust extension); ``dcx --version``, ``status`` and ``log`` never do
(tests/core/test_signing.py checks it with ``-X importtime``).

Text forms: public keys and signatures travel as unpadded base64url (RFC 4648
§5) of their raw bytes — 43 and 86 characters. A key's id is
``signer-<first 32 hex of blake3("dcx-signer-v0" NUL raw public key)>``: a
fingerprint anyone can recompute from the public key alone, in dcx's own ref
shape (so the public-safety detector's entropy rules already pass it).
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import blake3

SEED_BYTES = 32
PUBLIC_BYTES = 32
SIGNATURE_BYTES = 64
KEY_ID_PREFIX = "signer-"
_KEY_ID_CONTEXT = b"dcx-signer-v0\0"


def encode(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def decode(text: object, size: int) -> bytes | None:
    """The ``size`` raw bytes behind an unpadded base64url text, or None when it is anything else."""
    if not isinstance(text, str) or len(text) != -(-size * 4 // 3):
        return None
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except ValueError:
        return None
    # one encoding per value: the unused low bits of the last character must be zero
    return raw if len(raw) == size and encode(raw) == text else None


def key_id(public: bytes) -> str:
    return KEY_ID_PREFIX + blake3.blake3(_KEY_ID_CONTEXT + public).hexdigest()[:32]


def new_seed() -> bytes:
    """A fresh private key: its 32-byte seed (RFC 8032 §5.1.5)."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    return Ed25519PrivateKey.generate().private_bytes_raw()


def public_of(seed: bytes) -> bytes:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    return Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes_raw()


def sign(seed: bytes, data: bytes) -> str:
    """The signature of ``data``, as text."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    return encode(Ed25519PrivateKey.from_private_bytes(seed).sign(data))


def is_public_key(public: bytes) -> bool:
    """Whether ``public`` is a point the library accepts as an Ed25519 public key."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        Ed25519PublicKey.from_public_bytes(public)
    except ValueError:
        return False
    return True


def verifies(public: bytes, signature: object, data: bytes) -> bool:
    """Whether ``signature`` (text) is the key's signature of ``data``."""
    return verifier(public)(signature, data)


def verifier(public: bytes) -> Callable[[object, bytes], bool]:
    """:func:`verifies` for one key, parsed once: ``check(signature, data)``."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        key: Any = Ed25519PublicKey.from_public_bytes(public)
    except ValueError:
        key = None  # not a point: no signature verifies

    def check(signature: object, data: bytes) -> bool:
        raw = decode(signature, SIGNATURE_BYTES)
        if raw is None or key is None:
            return False
        try:
            key.verify(raw, data)
        except (InvalidSignature, ValueError):
            return False
        return True

    return check
