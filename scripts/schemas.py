"""JSON Schemas (draft 2020-12) of every public packet and protocol object,
generated from the typed specs — never written by hand.

    python scripts/schemas.py            # write docs/schemas/*.schema.json
    python scripts/schemas.py --check    # exit 1 if the checked-in files differ

A test runs the check and validates every snapshot against its schema. A dev
tool, not part of the installed package: it writes into this repository's docs/.
"""

from __future__ import annotations

import json
import sys
from importlib import import_module
from pathlib import Path
from typing import Any

from dcx.core.fields import Shape
from dcx.packets import all_specs

SCHEMA_DIR = Path(__file__).resolve().parents[1] / "docs" / "schemas"  # this checkout's docs/
DIALECT = "https://json-schema.org/draft/2020-12/schema"

# (module, attribute, schema name) of protocol objects that are not stored packets.
EXTRA_SHAPES = (
    ("dcx.packets.proposal", "INPUT", "decision_proposal_input_v0"),
    ("dcx.packets.outcome", "INPUT", "decision_outcome_input_v0"),
    ("dcx.packets.rebase", "INPUT", "decision_rebase_input_v0"),
    ("dcx.state.events", "EVENT", "loopx_rollout_event_v0"),
    ("dcx.state.gates", "GATE_EVENT", "loopx_rollout_event_v0_user_gate"),
    ("dcx.packets.advisory", "REQUEST", "decision_context_advisory_retrieve_request_v0"),
    ("dcx.packets.advisory", "RESPONSE", "decision_context_advisory_retrieve_response_v0"),
    ("dcx.packets.advisory", "READINESS", "dcx_extension_provider_readiness_v0"),
    ("dcx.packets.recall", "SHAPE", "decision_context_ephemeral_recall_v0"),
    ("dcx.state.redaction", "STUB", "dcx_redacted_v0"),
    ("dcx.packets.output", "RESULT", "dcx_result_v0"),
    ("dcx.packets.output", "ERROR", "dcx_error_v0"),
    ("dcx.packets.comparison", "SHAPE", "dcx_provider_comparison_v0"),
    ("dcx.packets.report", "SHAPE", "dcx_decision_quality_report_v0"),
    ("dcx.packets.signatures", "STATEMENT", "dcx_statement_v0"),
    ("dcx.packets.signatures", "SIGNER", "dcx_signer_v0"),
    ("dcx.packets.signatures", "REVOCATION", "dcx_signer_revocation_v0"),
)


def _wrap(name: str, body: dict[str, Any]) -> dict[str, Any]:
    return {"$schema": DIALECT, "$id": f"{name}.schema.json", "title": name, **body}


def all_schemas() -> dict[str, dict[str, Any]]:
    out = {spec.schema_version: spec.schema() for spec in all_specs().values()}
    for module, attribute, name in EXTRA_SHAPES:
        shape = getattr(
            import_module(module), attribute
        )  # a name that moved is an error, never skipped
        if not isinstance(shape, Shape):
            raise TypeError(f"{module}.{attribute} is not a Shape")
        out[name] = _wrap(name, shape.schema())
    return dict(sorted(out.items()))


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    schemas = all_schemas()
    wanted = {f"{name}.schema.json": render(body) for name, body in schemas.items()}
    if "--check" in argv:
        present = (
            {p.name: p.read_text() for p in SCHEMA_DIR.glob("*.schema.json")}
            if SCHEMA_DIR.is_dir()
            else {}
        )
        if present != wanted:
            stale = sorted(
                set(present) ^ set(wanted) | {n for n in wanted if present.get(n) != wanted[n]}
            )
            print("docs/schemas is out of date: " + ", ".join(stale), file=sys.stderr)
            print("run: python scripts/schemas.py", file=sys.stderr)
            return 1
        return 0
    SCHEMA_DIR.mkdir(parents=True, exist_ok=True)
    for old in SCHEMA_DIR.glob("*.schema.json"):
        if old.name not in wanted:
            old.unlink()
    for name, text in wanted.items():
        (SCHEMA_DIR / name).write_text(text)
    print(f"wrote {len(wanted)} schema(s) to docs/schemas/")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
