"""Concurrent commits (SPEC §3.5, §8.6): one winner per cursor, no lost update, no deadlock.

- 16 console-script processes commit the same assembly at once: exactly one
  advances the cursors, every other one reports the receipt as replayed (or
  is refused lock busy, exit 4, when it would not wait).
- 16 processes commit two different decisions prepared from the same
  committed state over the same two sources (``race-a``, ``race-b``): one
  decision wins both cursors; every process of the other is refused
  ``cursor_moved`` (exit 1) or lock busy (exit 4) and writes nothing.

Every process must end within ``BOUND`` seconds. ``DCX_RACE_ROUNDS``
(default 2) repeats the two-decision race on fresh copies.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dcx.core.clock import clock_from_env
from tests.support.figures import record
from tests.support.reliability import (
    commit_receipts,
    copy_workspace,
    cycle_template,
    index_lines,
    knob,
    launch,
    pending_exists,
    run_script,
)
from tests.support.workspace import cursor_bytes

PROCESSES = knob("DCX_RACE_PROCESSES", 16)
ROUNDS = knob("DCX_RACE_ROUNDS", 2)


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    return cycle_template(tmp_path_factory)


def _commit(root: Path, template, decision_id: str, wait: str) -> list[str]:
    return [
        "-C",
        str(root),
        "commit",
        "--decision-id",
        decision_id,
        "--event-id",
        template.decisions[decision_id].event_id,
        "--wait",
        wait,
        "--format",
        "json",
    ]


def _error_code(result: dict[str, Any]) -> str | None:
    doc = result["doc"]
    return doc["error"]["code"] if isinstance(doc, dict) and not doc.get("ok", True) else None


def _cursor_refs(root: Path, cursors: dict[str, str]) -> dict[str, str]:
    """The keyed refs of committed cursor values, as a commit receipt names them."""
    from dcx.core.workspace import Workspace
    from dcx.state.keys import load_key
    from dcx.state.refmap import RefMinter

    ws = Workspace(root)
    minter = RefMinter(ws, load_key(ws), record=False)
    return {sid: minter.cursor_ref(sid, value) for sid, value in cursors.items()}


def test_sixteen_processes_commit_the_same_assembly(template, tmp_path: Path) -> None:
    root = copy_workspace(template, tmp_path / "goal")
    decision = template.decisions["ttl-2026-12"]
    # half wait for the lock, half refuse at once: both answers are allowed, nothing else is
    commands = [
        _commit(root, template, decision.decision_id, "10" if i % 2 else "0")
        for i in range(PROCESSES)
    ]
    results = launch(commands, template.env())

    codes = [r["code"] for r in results]
    advanced = [r for r in results if r["code"] == 0 and not r["doc"]["data"]["replayed"]]
    replayed = [r for r in results if r["code"] == 0 and r["doc"]["data"]["replayed"]]
    busy = [r for r in results if r["code"] == 4 and _error_code(r) == "lock_busy"]
    other = [r for r in results if r not in advanced + replayed + busy]
    final = json.loads(cursor_bytes(root))["cursors"]
    receipts = commit_receipts(root, decision.decision_id)
    record(
        "concurrency",
        "same_assembly",
        {
            "processes": len(results),
            "advanced": len(advanced),
            "replayed": len(replayed),
            "lock_busy": len(busy),
            "other": len(other),
            "hung": codes.count(None),
            "receipts": len(receipts),
            "lost_updates": int(final != decision.proposed),
            "max_seconds": round(max(r["elapsed"] for r in results), 3),
        },
    )
    assert not other, [(r["code"], r["doc"], r["stderr"][-300:]) for r in other]
    assert len(advanced) == 1, codes
    assert advanced[0]["doc"]["data"]["receipt"]["status"] == "committed"
    assert all(
        r["doc"]["data"]["receipt"] == advanced[0]["doc"]["data"]["receipt"] for r in replayed
    )
    assert all(
        r["args"][-3] == "0" for r in busy
    )  # only a process that would not wait is turned away
    assert final == decision.proposed
    assert len(receipts) == 1 and len(index_lines(root, decision.decision_id, "commit")) == 1
    assert not pending_exists(root, decision.assembly_ref)
    assert run_script(["-C", str(root), "verify"], env=template.env()).code == 0


def test_two_decisions_race_on_the_same_sources(template, tmp_path: Path) -> None:
    a, b = template.decisions["race-a"], template.decisions["race-b"]
    assert a.expected == b.expected and set(a.proposed) == set(
        b.proposed
    )  # same state, same sources
    figures = {
        "rounds": 0,
        "processes": 0,
        "advanced": 0,
        "replayed": 0,
        "cursor_moved": 0,
        "lock_busy": 0,
        "other": 0,
        "hung": 0,
        "lost_updates": 0,
        "winners": {},
        "max_seconds": 0.0,
    }
    problems = []
    for round_no in range(ROUNDS):
        root = copy_workspace(template, tmp_path / f"round-{round_no}")
        commands = []
        for i in range(PROCESSES):
            decision = (a, b)[(i + round_no) % 2]
            commands.append(_commit(root, template, decision.decision_id, "10" if i % 4 else "0"))
        results = launch(commands, template.env())
        by_decision: dict[str, list[dict[str, Any]]] = {a.decision_id: [], b.decision_id: []}
        for result in results:
            by_decision[result["args"][4]].append(result)
        final = json.loads(cursor_bytes(root))["cursors"]
        winners = [d for d in (a, b) if commit_receipts(root, d.decision_id)]
        figures["rounds"] += 1
        figures["processes"] += len(results)
        figures["hung"] += sum(r["code"] is None for r in results)
        figures["max_seconds"] = max(
            figures["max_seconds"], round(max(r["elapsed"] for r in results), 3)
        )
        if len(winners) != 1:
            problems.append(f"round {round_no}: {len(winners)} decisions hold a commit receipt")
            continue
        winner = winners[0]
        loser = b if winner is a else a
        figures["winners"][winner.decision_id] = figures["winners"].get(winner.decision_id, 0) + 1
        # no lost update: both cursors are the winner's, all or nothing, and the receipt names them
        receipt = commit_receipts(root, winner.decision_id)[0]
        named = {row["source_id"]: row["cursor_after_ref"] for row in receipt["sources"]}
        if final != winner.proposed or named != _cursor_refs(root, final):
            figures["lost_updates"] += 1
            problems.append(
                f"round {round_no}: cursors are not exactly {winner.decision_id}'s proposal"
            )
        for result in by_decision[winner.decision_id]:
            if result["code"] == 0:
                figures["replayed" if result["doc"]["data"]["replayed"] else "advanced"] += 1
            elif result["code"] == 4 and _error_code(result) == "lock_busy":
                figures["lock_busy"] += 1
            else:
                figures["other"] += 1
                problems.append(
                    f"round {round_no}: winner process exit {result['code']} {_error_code(result)}"
                )
        for result in by_decision[loser.decision_id]:
            code = _error_code(result)
            if result["code"] == 1 and code == "cursor_moved":
                figures["cursor_moved"] += 1
            elif result["code"] == 4 and code == "lock_busy":
                figures["lock_busy"] += 1
            else:
                figures["other"] += 1
                problems.append(f"round {round_no}: loser process exit {result['code']} {code}")
        # the refused decision wrote nothing: no receipt, no index line, its companion kept for a re-prepare
        if index_lines(root, loser.decision_id, "commit") or not pending_exists(
            root, loser.assembly_ref
        ):
            problems.append(f"round {round_no}: the refused decision left a trace")
        if len(index_lines(root, winner.decision_id, "commit")) != 1:
            problems.append(f"round {round_no}: the winner has not exactly one commit line")
        if run_script(["-C", str(root), "verify"], env=template.env()).code != 0:
            problems.append(f"round {round_no}: verify failed")
    expected_advances = figures["rounds"] - sum(p.endswith("commit receipt") for p in problems)
    record("concurrency", "two_decisions", figures)
    assert not problems, problems
    assert (
        figures["advanced"] == expected_advances == ROUNDS
    )  # exactly one advancing commit per round
    assert figures["hung"] == 0 and figures["other"] == 0 and figures["lost_updates"] == 0


def test_a_commit_that_loses_the_companion_to_a_racing_twin_replays(
    template, tmp_path: Path, monkeypatch
) -> None:
    """The window the 16-process race hits now and then, made certain: between this commit's
    receipt check and its read of the pending companion, a twin process commits the same chain
    and removes the companion. This one must replay that receipt, not refuse pending_missing."""
    from dcx.core.workspace import Workspace
    from dcx.ops.commit import commit_decision
    from dcx.state import pending

    root = copy_workspace(template, tmp_path / "goal")
    decision = template.decisions["ttl-2026-12"]
    real_read = pending.read
    twins = []

    def read_after_a_twin_committed(ws, assembly_ref):
        if not twins:
            twins.append(
                run_script(_commit(root, template, decision.decision_id, "10"), env=template.env())
            )
        return real_read(ws, assembly_ref)

    monkeypatch.setattr(pending, "read", read_after_a_twin_committed)
    for name, value in template.env().items():
        if name.startswith("DCX_"):
            monkeypatch.setenv(name, value)
    result = commit_decision(
        clock=clock_from_env(),
        ws=Workspace(root),
        decision_id=decision.decision_id,
        event_id=decision.event_id,
        event_log=None,
        agent_id="agent-a",
        wait=10,
    )
    assert twins and twins[0].code == 0 and twins[0].json()["data"]["replayed"] is False
    assert result.data["replayed"] is True
    assert result.data["receipt"] == twins[0].json()["data"]["receipt"]
    assert len(commit_receipts(root, decision.decision_id)) == 1
    assert json.loads(cursor_bytes(root))["cursors"] == decision.proposed
