"""``decision_evidence_packet_v0``: the deterministic evidence layer (SPEC §8.1).

Changed facts, recalled claims, stale or rejected claims, conflicts, source
revisions and provider health. No recommendation, score or next action.
Accepted recalled claims always retain exact-read and revision evidence.
"""

from __future__ import annotations

from dcx.core.fields import (
    Bool,
    Const,
    Enum,
    ReasonCode,
    Records,
    Ref,
    Shape,
    Summary,
    Timestamp,
    Token,
    Tokens,
)
from dcx.packets import declare

CHANGE = "source-change"
REVISION = "source-revision"

CHANGED_FACT = Shape(
    "changed_fact",
    {
        "fact_id": Token(),
        "summary": Summary(),
        "source_ref": Ref(CHANGE),
        "source_revision": Ref(REVISION),
        "observed_at": Timestamp(),
        "freshness": Enum(values=("current", "stale")),
        "generic": Bool(optional=True),
    },
)
RECALLED_CLAIM = Shape(
    "recalled_claim",
    {
        "claim_id": Token(),
        "summary": Summary(),
        "provider_ref": Ref("provider"),
        "source_ref": Ref(CHANGE),
        "source_revision": Ref(REVISION),
        "observed_at": Timestamp(),
        "exact_read_verified": Const(value=True),
    },
)
STALE_CLAIM = Shape(
    "stale_or_rejected_claim",
    {
        "claim_id": Token(),
        "summary": Summary(),
        "provider_ref": Ref("provider", optional=True),
        "source_ref": Ref(CHANGE, optional=True),
        "source_revision": Ref(REVISION, optional=True),
        "observed_at": Timestamp(),
        "reason_code": ReasonCode(),
    },
)
CONFLICT = Shape(
    "conflict",
    {
        "conflict_id": Token(),
        "summary": Summary(),
        "source_refs": Tokens(min_items=1, max_items=32, item=Ref(CHANGE)),
        "conflict_rule": Token(),
        "status": Enum(values=("open", "resolved")),
    },
)
SOURCE_REVISION = Shape(
    "source_revision",
    {
        "source_ref": Ref(CHANGE),
        "revision": Ref(REVISION),
        "observed_at": Timestamp(),
        "freshness": Enum(values=("current", "stale")),
        "changed": Bool(),
    },
)
PROVIDER_HEALTH = Shape(
    "provider_health",
    {
        "provider": Token(),
        "status": Enum(values=("healthy", "degraded", "unavailable")),
        "reason_code": ReasonCode(optional=True),
        "observed_at": Timestamp(),
        "fail_open": Const(value=True),
    },
)

SPEC = declare(
    "evidence",
    decision_scoped=True,
    doc="What is currently true for a decision, and which recalled claims authority confirmed.",
    fields={
        "observed_at": Timestamp(),
        # SPEC §16 v4: random per prepare, so identical inputs on two hosts make two chains (absent on
        # evidence stored before the rule)
        "chain_nonce": Ref(
            "chain-nonce",
            optional=True,
            doc="A random value of this prepare (public, meaningless): identical inputs on two hosts "
            "make two evidence packets, so each host's proposal, outcome and commit bind its own chain.",
        ),
        "visibility": Const(value="public_safe"),
        "changed_facts": Records(shape=CHANGED_FACT, id_field="fact_id", max_items=10_000),
        "recalled_claims": Records(shape=RECALLED_CLAIM, id_field="claim_id", max_items=256),
        "stale_or_rejected_claims": Records(shape=STALE_CLAIM, id_field="claim_id", max_items=256),
        "conflicts": Records(shape=CONFLICT, id_field="conflict_id", max_items=256),
        "source_revisions": Records(shape=SOURCE_REVISION, id_field="source_ref", max_items=20_000),
        "provider_health": Records(shape=PROVIDER_HEALTH, id_field="provider", max_items=80),
        "provider_fail_open": Const(value=True),
        "recommendation_included": Const(value=False),
        "raw_content_captured": Const(value=False),
        "raw_provider_payload_captured": Const(value=False),
        "credentials_captured": Const(value=False),
    },
)
