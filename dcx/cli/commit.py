from __future__ import annotations

from dcx.cli._declare import Option, declare
from dcx.cli._globals import Globals
from dcx.cli._options import AGENT, DECISION, FORMAT, WAIT
from dcx.core.result import Result


def render(page, result: Result) -> None:
    receipt = result.data["receipt"]
    state = "replayed (already committed)" if result.data["replayed"] else receipt["status"]
    page.line(f"commit {receipt['receipt_ref']} · {state}")
    for row in receipt["sources"]:
        page.line(f"  {row['source_id']}: {row['result']}")


@declare(
    render=render,
    decision_id=DECISION,
    event_id=Option(
        "--event-id",
        required=True,
        metavar="EVENT_ID",
        help="The writeback event that binds the chain.",
    ),
    event_log=Option(
        "--event-log", help="Read the event from a host log listed in [commit] external_event_logs."
    ),
    agent_id=AGENT,
    wait=WAIT,
    fmt=FORMAT,
)
def command(
    g: Globals,
    *,
    decision_id: str,
    event_id: str,
    event_log: str | None,
    agent_id: str | None,
    wait: float,
    fmt: str,
) -> Result:
    """Advance the private source cursors of a decision, after its writeback event.

    Verifies the event, the packet chain it names, the pending companion and
    that nothing private changed, then compare-and-swaps the cursors under a
    lock (all or nothing), fsyncs and reads back. Any refusal is exit 1 with
    nothing written; running it again prints the receipt as replayed.

    Example: dcx commit --decision-id ttl-2026-12 --event-id dcx-event-5f0c...
    """
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
