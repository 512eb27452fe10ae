"""Signing keys and signer files: who may sign for this goal (SPEC §18).

Each agent has one Ed25519 key per host. Its private half is the 32-byte
seed in ``private/signing/<agent-id>.key`` (0600, never leaves the host); its
public half is a public file, ``signers/<agent-id>/<key-id>.pub``, committed
with the goal so every host and every reviewer can check the agent's
statements. A new key for an agent is a new file in the pull request's diff.

A signer file (``dcx_signer_v0``, the packets' pretty JSON form) names the
goal, the agent, the key id, the algorithm, the public key and when it was
made, and is signed by its own key over the RFC 8785 bytes of everything but
``signature``: only the holder of the private key can say "this key is
agent-x's in goal G", so the file cannot be copied into another agent's
folder or another goal.

A revocation (``dcx_signer_revocation_v0``,
``signers/<agent-id>/<key-id>.revoked``) is signed by the revoked key itself
or by another signer of the goal. ``key_compromise`` withdraws every
statement the key ever signed; any other reason those observed after
``revoked_at`` (older ones stay signed: the key was good then).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

from dcx.core import signing
from dcx.core.canonical import canonical_bytes, pretty_bytes
from dcx.core.clock import parse_ts
from dcx.core.errors import Refused
from dcx.core.fields import Shape
from dcx.core.fsutil import atomic_write, file_lock, is_temp, write_private
from dcx.core.workspace import Workspace
from dcx.packets.signatures import REVOCATION, REVOCATION_SCHEMA, SIGNER, SIGNER_SCHEMA

ALGORITHM = "ed25519"
COMPROMISE = "key_compromise"  # the reason that withdraws every statement of the key


class LocalSigner(NamedTuple):
    """This host's signing key of one agent."""

    agent_id: str
    key_id: str
    seed: bytes

    def sign(self, document: dict[str, Any]) -> str:
        return signing.sign(self.seed, canonical_bytes(document))


class Signer(NamedTuple):
    """A signer file that checked out: the agent's public key, and the file's bytes."""

    agent_id: str
    key_id: str
    public: bytes
    created_at: str
    path: Path
    data: bytes


class Revocation(NamedTuple):
    agent_id: str
    key_id: str
    reason_code: str
    revoked_at: str
    by_agent_id: str
    by_key_id: str
    path: Path
    data: bytes

    def withdraws(self, observed_at: str) -> bool:
        """Whether a statement made at ``observed_at`` with the revoked key no longer counts."""
        if self.reason_code == COMPROMISE:
            return True
        try:
            return parse_ts(observed_at) > parse_ts(self.revoked_at)
        except Exception:  # an unreadable time cannot prove it came before
            return True


def private_path(ws: Workspace, agent_id: str) -> Path:
    return ws.signing / f"{agent_id}.key"


def public_path(ws: Workspace, agent_id: str, key_id: str) -> Path:
    return ws.signers / agent_id / f"{key_id}.pub"


def revocation_path(ws: Workspace, agent_id: str, key_id: str) -> Path:
    return ws.signers / agent_id / f"{key_id}.revoked"


# -- this host's keys -------------------------------------------------------------


def _from_seed(ws: Workspace, agent_id: str, seed: bytes) -> LocalSigner:
    if len(seed) != signing.SEED_BYTES:
        raise Refused(
            f"{ws.rel(private_path(ws, agent_id))} is not a {signing.SEED_BYTES}-byte signing key",
            code="signing_key_invalid",
            hint="move it aside; the next signing command makes a new key (a new signers/ file)",
        )
    return LocalSigner(agent_id, signing.key_id(signing.public_of(seed)), seed)


def local_signer(ws: Workspace, agent_id: str) -> LocalSigner | None:
    """This host's key of ``agent_id``, or None when it has none."""
    try:
        seed = private_path(ws, agent_id).read_bytes()
    except FileNotFoundError:
        return None
    return _from_seed(ws, agent_id, seed)


def signer_document(ws: Workspace, signer: LocalSigner, created_at: str) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "schema_version": SIGNER_SCHEMA,
        "goal_id": ws.goal_id,
        "agent_id": signer.agent_id,
        "key_id": signer.key_id,
        "algorithm": ALGORITHM,
        "public_key": signing.encode(signing.public_of(signer.seed)),
        "created_at": created_at,
    }
    doc["signature"] = signer.sign(doc)
    return doc


