"""The advisory provider protocol objects (SPEC §6.5): not stored, still typed.

- ``REQUEST``  — ``decision_context_advisory_retrieve_request_v0``, what dcx
  writes on an extension's stdin;
- ``RESPONSE`` — ``decision_context_advisory_retrieve_response_v0``, the one
  object an extension may print on stdout; checked exactly (unknown and
  missing fields listed, bounds rejected, never truncated);
- ``READINESS`` — ``dcx_extension_provider_readiness_v0``, why an extension
  provider is (not) usable and what to do next. It is public-safe: tokens and
  booleans only, the extension id at most.

``check_response`` adds the cross-field rules a ``Shape`` cannot express:
``reason_code`` is null iff ``completed``; items only when ``completed``; no
more items than were asked for.
"""

from __future__ import annotations

from typing import Any

from dcx.core.fields import (
    Bool,
    Const,
    Enum,
    Int,
    Number,
    Pattern,
    PrivateText,
    ReasonCode,
    Records,
    Shape,
    Summary,
    Text,
    Timestamp,
    bad,
    shown_key,
)

PROTOCOL = "decision_context_advisory_provider_v0"
CAPABILITY = "decision-context"
PERMISSION = "decision_context.read"
REQUEST_SCHEMA = "decision_context_advisory_retrieve_request_v0"
RESPONSE_SCHEMA = "decision_context_advisory_retrieve_response_v0"
READINESS_SCHEMA = "dcx_extension_provider_readiness_v0"

EXTENSION_ID_PATTERN = r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*"
EXTENSION_ID_MAX = 48

MAX_RESULTS = 8
RESOURCE_REF_MAX = 512
CONTENT_MAX = 16_000

# status -> next_action, exactly SPEC §6.5. ``ready`` needs nothing.
NEXT_ACTIONS: dict[str, str | None] = {
    "ready": None,
    "extension_not_installed": "install_extension",
    "extension_disabled": "enable_extension",
    "extension_doctor_not_ready": "run_extension_doctor",
    "extension_incompatible": "install_compatible_extension",
    "extension_provider_ambiguous": "select_extension_id",
    "extension_provider_not_installed": "install_or_select_extension",
    "extension_provider_not_ready": "select_or_repair_extension",
    "extension_state_unavailable": "repair_extension_state",
}


def ExtensionId(**kw: Any) -> Pattern:
    return Pattern(
        regex=EXTENSION_ID_PATTERN,
        limit=EXTENSION_ID_MAX,
        what=f"a lower-kebab extension id (a-z, 0-9 and single hyphens, at most {EXTENSION_ID_MAX} characters)",
        **kw,
    )


REQUEST = Shape(
    REQUEST_SCHEMA,
    {
        "schema_version": Const(value=REQUEST_SCHEMA),
        "operation": Const(value="retrieve"),
        "namespace": Text(limit=120, doc="Caller namespace, public-safe."),
        "scope_ref": PrivateText(
            limit=2048,
            allow_empty=True,
            doc="Provider-neutral scope, already normalised by dcx (e.g. host-session:codex:<id>).",
        ),
        "query": PrivateText(limit=1000, doc="The private retrieval query."),
        "query_summary": Summary(doc="Public-safe description of the query."),
        "max_results": Int(lo=1, hi=MAX_RESULTS),
        "timeout_seconds": Number(
            lo=1,
            hi=120,
            doc="The effective execution budget: min of request, profile and manifest.",
        ),
        "observed_at": Timestamp(),
    },
    doc="What dcx writes on an advisory provider's stdin (one object).",
)

ITEM = Shape(
    "advisory_item",
    {
        "resource_ref": PrivateText(
            limit=RESOURCE_REF_MAX, doc="Provider-private reference; keyed before any public use."
        ),
        "summary": Summary(doc="Public-safe, generic summary."),
        "content": PrivateText(
            limit=CONTENT_MAX,
            allow_empty=True,
            doc="Transient exact content: untrusted advisory input.",
        ),
        "score": Number(
            nullable=True,
            doc="Provider-native score (higher is better); never compared across providers.",
        ),
    },
)

RESPONSE = Shape(
    RESPONSE_SCHEMA,
    {
        "schema_version": Const(value=RESPONSE_SCHEMA),
        "ok": Const(value=True),
        "status": Enum(values=("completed", "unavailable")),
        "reason_code": ReasonCode(nullable=True, doc="null iff status is completed."),
        "items": Records(
            shape=ITEM,
            id_field="resource_ref",
            max_items=MAX_RESULTS,
            ordered=True,
            doc="Only when completed; at most the request's max_results.",
        ),
    },
    doc="The one object an advisory provider prints on stdout.",
)

READINESS = Shape(
    READINESS_SCHEMA,
    {
        "schema_version": Const(value=READINESS_SCHEMA),
        "status": Enum(values=tuple(NEXT_ACTIONS)),
        "extension_id": ExtensionId(nullable=True),
        "installed": Bool(),
        "enabled": Bool(),
        "doctor_verified": Bool(),
        "next_action": Enum(values=tuple(a for a in NEXT_ACTIONS.values() if a), nullable=True),
    },
    doc="Why the extension provider is or is not usable, and the one next step.",
)


def readiness(
    status: str,
    extension_id: str | None = None,
    *,
    installed: bool = False,
    enabled: bool = False,
    doctor_verified: bool = False,
) -> dict[str, Any]:
    """A validated readiness packet; ``next_action`` follows from ``status``."""
    return READINESS.check(
        {
            "schema_version": READINESS_SCHEMA,
            "status": status,
            "extension_id": extension_id,
            "installed": installed,
            "enabled": enabled,
            "doctor_verified": doctor_verified,
            "next_action": NEXT_ACTIONS[status],
        }
    )


def field_lists(value: Any) -> tuple[list[str], list[str]]:
    """(missing, unknown) top-level fields of a response, for diagnostics."""
    if not isinstance(value, dict):
        return [], []
    missing = [n for n in RESPONSE.fields if n not in value]
    unknown = sorted(
        shown_key(k) for k in value if k not in RESPONSE.fields
    )  # untrusted names: one line
    return missing, unknown


def check_response(value: Any, *, max_results: int) -> dict[str, Any]:
    """Validate a response exactly; raise ``InvalidInput`` naming the first problem."""
    missing, unknown = field_lists(value)
    if isinstance(value, dict) and (missing or unknown):
        parts = []
        if missing:
            parts.append(f"missing field(s): {', '.join(missing)}")
        if unknown:
            parts.append(f"unknown field(s): {', '.join(unknown)}")
        raise bad("response", "; ".join(parts), "unknown_field" if unknown else "missing_field")
    clean = RESPONSE.check(value, "response")
    completed = clean["status"] == "completed"
    if completed and clean["reason_code"] is not None:
        raise bad(
            "response.reason_code",
            "must be null when status is completed",
            "status_reason_mismatch",
        )
    if not completed and clean["reason_code"] is None:
        raise bad(
            "response.reason_code",
            "is required when status is unavailable",
            "status_reason_mismatch",
        )
    if not completed and clean["items"]:
        raise bad(
            "response.items", "must be empty when status is unavailable", "items_on_unavailable"
        )
    if len(clean["items"]) > max_results:
        raise bad(
            "response.items",
            f"holds {len(clean['items'])} items, more than the {max_results} asked for",
            "too_many_items",
        )
    return clean
