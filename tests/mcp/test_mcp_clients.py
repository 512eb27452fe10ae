"""Two `dcx mcp` servers (two hosts) on one workspace at once: dcx's locks hold between them.

Oracles: the files themselves (every appended line whole and present once,
one commit receipt, verify clean) and a lock held by this test process,
which both servers must report as ``lock_busy`` within their wait.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import anyio

from tests.support.bounds import cut_short
from tests.support.cli import Runner
from tests.support.mcp import connect, data, error, run
from tests.support.workspace import copy_example

D = "ttl-two-hosts"
N = 6  # writebacks per client


def _prepare(root: Path) -> str:
    cli = Runner(root)
    return cli.json("prepare", "--decision-id", D, "--auto-rebase")["data"]["summary"][
        "evidence_packet_ref"
    ]


def test_two_clients_at_once(tmp_path: Path) -> None:
    from dcx.core.fsutil import file_lock

    root = copy_example(tmp_path / "example")
    evidence = _prepare(root)
    proposal = json.loads((root / "proposal.json").read_text())
    outcome = json.loads((root / "outcome.json").read_text())
    events = root / ".decision-context" / "events.jsonl"
    results: dict[str, list] = {"A": [], "B": [], "busy": [], "commit": []}

    async def host(name: str, c) -> None:
        for i in range(N):
            results[name].append(
                await c.call_tool(
                    "writeback",
                    {
                        "decision_id": D,
                        "kind": "todo_add",
                        "summary": f"host {name} todo {i}",
                        "artifacts": [evidence],
                        "wait": 10,
                    },
                )
            )
        results[name].append(await c.call_tool("propose", {"decision_id": D, "proposal": proposal}))
        results[name].append(await c.call_tool("outcome", {"decision_id": D, "outcome": outcome}))

    async def commit(c) -> None:
        results["commit"].append(await c.call_tool("commit", {"decision_id": D, "event_id": event}))

    async def main() -> None:
        nonlocal event
        async with connect(root) as a, connect(root) as b:
            async with anyio.create_task_group() as tg:  # both hosts append at once
                tg.start_soon(host, "A", a)
                tg.start_soon(host, "B", b)
            event = data(
                await a.call_tool(
                    "writeback",
                    {"decision_id": D, "kind": "validation", "summary": "TTL kept at 90 s"},
                )
            )["event"]["event_id"]
            with file_lock(events, wait=1):  # a lock held here is busy for both servers
                started = time.monotonic()
                for c in (a, b):
                    results["busy"].append(
                        await c.call_tool(
                            "writeback",
                            {
                                "decision_id": D,
                                "kind": "validation",
                                "summary": "while held",
                                "wait": 0.2,
                            },
                        )
                    )
                results["busy_seconds"] = time.monotonic() - started  # type: ignore[assignment]
            async with anyio.create_task_group() as tg:  # both commit the one event at once
                tg.start_soon(commit, a)
                tg.start_soon(commit, b)
            results["verify"] = [await b.call_tool("verify", {})]

    event = ""
    run(main)

    for name in ("A", "B"):
        for result in results[name]:
            assert not result.is_error, result.content[0].text
    lines = events.read_bytes().split(b"\n")
    assert lines[-1] == b""  # no torn last line
    parsed = [json.loads(line) for line in lines[:-1]]
    todos = sorted(e["summary"] for e in parsed if e["event_kind"] == "todo_add")
    assert todos == sorted(f"host {n} todo {i}" for n in "AB" for i in range(N))
    assert [error(r)["code"] for r in results["busy"]] == ["lock_busy", "lock_busy"]
    assert cut_short(results["busy_seconds"], 2 * 0.2)  # type: ignore[arg-type]  # the lock stays held
    commits = [data(r) for r in results["commit"]]
    assert sorted(c["replayed"] for c in commits) == [
        False,
        True,
    ]  # one advanced, the other replayed it
    assert len({c["receipt"]["receipt_ref"] for c in commits}) == 1
    assert len(list((root / ".decision-context" / "packets" / "commit").glob("*.json"))) == 1
    assert data(results["verify"][0])["problems"] == []
