"""SPEC §18 computed with the libraries themselves, never with dcx: the oracle of the signature tests.

Canonical bytes are ``rfc8785.dumps``; signatures are made and checked with
``cryptography``'s Ed25519 keys; key ids are blake3 of the SPEC's context and
the raw public key; the text forms are ``base64.urlsafe_b64encode`` without
padding. An attacker's tools are here too: a statement or signer file signed
with any seed, written as dcx would write it.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import blake3
import rfc8785
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

DC = ".decision-context"


def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def public_of(seed: bytes) -> bytes:
    return Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes_raw()


def key_id(public: bytes) -> str:
    """docs/signatures.md: ``signer-`` + the first 32 hex of blake3("dcx-signer-v0" NUL public key)."""
    return "signer-" + blake3.blake3(b"dcx-signer-v0\0" + public).hexdigest()[:32]


def body_bytes(document: dict[str, Any]) -> bytes:
    """RFC 8785 bytes of a signed document without its ``signature``."""
    return rfc8785.dumps({k: v for k, v in document.items() if k != "signature"})


def verifies(public: bytes, document: dict[str, Any]) -> bool:
    try:
        Ed25519PublicKey.from_public_bytes(public).verify(
            unb64(document["signature"]), body_bytes(document)
        )
    except (InvalidSignature, ValueError):
        return False
    return True


def signed(seed: bytes, document: dict[str, Any]) -> dict[str, Any]:
    """``document`` with a ``signature`` made by ``seed`` over its canonical bytes."""
    body = {k: v for k, v in document.items() if k != "signature"}
    sig = Ed25519PrivateKey.from_private_bytes(seed).sign(rfc8785.dumps(body))
    return {**body, "signature": b64(sig)}


def statement(
    seed: bytes,
    *,
    agent_id: str,
    goal_id: str,
    command: str,
    products: list[str],
    materials: list[str] = (),  # type: ignore[assignment]
    observed_at: str = "2026-11-29T18:00:00Z",
    key: str | None = None,
) -> dict[str, Any]:
    return signed(
        seed,
        {
            "schema_version": "dcx_statement_v0",
            "agent_id": agent_id,
            "key_id": key or key_id(public_of(seed)),
            "command": command,
            "observed_at": observed_at,
            "goal_id": goal_id,
            "materials": sorted(set(materials)),
            "products": sorted(set(products)),
        },
    )


def line(document: dict[str, Any]) -> str:
    return json.dumps(document, sort_keys=True, ensure_ascii=False) + "\n"


def pretty(document: dict[str, Any]) -> bytes:
    """The packets' stored form (SPEC §3.1): indent 2, sorted keys, UTF-8, a trailing newline."""
    return (json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def signer_file(
    root: Path,
    seed: bytes,
    *,
    agent_id: str,
    goal_id: str,
    created_at: str = "2026-11-29T18:00:00Z",
) -> Path:
    """Write a self-signed ``signers/<agent>/<key-id>.pub`` for ``seed`` (as an attacker could)."""
    public = public_of(seed)
    doc = signed(
        seed,
        {
            "schema_version": "dcx_signer_v0",
            "goal_id": goal_id,
            "agent_id": agent_id,
            "key_id": key_id(public),
            "algorithm": "ed25519",
            "public_key": b64(public),
            "created_at": created_at,
        },
    )
    path = root / DC / "signers" / agent_id / f"{doc['key_id']}.pub"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pretty(doc))
    return path


def statements(root: Path) -> list[dict[str, Any]]:
    text = (root / DC / "statements.jsonl").read_text()
    return [json.loads(raw) for raw in text.splitlines() if raw.strip()]


def signers(root: Path) -> dict[str, tuple[str, dict[str, Any]]]:
    """key id -> (the agent folder, the signer file's document), for every ``signers/*/*.pub``."""
    out = {}
    for path in sorted((root / DC / "signers").glob("*/*.pub")):
        out[path.stem] = (path.parent.name, json.loads(path.read_text()))
    return out


def append(root: Path, document: dict[str, Any]) -> None:
    with (root / DC / "statements.jsonl").open("a") as handle:
        handle.write(line(document))
