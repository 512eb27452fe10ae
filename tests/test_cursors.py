"""Private committed cursors and freshness state (dcx/state/cursors.py)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from dcx.core.errors import InvalidInput, Refused
from dcx.core.workspace import Workspace
from dcx.state.cursors import read_cursors, read_freshness, record_freshness, write_cursors


def test_missing_cursor_file_is_no_cursor(fresh_ws: Path) -> None:
    assert read_cursors(Workspace(fresh_ws)) == {}


def test_cursors_round_trip_atomically_and_privately(fresh_ws: Path) -> None:
    ws = Workspace(fresh_ws)
    write_cursors(ws, {"source:b": "tree:" + "b" * 64, "source:a": "seq:3"})
    assert read_cursors(ws) == {"source:a": "seq:3", "source:b": "tree:" + "b" * 64}
    data = json.loads(ws.cursors.read_bytes())
    assert data["schema_version"] == "dcx_cursors_v0" and list(data["cursors"]) == [
        "source:a",
        "source:b",
    ]
    assert ws.cursors.stat().st_mode & 0o777 == 0o600
    assert not [p for p in ws.private.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize(
    "body",
    [
        b"{not json",
        b'{"schema_version": "other", "cursors": {}}',
        b'{"schema_version": "dcx_cursors_v0", "cursors": {"s": 5}}',
        b'{"schema_version": "dcx_cursors_v0", "cursors": {"bad id!": "x"}}',
    ],
)
def test_damaged_cursor_file_is_refused_not_treated_as_empty(fresh_ws: Path, body: bytes) -> None:
    ws = Workspace(fresh_ws)
    ws.cursors.write_bytes(body)
    with pytest.raises(Refused) as err:
        read_cursors(ws)
    assert err.value.code == "cursors_invalid" and str(fresh_ws) not in err.value.message


def test_write_cursors_refuses_values_it_could_not_read_back(fresh_ws: Path) -> None:
    with pytest.raises(InvalidInput):
        write_cursors(Workspace(fresh_ws), {"source:a": "x" * 257})
    assert not Workspace(fresh_ws).cursors.exists()


def test_freshness_records_only_move_forward(fresh_ws: Path) -> None:
    ws = Workspace(fresh_ws)
    assert read_freshness(ws) == {}
    record_freshness(ws, {"source:a": "2026-11-29T18:00:00Z"})
    record_freshness(
        ws, {"source:a": "2026-11-29T17:00:00Z", "source:b": "2026-11-29T19:00:00+01:00"}
    )
    assert read_freshness(ws) == {
        "source:a": "2026-11-29T18:00:00Z",
        "source:b": "2026-11-29T18:00:00Z",
    }
    assert ws.freshness.stat().st_mode & 0o777 == 0o600


def test_concurrent_freshness_updates_lose_nothing(fresh_ws: Path) -> None:
    ws = Workspace(fresh_ws)
    threads = [
        threading.Thread(
            target=record_freshness, args=(ws, {f"source:{i}": "2026-11-29T18:00:00Z"})
        )
        for i in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(read_freshness(ws)) == [f"source:{i}" for i in range(8)]
