"""``decision_source_manifest_v0``: the public projection of the source registry.

Policy fields only — never locators, provider config or cursors. It carries no
time, so an unchanged registry always yields the same manifest ref.
"""

from __future__ import annotations

from dcx.core.fields import Bool, Enum, Int, Records, Shape, Token, Tokens
from dcx.core.vocab import EVIDENCE_LEVELS, PRIORITIES, READ_POLICIES, SCAN_MODES, SOURCE_KINDS
from dcx.packets import declare

SOURCE_ROW = Shape(
    "manifest_source",
    {
        "source_id": Token(),
        "provider_id": Token(),
        "source_kind": Enum(values=SOURCE_KINDS),
        "priority": Enum(values=PRIORITIES),
        "evidence_level": Enum(values=EVIDENCE_LEVELS),
        "objectives": Tokens(min_items=1),
        "scan_mode": Enum(values=SCAN_MODES),
        "exact_read_policy": Enum(values=READ_POLICIES),
        "freshness_seconds": Int(lo=1, hi=31_536_000),
        "max_changes": Int(lo=1, hi=10_000),
        "conflict_rule": Token(optional=True),
        "enabled": Bool(),
    },
)

SPEC = declare(
    "manifest",
    doc="Public projection of the private source registry: which sources exist and their policy.",
    fields={
        "source_count": Int(lo=0, hi=64),
        "enabled_source_count": Int(lo=0, hi=64),
        "sources": Records(shape=SOURCE_ROW, id_field="source_id", max_items=64),
    },
)
