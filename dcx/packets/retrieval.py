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

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from dcx.core.envelope import PacketContext, PacketSpec
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

if TYPE_CHECKING:  # the packet module stays importable without the provider layer
    from dcx.providers.base import Retrieval

COMPLETED = "completed"
UNAVAILABLE = "unavailable"

RESULT = Shape(
    "retrieval_result",
    {
        "rank": Int(lo=1, hi=8, doc="1 = the provider's best candidate."),
        "provider_ref": Ref("provider", doc="Keyed ref of (provider, private resource ref)."),
        "summary": Summary(doc="The provider's public-safe summary of the item."),
        "score": Number(nullable=True, doc="Provider-native score; never compared across providers."),
    },
)

TELEMETRY = Shape(
    "retrieval_telemetry",
    {
        "latency_ms": Int(lo=0, doc="From the injected clock: 0 under DCX_NOW."),
        "result_cap_applied": Bool(doc="More candidates passed than the requested limit."),
        "items_dropped": Int(lo=0, doc="Backend items the adapter dropped because they could not pass the bounds."),
    },
)

SPEC = PacketSpec(
    kind="retrieval",
    schema_version="context_provider_retrieval_v0",
    prefix="context-retrieval",
    ref_field="retrieval_ref",
    doc="Public receipt of one advisory recall: summaries, scores and keyed refs; never the query, scope or content.",
    fields={
        "decision_id": DecisionId(optional=True, computed=True, doc="The decision it served (absent for a one-off recall)."),
        "ok": Bool(doc="status == completed."),
        "provider": Enum(values=PROVIDERS),
        "namespace": Text(limit=120),
        "status": Enum(values=(COMPLETED, UNAVAILABLE)),
        "reason_code": ReasonCode(nullable=True, doc="Null iff completed."),
        "provider_version": Text(limit=128, nullable=True),
        "query_summary": Summary(doc="The caller's public-safe description; the query itself is never recorded."),
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


def receipt_values(retrieval: Retrieval, provider_refs: Sequence[str], decision_id: str | None = None) -> dict[str, Any]:
    """The receipt's values (no envelope) for ``SPEC.build``.

    ``provider_refs[i]`` is the keyed ref of ``retrieval.items[i]`` (see
    ``RefMinter.provider_ref``); nothing else about an item but its summary and
    score is projected.
    """
    if len(provider_refs) != len(retrieval.items):
        raise ValueError("one provider ref per item")
    values: dict[str, Any] = {
        "ok": retrieval.status == COMPLETED,
        "provider": retrieval.provider,
        "namespace": retrieval.namespace,
        "status": retrieval.status,
        "reason_code": retrieval.reason_code,
        "provider_version": retrieval.provider_version,
        "query_summary": retrieval.query_summary,
        "observed_at": retrieval.observed_at,
        "search_performed": retrieval.search_performed,
        "read_performed": retrieval.read_performed,
        "requested_limit": retrieval.requested_limit,
        "result_count": len(retrieval.items),
        "results": [
            {"rank": rank, "provider_ref": ref, "summary": item.summary, "score": item.score}
            for rank, (ref, item) in enumerate(zip(provider_refs, retrieval.items, strict=True), start=1)
        ],
        "telemetry": {
            "latency_ms": retrieval.latency_ms,
            "result_cap_applied": retrieval.result_cap_applied,
            "items_dropped": retrieval.items_dropped,
        },
        "fail_open": True,
        "external_writes_performed": False,
        "raw_provider_payload_captured": False,
        "raw_content_captured": False,
        "credentials_captured": False,
    }
    if decision_id is not None:
        values["decision_id"] = decision_id
    return values


def build_receipt(ctx: PacketContext, retrieval: Retrieval, provider_refs: Sequence[str]) -> dict[str, Any]:
    """The validated receipt with its ref (bound to ``ctx.decision_id`` when there is one)."""
    return SPEC.build(ctx, receipt_values(retrieval, provider_refs, ctx.decision_id))
