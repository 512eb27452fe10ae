"""``context_provider_retrieval_v0``: the public receipt of one recall (SPEC §6.2).

It says which provider answered, how, and with what summaries and scores —
never the query, the scope, content or a raw resource ref. Each result names
its resource only by a keyed ``provider-…`` ref (SPEC §3.3), so the same
resource recalled again gets the same ref, and a guessable resource cannot be
confirmed by hashing it. ``rank`` keeps the provider's order (SPEC §3.1: order
that matters is an explicit field; lists are sorted before hashing).

Latency comes from the injected clock (0 under ``DCX_NOW``), so the ref of a
receipt holds no wall-clock noise. The packet is stored by ``prepare`` (bound
to a decision) and embedded, unstored, in ``dcx recall``'s transient packet.
"""

from __future__ import annotations

from dcx.core.fields import (
    Bool,
    Const,
    DecisionId,
    Enum,
    Int,
    Number,
    Obj,
    ReasonCode,
    Records,
    Ref,
    Shape,
    Summary,
    Text,
    Timestamp,
)
from dcx.core.vocab import PROVIDERS
from dcx.packets import declare

COMPLETED = "completed"
UNAVAILABLE = "unavailable"

RESULT = Shape(
    "retrieval_result",
    {
        "rank": Int(lo=1, hi=8, doc="1 = the provider's best candidate."),
        "provider_ref": Ref("provider", doc="Keyed ref of (provider, private resource ref)."),
        "summary": Summary(doc="The provider's public-safe summary of the item."),
        "score": Number(
            nullable=True, doc="Provider-native score; never compared across providers."
        ),
    },
)

TELEMETRY = Shape(
    "retrieval_telemetry",
    {
        "latency_ms": Int(lo=0, doc="From the injected clock: 0 under DCX_NOW."),
        "result_cap_applied": Bool(doc="More candidates passed than the requested limit."),
        "items_dropped": Int(
            lo=0, doc="Backend items the adapter dropped because they could not pass the bounds."
        ),
    },
)

SPEC = declare(
    "retrieval",
    doc="Public receipt of one advisory recall: summaries, scores and keyed refs; never the query, scope or content.",
    fields={
        "decision_id": DecisionId(
            optional=True,
            computed=True,
            doc="The decision it served (absent for a one-off recall).",
        ),
        "ok": Bool(doc="status == completed."),
        "provider": Enum(values=PROVIDERS),
        "namespace": Text(limit=120),
        "status": Enum(values=(COMPLETED, UNAVAILABLE)),
        "reason_code": ReasonCode(nullable=True, doc="Null iff completed."),
        "provider_version": Text(limit=128, nullable=True),
        "query_summary": Summary(
            doc="The caller's public-safe description; the query itself is never recorded."
        ),
        "observed_at": Timestamp(),
        "search_performed": Bool(),
        "read_performed": Bool(),
        "requested_limit": Int(lo=1, hi=8),
        "result_count": Int(lo=0, hi=8),
        "results": Records(shape=RESULT, id_field="provider_ref", max_items=8),
        "telemetry": Obj(shape=TELEMETRY),
        "fail_open": Const(value=True),
        "external_writes_performed": Const(value=False),
        "raw_provider_payload_captured": Const(value=False),
        "raw_content_captured": Const(value=False),
        "credentials_captured": Const(value=False),
    },
)
