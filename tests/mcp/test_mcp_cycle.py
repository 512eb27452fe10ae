"""A whole decision through `dcx mcp` tools, judged against the same decision run by the CLI.

Oracle: a differential comparison. The same cycle (index, an authority edit,
prepare --auto-rebase with a query, propose, outcome, writeback, commit,
feedback) runs once through the SDK's stdio client against the real `dcx mcp`
process and once through the CLI (tests.support.cycle.run_cycle), on two copies of
the example with the fixed clock and key: every public packet, the event log,
the decision index and the committed cursors must be byte-identical. The MCP
run also previews with show_content first, which must write nothing (the
comparison would catch it) and must leave its content in the tool result only.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cycle import QUERY, QUERY_SUMMARY, RUNBOOK, D, run_cycle, stale_runbook
from tests.support.mcp import connect, data, run
from tests.support.workspace import copy_example


def _files(root: Path) -> dict[str, bytes]:
    dc = root / ".decision-context"
    picked = [
        *dc.glob("packets/*/*.json"),
        *dc.glob("decisions/*.jsonl"),
        dc / "events.jsonl",
        dc / "statements.jsonl",  # SPEC §18: the same signed statements, one per writing tool call
        *dc.glob("signers/*/*"),
        *dc.glob("private/cursors*"),
        *dc.glob("private/cursors/*.json"),
    ]
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(picked) if p.is_file()}


def _all_bytes(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.name.endswith(".lock")
    }


def _mcp_cycle(root: Path, errlog) -> dict:
    out: dict = {}

    async def main():
        async with connect(root, errlog=errlog) as c:
            out["index"] = data(await c.call_tool("index", {}))
            stale_runbook(root)
            before = _all_bytes(root)
            out["preview"] = data(
                await c.call_tool(
                    "prepare",
                    {
                        "decision_id": D,
                        "show_content": True,
                        "query": QUERY,
                        "query_summary": QUERY_SUMMARY,
                    },
                )
            )
            recalled = await c.call_tool(
                "recall", {"scope": "", "query": QUERY, "query_summary": QUERY_SUMMARY}
            )
            out["recall"], out["recall_status"] = data(recalled), recalled.meta["dcx/status"]
            out["preview_wrote"] = _all_bytes(root) != before
            prepared = await c.call_tool(
                "prepare",
                {
                    "decision_id": D,
                    "auto_rebase": True,
                    "query": QUERY,
                    "query_summary": QUERY_SUMMARY,
                },
            )
            out["prepare"] = data(prepared)
            out["prepare_status"] = prepared.meta["dcx/status"]
            out["propose"] = data(
                await c.call_tool(
                    "propose",
                    {
                        "decision_id": D,
                        "proposal": json.loads((root / "proposal.json").read_text()),
                    },
                )
            )
            out["outcome"] = data(
                await c.call_tool(
                    "outcome",
                    {"decision_id": D, "outcome": json.loads((root / "outcome.json").read_text())},
                )
            )
            out["writeback"] = data(
                await c.call_tool(
                    "writeback",
                    {"decision_id": D, "kind": "validation", "summary": "TTL kept at 90 s"},
                )
            )
            event_id = out["writeback"]["event"]["event_id"]
            out["commit"] = data(
                await c.call_tool("commit", {"decision_id": D, "event_id": event_id})
            )
            out["replay"] = data(
                await c.call_tool("commit", {"decision_id": D, "event_id": event_id})
            )
            out["feedback"] = data(await c.call_tool("feedback", {"decision_id": D}))
            out["status"] = data(await c.call_tool("status", {}))
            out["log"] = data(await c.call_tool("log", {"decision_id": D}))
            out["resources"] = [str(r.uri) for r in (await c.list_resources()).resources]
            out["decision_resource"] = (
                (await c.read_resource(f"dcx://decisions/{D}")).contents[0].text
            )
            ref = out["propose"]["proposal"]["packet_ref"]
            out["packet_resource"] = (
                (await c.read_resource(f"dcx://packets/{ref}")).contents[0].text,
                ref,
            )
            shown = await c.call_tool("show", {"ref": ref})
            out["show_text"] = shown.content[0].text
            out["audit"] = data(await c.call_tool("audit", {}))
            out["verify"] = data(await c.call_tool("verify", {}))

    run(main)
    return out


@pytest.fixture(scope="module")
def cycle(tmp_path_factory):
    base = tmp_path_factory.mktemp("mcp-cycle")
    mcp_root, cli_root = copy_example(base / "mcp"), copy_example(base / "cli")
    errlog = base / "server-stderr.txt"
    with errlog.open("w") as handle:
        out = _mcp_cycle(mcp_root, handle)
    run_cycle(cli_root)
    return out, mcp_root, cli_root, errlog.read_text()


def test_the_decision_is_byte_identical_to_the_cli_run(cycle) -> None:
    _, mcp_root, cli_root, _ = cycle
    mine, theirs = _files(mcp_root), _files(cli_root)
    assert sorted(mine) == sorted(theirs)
    assert [name for name in mine if mine[name] != theirs[name]] == []
    assert any(name.startswith(".decision-context/packets/commit/") for name in mine)
    # one signed statement per writing tool call, as per command (the replayed commit wrote nothing)
    stated = [
        json.loads(ln)["command"] for ln in mine[".decision-context/statements.jsonl"].splitlines()
    ]
    assert stated == ["prepare", "propose", "outcome", "writeback", "commit", "feedback"]


def test_each_step_answers_with_the_data_the_cli_prints(cycle) -> None:
    out = cycle[0]
    summary = out["prepare"]["summary"]
    assert summary["mode"] == "auto" and not summary["preview"] and summary["ready_sources"] >= 1
    assert summary["stale_or_rejected_claims"] >= 1  # the edited runbook demotes a recalled claim
    assert out["prepare_status"] in ("ok", "partial")
    assert out["propose"]["proposal"]["evidence_packet_ref"] == summary["evidence_packet_ref"]
    assert out["commit"]["replayed"] is False and out["replay"]["replayed"] is True
    assert out["commit"]["receipt"]["receipt_ref"] == out["replay"]["receipt"]["receipt_ref"]
    assert out["feedback"]["feedback"]["decision_id"] == D
    assert out["log"]["decisions"][0]["next_step"] is None  # complete
    assert [row["decision_id"] for row in out["status"]["workspace"]["decisions"]] == [D]
    assert (
        out["audit"]["findings"] == [] and out["verify"]["problems"] == []
    )  # nothing leaked, all verifies


def test_resources_are_the_stored_records(cycle) -> None:
    out, root, _, _ = cycle
    assert out["resources"] == [f"dcx://decisions/{D}"]
    assert json.loads(out["decision_resource"]) == out["log"]["decisions"][0]
    text, ref = out["packet_resource"]
    stored = (root / ".decision-context" / "packets" / "proposal" / f"{ref}.json").read_text()
    assert text == stored and out["show_text"] == stored


def test_transient_content_reaches_the_tool_result_only(cycle) -> None:
    out, root, _, stderr = cycle
    preview = out["preview"]["content"]
    assert preview["visibility"] == "local_private_transient"
    assert out["preview_wrote"] is False
    authority = {p.read_text() for p in (root / "docs").glob("*.md")}
    read = [item for item in preview["exact_reads"] if item["content"]]
    assert read and all(item["content"] in authority for item in read)
    assert (root / RUNBOOK).read_text() in {
        item["content"] for item in read
    }  # the edited text, read exactly
    recalled = [item["content"] for item in preview["recall_results"]]
    assert recalled
    # recall: the ephemeral packet, content included, in the result; nothing written (the preview check
    # above spans it, and the byte comparison with the CLI run would catch a stored packet)
    assert out["recall_status"] == "ok" and out["recall"]["results"]
    assert {row["content"] for row in out["recall"]["results"]} <= set(recalled)
    recalled += [row["content"] for row in out["recall"]["results"]]
    assert stderr == ""
    everything = b"".join(_all_bytes(root).values())
    assert QUERY.encode() not in everything
    for text in [*recalled, *(item["content"] for item in read)]:
        assert text not in out["decision_resource"] and text not in out["packet_resource"][0]