def ensure_signer(
    ws: Workspace, agent_id: str, *, now: str, wait: float = 5.0
) -> tuple[LocalSigner, bool]:
    """This host's key of ``agent_id``, made when missing, and whether its public file was written now.

    The public file is written whenever it is missing (a fresh key, or a file a
    checkout lost); one that exists is never rewritten: if it does not match,
    `dcx verify` says so.
    """
    path = private_path(ws, agent_id)
    signer = local_signer(ws, agent_id)
    if signer is None:
        with file_lock(path, wait=wait, display=ws.rel(path)):
            signer = local_signer(ws, agent_id)  # another process may have made it meanwhile
            if signer is None:
                write_private(path, signing.new_seed())
                signer = local_signer(ws, agent_id)
        if signer is None:  # written under the lock just above
            raise Refused(f"{ws.rel(path)} could not be read back", code="readback_failed")
    pub = public_path(ws, signer.agent_id, signer.key_id)
    if pub.exists():
        return signer, False
    atomic_write(pub, pretty_bytes(signer_document(ws, signer, now)), mode=0o644)
    return signer, True


def retire(ws: Workspace, agent_id: str) -> None:
    """Move this host's key of ``agent_id`` aside (``private/signing/retired/``) after its revocation:
    the next signing command makes a new one."""
    signer = local_signer(ws, agent_id)
    if signer is None:
        return
    target = ws.signing / "retired" / f"{agent_id}.{signer.key_id}.key"
    write_private(target, signer.seed)
    private_path(ws, agent_id).unlink()


def local_agents(ws: Workspace) -> dict[str, str]:
    """{key id: agent id} of the keys this host holds."""
    out: dict[str, str] = {}
    if not ws.signing.is_dir():
        return out
    for path in sorted(ws.signing.glob("*.key")):
        try:
            signer = local_signer(ws, path.stem)
        except Refused:
            continue
        if signer is not None:
            out[signer.key_id] = signer.agent_id
    return out


# -- the public tree --------------------------------------------------------------


class Tree(NamedTuple):
    """Every signer file and revocation of ``signers/`` that checks out, and what does not."""

    signers: dict[str, Signer]
    revocations: dict[str, Revocation]
    problems: list[tuple[Path, str, str]]  # (file, code, message)

    def revoked(self, key_id: str) -> Revocation | None:
        return self.revocations.get(key_id)


def _document(data: bytes, shape: Shape) -> dict[str, Any] | str:
    """The parsed document, exactly as its shape and the pretty form have it, or why it is not."""
    from dcx.core.errors import DcxError

    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return "not JSON"
    try:
        checked = shape.check(doc)
    except DcxError as exc:
        return exc.message
    if checked != doc or pretty_bytes(doc) != data:
        return "bytes differ from the canonical pretty form (edited by hand?)"
    return doc


def check_signer(ws: Workspace, path: Path, data: bytes, *, known: bool = False) -> Signer | str:
    """The signer file at ``signers/<agent>/<key-id>.pub``, or why it is not an agent's public key.

    ``known``: these very bytes at this path passed here before (the verified-statements
    cache): the shape is read again, the key and self-signature are not re-verified."""
    doc = _document(data, SIGNER)
    if isinstance(doc, str):
        return doc
    if doc["goal_id"] != ws.goal_id:
        return "belongs to another goal"
    if doc["agent_id"] != path.parent.name or doc["key_id"] != path.stem:
        return "its agent_id and key_id are not its folder and file name"
    public = signing.decode(doc["public_key"], signing.PUBLIC_BYTES)
    if public is None or not (known or signing.is_public_key(public)):
        return "public_key is not an Ed25519 public key"
    if signing.key_id(public) != doc["key_id"]:
        return "key_id is not the fingerprint of its public key"
    body = {k: v for k, v in doc.items() if k != "signature"}
    if not known and not signing.verifies(public, doc["signature"], canonical_bytes(body)):
        return "its self-signature does not verify"
    return Signer(doc["agent_id"], doc["key_id"], public, doc["created_at"], path, data)


