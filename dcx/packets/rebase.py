"""``decision_semantic_rebase_receipt_v0`` and the agent's ``decision_rebase_input_v0`` (SPEC §8.2).

The rebase says how the changed items of this run were accounted for: by the
agent (``agent``), by dcx's generic auto-rebase (``auto``), by a baseline
adoption (``baseline``), or not at all (``none``: a read-only preview).
"""

from __future__ import annotations

from dcx.core.fields import (
    Any_,
    Bool,
    Enum,
    Int,
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

MODES = ("agent", "auto", "baseline", "none")
STATUSES = ("material_change", "no_material_change", "incomplete")


class Citation(Any_):
    """A ref, or ``{source_id, path}`` that dcx turns into the ref (never copies)."""

    ref_prefix = "source-change"

    def check(self, value, path):
        from dcx.core.fields import bad

        if isinstance(value, str):
            return Ref(self.ref_prefix).check(value, path)
        if isinstance(value, dict) and set(value) == {"source_id", "path"}:
            Token().check(value["source_id"], f"{path}.source_id")
            if not isinstance(value["path"], str) or not value["path"] or len(value["path"]) > 4096:
                raise bad(f"{path}.path", "expected a relative path")
            return {"source_id": value["source_id"], "path": value["path"]}
        raise bad(path, f"expected a {self.ref_prefix} ref or {{source_id, path}}")

    def schema(self):
        return {
            "anyOf": [
                Ref(self.ref_prefix).schema(),
                {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["source_id", "path"],
                    "properties": {"source_id": Token().schema(), "path": {"type": "string"}},
                },
            ]
        }


class RevisionCitation(Citation):
    ref_prefix = "source-revision"


class CitationList(Any_):
    def check(self, value, path):
        from dcx.core.fields import bad

        if not isinstance(value, list) or not value or len(value) > 32:
            raise bad(path, "expected 1 to 32 citations")
        return [Citation().check(v, f"{path}[{i}]") for i, v in enumerate(value)]

    def schema(self):
        return {"type": "array", "minItems": 1, "maxItems": 32, "items": Citation().schema()}


INPUT = Shape(
    "decision_rebase_input_v0",
    {
        "schema_version": Token(optional=True),
        "semantic_no_change": Bool(optional=True),
        "changed_facts": Records(
            shape=Shape(
                "rebase_fact",
                {
                    "fact_id": Token(),
                    "summary": Summary(),
                    "change_ref": Citation(),
                    "revision_ref": RevisionCitation(optional=True),
                },
            ),
            id_field="fact_id",
            max_items=10_000,
            optional=True,
            ordered=True,
        ),
        "recalled_claims": Records(
            shape=Shape(
                "rebase_claim",
                {
                    "claim_id": Token(),
                    "summary": Summary(),
                    "provider_ref": Ref("provider"),
                    "change_ref": Citation(optional=True),
                    "revision_ref": RevisionCitation(optional=True),
                },
            ),
            id_field="claim_id",
            max_items=256,
            optional=True,
            ordered=True,
        ),
        "stale_or_rejected_claims": Records(
            shape=Shape(
                "rebase_stale_claim",
                {
                    "claim_id": Token(),
                    "summary": Summary(),
                    "provider_ref": Ref("provider", optional=True),
                    "change_ref": Citation(optional=True),
                    "revision_ref": RevisionCitation(optional=True),
                    "reason_code": ReasonCode(),
                },
            ),
            id_field="claim_id",
            max_items=256,
            optional=True,
            ordered=True,
        ),
        "conflicts": Records(
            shape=Shape(
                "rebase_conflict",
                {
                    "conflict_id": Token(),
                    "summary": Summary(),
                    "change_refs": CitationList(),
                    "conflict_rule": Token(),
                    "status": Enum(values=("open", "resolved")),
                },
            ),
            id_field="conflict_id",
            max_items=256,
            optional=True,
            ordered=True,
        ),
    },
    doc="The agent's account of what changed (`dcx prepare --rebase FILE`).",
)

SPEC = declare(
    "rebase",
    decision_scoped=True,
    doc="How the changed items of one prepare run were accounted for.",
    fields={
        "observed_at": Timestamp(),
        "mode": Enum(values=MODES),
        "status": Enum(values=STATUSES),
        "semantic_no_change": Bool(),
        "changed_item_count": Int(lo=0),
        "cited_change_refs": Tokens(max_items=20_000, item=Ref("source-change")),
        "uncited_change_count": Int(lo=0),
        "changed_fact_count": Int(lo=0),
        "recalled_claim_count": Int(lo=0),
        "stale_or_rejected_claim_count": Int(lo=0),
        "conflict_count": Int(lo=0),
        "demoted_claim_count": Int(lo=0),
        "input_digest": Token(optional=True),
    },
)
