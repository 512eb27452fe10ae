"""``dcx.ops.recall``: the query sources, the packet shape, the result status."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from dcx.core.clock import FixedClock, clock_from_env
from dcx.core.errors import InvalidInput
from dcx.core.workspace import Workspace
from dcx.ops.index import index
from dcx.ops.recall import QUERY_FILE_MAX_BYTES, read_query, recall
from dcx.packets import recall as recall_packet
from tests.support.recall import enable


def test_read_query_sources(tmp_path: Path) -> None:
    assert read_query("q", None, None) == ("q", "--query")
    crlf = tmp_path / "crlf.txt"
    crlf.write_bytes(b"line one\r\n")
    assert read_query(None, str(crlf), None) == ("line one", "--query-file")
    assert read_query(None, "-", io.BytesIO(b"from stdin\n")) == ("from stdin", "--query-file")
    assert read_query(None, "-", io.StringIO("text stream")) == ("text stream", "--query-file")


@pytest.mark.parametrize(
    ("query", "query_file", "stdin", "field"),
    [
        (None, None, None, "--query"),
        ("q", "-", None, "--query"),
        (None, "missing.txt", None, "--query-file"),
        (None, "-", io.BytesIO(b"\xff\xfe"), "--query-file"),
        (None, "-", io.BytesIO(b"x" * (QUERY_FILE_MAX_BYTES + 1)), "--query-file"),
        (None, "-", None, "--query-file"),
    ],
)
def test_read_query_refusals(query, query_file, stdin, field: str) -> None:
    with pytest.raises(InvalidInput) as err:
        read_query(query, query_file, stdin)
    assert err.value.field == field and err.value.exit_code == 2


def test_recall_result_is_the_validated_packet(fresh_ws: Path, tree) -> None:
    ws = enable(fresh_ws)
    tree(fresh_ws, {"docs": {"a.md": "# Heron\n\nheron migration plan"}})
    index(clock=clock_from_env(), ws=Workspace(fresh_ws), agent_id=None)
    result = recall(
        ws=ws,
        agent_id="agent-a",
        scope="",
        query="heron",
        query_file=None,
        query_summary="herons",
        clock=FixedClock("2026-11-29T18:00:00Z"),
    )
    assert (result.command, result.status, result.warnings) == ("recall", "ok", [])
    assert recall_packet.SHAPE.check(result.data) == result.data
    assert result.data["results"][0]["content"] == "# Heron\n\nheron migration plan"
    assert result.data["retrieval"]["observed_at"] == "2026-11-29T18:00:00Z"


def test_unavailable_recall_is_partial_with_a_hint(fresh_ws: Path) -> None:
    ws = enable(fresh_ws)
    result = recall(
        clock=clock_from_env(),
        ws=ws,
        agent_id=None,
        scope="",
        query="heron",
        query_file=None,
        query_summary="herons",
    )
    assert result.status == "partial" and result.exit_code == 0
    assert result.warnings == [
        "recall unavailable (index_missing): build the bm25 index with `dcx index`"
    ]
