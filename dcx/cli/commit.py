from __future__ import annotations

from typing import Annotated

import typer

from dcx.cli._boundary import run
from dcx.cli._options import AgentOpt, DecisionOpt, FormatOpt, OutputFormat, WaitOpt
from dcx.core.result import Result


def command(
    ctx: typer.Context,
    decision_id: DecisionOpt,
    event_id: Annotated[
        str, typer.Option("--event-id", help="The writeback event that binds the chain.")
    ],
    event_log: Annotated[
        str | None,
        typer.Option(
            "--event-log",
            help="Read the event from a host log listed in [commit] external_event_logs.",
        ),
    ] = None,
    agent_id: AgentOpt = None,
    wait: WaitOpt = 5.0,
    fmt: FormatOpt = OutputFormat.text,
) -> None:
    """Advance the private source cursors of a decision, after its writeback event.

    Verifies the event, the packet chain it names, the pending companion and
    that nothing private changed, then compare-and-swaps the cursors under a
    lock (all or nothing), fsyncs and reads back. Any refusal is exit 1 with
    nothing written; running it again prints the receipt as replayed.

    Example: dcx commit --decision-id ttl-2026-12 --event-id dcx-event-5f0c...
    """

    def call(g) -> Result:
        from dcx.ops.commit import commit_decision

        return commit_decision(
            clock=g.clock(),
            ws=g.ws(),
            decision_id=decision_id,
            event_id=event_id,
            event_log=event_log,
            agent_id=agent_id,
            wait=wait,
        )

    run(ctx, fmt, call, render)


def render(console, result: Result) -> None:
    receipt = result.data["receipt"]
    state = "replayed (already committed)" if result.data["replayed"] else receipt["status"]
    if not result.data["replayed"] and not any(
        r["result"] == "advanced" for r in receipt["sources"]
    ):
        state = "committed · nothing to advance"  # a no-change assembly's first commit: no replay
    console.print(f"commit {receipt['receipt_ref']} · {state}", markup=False)
    for row in receipt["sources"]:
        console.print(f"  {row['source_id']}: {source_result(row)}", markup=False)


def source_result(row: dict) -> str:
    """A receipt row's result as people read it: a source that had nothing to advance says so."""
    if row["result"] == "replayed" and row["cursor_before_ref"] == row["cursor_after_ref"]:
        return "unchanged (nothing to advance)"
    return row["result"]