def check_revocation(
    ws: Workspace, path: Path, data: bytes, signers: dict[str, Signer], *, known: bool = False
) -> Revocation | str:
    doc = _document(data, REVOCATION)
    if isinstance(doc, str):
        return doc
    if doc["goal_id"] != ws.goal_id:
        return "belongs to another goal"
    if doc["agent_id"] != path.parent.name or doc["key_id"] != path.stem:
        return "its agent_id and key_id are not its folder and file name"
    by = signers.get(doc["revoked_by_key_id"])
    if by is None or by.agent_id != doc["revoked_by_agent_id"]:
        return "signed by a key that is no signer of this goal"
    body = {k: v for k, v in doc.items() if k != "signature"}
    if not known and not signing.verifies(by.public, doc["signature"], canonical_bytes(body)):
        return "its signature does not verify"
    return Revocation(
        doc["agent_id"],
        doc["key_id"],
        doc["reason_code"],
        doc["revoked_at"],
        doc["revoked_by_agent_id"],
        doc["revoked_by_key_id"],
        path,
        data,
    )


def _revoker(data: bytes, signers: dict[str, Signer]) -> bytes:
    """The bytes of the signer file a revocation names as its signer (b"" when none): its cache
    key binds them, so a replaced revoker is checked again."""
    try:
        by = signers.get(json.loads(data).get("revoked_by_key_id"))
    except (ValueError, AttributeError, TypeError):
        return b""
    return by.data if by else b""


def _files(ws: Workspace) -> list[Path]:
    if not ws.signers.is_dir():
        return []
    return sorted(p for p in ws.signers.rglob("*") if not p.is_dir() and not is_temp(p))


def read_tree(ws: Workspace, cache: Any = None) -> Tree:
    """Check every file under ``signers/``: the signer files first, then the revocations they sign.

    ``cache`` (``signatures.Cache``): files whose bytes passed here before are not
    re-verified, and the ones that pass now are remembered."""

    def seen(kind: str, path: Path, data: bytes, extra: bytes = b"") -> str:
        if cache is None:
            return ""
        return cache.key(f"{kind}\0{path.relative_to(ws.signers).as_posix()}".encode(), data, extra)

    problems: list[tuple[Path, str, str]] = []
    found: dict[str, list[Signer]] = {}
    revocations: list[tuple[Path, bytes]] = []
    for path in _files(ws):
        rel = path.relative_to(ws.signers).parts
        if len(rel) != 2 or path.is_symlink() or not path.is_file():
            problems.append(
                (path, "signer_file_unexpected", "not a signers/<agent>/<key>.pub file")
            )
            continue
        try:
            data = path.read_bytes()
        except OSError:
            problems.append((path, "signer_invalid", "unreadable"))
            continue
        if path.suffix == ".revoked":
            revocations.append((path, data))
            continue
        if path.suffix != ".pub":
            problems.append((path, "signer_file_unexpected", "not a .pub or .revoked file"))
            continue
        key = seen("signer", path, data)
        checked = check_signer(ws, path, data, known=bool(key) and cache.passed(key))
        if isinstance(checked, str):
            problems.append((path, "signer_invalid", f"not a public key of this goal: {checked}"))
            continue
        if key:
            cache.add(key)
        found.setdefault(checked.key_id, []).append(checked)
    signers: dict[str, Signer] = {}
    for key, same in found.items():
        if len(same) > 1:  # one key for two agents: neither can be told from the other
            for signer in same:
                problems.append(
                    (signer.path, "signer_key_id_duplicate", f"key {key} is also another agent's")
                )
            continue
        signers[key] = same[0]
    revoked: dict[str, Revocation] = {}
    for path, data in revocations:
        key = seen("revocation", path, data, _revoker(data, signers))
        rev = check_revocation(ws, path, data, signers, known=bool(key) and cache.passed(key))
        if isinstance(rev, str):
            problems.append((path, "bad_revocation", rev))
        else:
            if key:
                cache.add(key)
            revoked[rev.key_id] = rev
    return Tree(signers, revoked, problems)


def revoke(
    ws: Workspace,
    by: LocalSigner,
    target: Signer,
    reason_code: str,
    now: str,
) -> tuple[dict[str, Any], bool]:
    """Write the revocation of ``target`` signed by ``by``; (document, written). One revocation per key."""
    path = revocation_path(ws, target.agent_id, target.key_id)
    if path.exists():
        return json.loads(path.read_bytes()), False
    doc: dict[str, Any] = {
        "schema_version": REVOCATION_SCHEMA,
        "goal_id": ws.goal_id,
        "agent_id": target.agent_id,
        "key_id": target.key_id,
        "reason_code": reason_code,
        "revoked_at": now,
        "revoked_by_agent_id": by.agent_id,
        "revoked_by_key_id": by.key_id,
    }
    doc["signature"] = by.sign(doc)
    atomic_write(path, pretty_bytes(doc), mode=0o644)
    return doc, True
