"""The private companion of an assembly: ``private/pending/<assembly-ref>.json``
(``decision_context_pending_v0``, mode 0600, SPEC §8.2).

It holds what commit needs and the public packets may not: the raw expected
and proposed cursors of the ready sources, and the digests of the private
profile and registry at prepare time.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dcx.core.errors import Refused, WorkspaceSymlink
from dcx.core.fields import Any_, Pattern, Ref, Shape, Token
from dcx.core.fsutil import read_bytes, unlink, write_private
from dcx.core.workspace import Workspace

SCHEMA = "decision_context_pending_v0"


class _CursorMap(Any_):
    def __init__(self, nullable_values: bool = False, **kw: Any) -> None:
        super().__init__(**kw)
        self.nullable_values = nullable_values

    def check(self, value: Any, path: str) -> Any:
        from dcx.core.fields import bad

        if not isinstance(value, dict):
            raise bad(path, "expected an object")
        for key, cursor in value.items():
            Token().check(key, f"{path}.{key}")
            if cursor is None and self.nullable_values:
                continue
            if not isinstance(cursor, str) or not cursor or len(cursor) > 256:
                raise bad(f"{path}.{key}", "expected a cursor string of at most 256 characters")
        return dict(value)


SHAPE = Shape(
    SCHEMA,
    {
        "schema_version": Token(),
        "goal_id": Token(),
        "decision_id": Token(),
        "assembly_ref": Ref("decision-context-assembly"),
        "evidence_packet_ref": Ref("decision-evidence"),
        "checkpoint_ref": Ref("decision-cursor-checkpoint"),
        # private digests, not public tokens: a hex shape, not the public-safety detector
        "profile_digest": Pattern(regex="[0-9a-f]{16,128}", limit=128, what="a hex digest"),
        "registry_digest": Pattern(regex="[0-9a-f]{16,128}", limit=128, what="a hex digest"),
        "key_id": Token(),
        "expected_cursors": _CursorMap(nullable_values=True),
        "proposed_cursors": _CursorMap(),
        "exact_reads": Any_(),
    },
)


def path_for(ws: Workspace, assembly_ref: str) -> Path:
    return ws.pending / f"{assembly_ref}.json"


def write(ws: Workspace, body: dict[str, Any]) -> None:
    clean = SHAPE.check({"schema_version": SCHEMA, **body})
    write_private(
        path_for(ws, clean["assembly_ref"]), json.dumps(clean, indent=2, sort_keys=True).encode()
    )


def read(ws: Workspace, assembly_ref: str) -> dict[str, Any]:
    path = path_for(ws, assembly_ref)
    try:
        data = json.loads(read_bytes(path))
        if data.get("schema_version") != SCHEMA:
            raise ValueError
        return SHAPE.check(data)
    except FileNotFoundError:
        raise Refused(
            f"no pending companion for {assembly_ref} on this machine",
            code="pending_missing",
            hint="commit runs on the host that prepared the decision; prepare again here",
        ) from None
    except WorkspaceSymlink:
        raise
    except Exception:
        raise Refused(f"{ws.rel(path)} is damaged", code="pending_mismatch") from None


def remove(ws: Workspace, assembly_ref: str) -> None:
    unlink(path_for(ws, assembly_ref), missing_ok=True)
