"""The decision index: many lines under one lock, idempotent by ref, in the order given."""

from __future__ import annotations

import json
from pathlib import Path

from dcx.core.workspace import Workspace
from dcx.state import decisions


def _lines(ws: Workspace, decision_id: str) -> list[dict]:
    return [
        json.loads(line) for line in decisions.index_path(ws, decision_id).read_text().splitlines()
    ]


def test_append_many_writes_each_new_ref_once_in_order(fresh_ws: Path) -> None:
    ws = Workspace(fresh_ws)
    assert decisions.append(ws, "d-1", "scan", "r-1", "2026-11-29T18:00:00Z")
    added = decisions.append_many(
        ws,
        "d-1",
        [("scan", "r-1"), ("coverage", "r-2"), ("evidence", "r-3"), ("coverage", "r-2")],
        "2026-11-29T18:00:01Z",
    )
    assert added == 2
    assert _lines(ws, "d-1") == [
        {"kind": "scan", "observed_at": "2026-11-29T18:00:00Z", "ref": "r-1"},
        {"kind": "coverage", "observed_at": "2026-11-29T18:00:01Z", "ref": "r-2"},
        {"kind": "evidence", "observed_at": "2026-11-29T18:00:01Z", "ref": "r-3"},
    ]
    assert decisions.append_many(ws, "d-1", [("evidence", "r-3")], "2026-11-29T18:00:02Z") == 0
    assert not decisions.append(ws, "d-1", "scan", "r-1", "2026-11-29T18:00:03Z")
    assert decisions.refs_of(ws, "d-1", "coverage") == ["r-2"]
