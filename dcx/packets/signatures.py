"""The signed public files of SPEC §18, declared: statements, signer files, revocations.

Each is checked by its shape and must equal its own check's output (lists
sorted and unique, times normalised): a hand-edited or re-ordered document is
not the one that was signed. Signatures and public keys are unpadded
base64url of their raw bytes (86 and 43 characters); key ids are
``signer-<32 hex>`` (``dcx.core.signing``).
"""

from __future__ import annotations

from dcx.core.fields import Const, Pattern, ReasonCode, Shape, Timestamp, Token, Tokens
from dcx.packets import BY_PREFIX

STATEMENT_SCHEMA = "dcx_statement_v0"
SIGNER_SCHEMA = "dcx_signer_v0"
REVOCATION_SCHEMA = "dcx_signer_revocation_v0"
MAX_REFS = 4096  # refs one statement may name (a prepare writes tens)


def KeyId(**kw: object) -> Pattern:
    return Pattern(
        regex=r"signer-[0-9a-f]{32}",
        limit=39,
        what="a signing key id (signer-<32 hex>)",
        **kw,
    )


def Named(**kw: object) -> Pattern:
    """What a statement may name: a packet ref of a known kind or an event id (``dcx-event-<32
    hex>``, or a LoopX host's 16 hex). A shape with no room for anything else, so the
    public-safety detector has nothing to judge here, as for refs in packets."""
    prefixes = "|".join(sorted([*BY_PREFIX, "dcx-event"]))
    return Pattern(
        regex=f"(?:{prefixes})-[0-9a-f]{{32}}|[0-9a-f]{{16}}",
        limit=160,
        what="a packet ref or an event id",
        **kw,
    )


def Signature(**kw: object) -> Pattern:
    return Pattern(
        regex=r"[A-Za-z0-9_-]{86}",
        limit=86,
        what="an Ed25519 signature (86 characters of unpadded base64url)",
        **kw,
    )


STATEMENT = Shape(
    STATEMENT_SCHEMA,
    {
        "schema_version": Const(value=STATEMENT_SCHEMA),
        "agent_id": Token(doc="The agent whose key signed it."),
        "key_id": KeyId(doc="The signing key: a signer file signers/<agent_id>/<key_id>.pub."),
        "command": Token(doc="The writing command (prepare, propose, …, redact, scan, sources)."),
        "observed_at": Timestamp(doc="When the command stated it (its clock)."),
        "goal_id": Token(),
        "materials": Tokens(
            max_items=MAX_REFS,
            item=Named(),
            doc="Packet refs and event ids the command read.",
        ),
        "products": Tokens(
            min_items=1,
            max_items=MAX_REFS,
            item=Named(),
            doc="Packet refs and event ids the command wrote.",
        ),
        "signature": Signature(
            doc="Ed25519 over the RFC 8785 bytes of the statement without this field."
        ),
    },
    doc="One line of statements.jsonl: what one writing command read and wrote, signed once.",
)

SIGNER = Shape(
    SIGNER_SCHEMA,
    {
        "schema_version": Const(value=SIGNER_SCHEMA),
        "goal_id": Token(),
        "agent_id": Token(doc="The agent: also the file's folder."),
        "key_id": KeyId(doc="The fingerprint of public_key: also the file's name."),
        "algorithm": Const(value="ed25519"),
        "public_key": Pattern(
            regex=r"[A-Za-z0-9_-]{43}",
            limit=43,
            what="an Ed25519 public key (43 characters of unpadded base64url)",
        ),
        "created_at": Timestamp(),
        "signature": Signature(
            doc="The key's own signature of everything else (a self-signature)."
        ),
    },
    doc="signers/<agent-id>/<key-id>.pub: one agent's public signing key on one host.",
)

REVOCATION = Shape(
    REVOCATION_SCHEMA,
    {
        "schema_version": Const(value=REVOCATION_SCHEMA),
        "goal_id": Token(),
        "agent_id": Token(doc="The agent whose key is revoked: also the file's folder."),
        "key_id": KeyId(doc="The revoked key: also the file's name."),
        "reason_code": ReasonCode(
            doc="key_compromise withdraws every statement of the key; any other reason those "
            "observed after revoked_at."
        ),
        "revoked_at": Timestamp(),
        "revoked_by_agent_id": Token(),
        "revoked_by_key_id": KeyId(
            doc="The key that signed it: the revoked key or another signer."
        ),
        "signature": Signature(),
    },
    doc="signers/<agent-id>/<key-id>.revoked: a signed revocation of one signing key.",
)
