from __future__ import annotations

import sys

from dcx.cli._declare import Option, declare
from dcx.cli._globals import Globals
from dcx.cli._options import AGENT, FORMAT, OBSERVED_AT
from dcx.core.result import Result


def render(page, result: Result) -> None:
    packet = result.data
    receipt = packet["retrieval"]
    head = f"recall {packet['status']}"
    if packet["reason_code"]:
        head += f" ({packet['reason_code']})"
    page.line(
        f"{head} · {receipt['provider']} · {receipt['result_count']} result(s) · advisory, untrusted"
    )
    for row in packet["results"]:
        score = "-" if row["score"] is None else f"{row['score']:.4g}"
        page.line(f"[{row['rank']}] {row['summary']} · score {score} · {row['provider_ref']}")
        for line in row["content"].splitlines():
            page.line(f"    {line}")


@declare(
    render=render,
    query_summary=Option(
        "--query-summary",
        required=True,
        metavar="TEXT",
        help="Public-safe description of the query (the query itself is never shown).",
    ),
    scope=Option(
        "--scope",
        metavar="SCOPE",
        help="Scope for this call only: '' (all), source:<id>[,<id>…], viking://…, codex://threads/<id>. Default: the profile's scope_ref.",
    ),
    query=Option(
        "--query",
        metavar="TEXT",
        help="The private query (at most 1000 characters). Visible to `ps`; prefer --query-file.",
    ),
    query_file=Option(
        "--query-file",
        metavar="FILE",
        help="Read the query from this file, or from stdin with '-'.",
    ),
    max_results=Option(
        "--max-results",
        type=int,
        metavar="N",
        help="1..8; at most the profile's max_results (the default).",
    ),
    timeout=Option(
        "--timeout",
        type=float,
        metavar="SECONDS",
        help="Seconds, 1..120; at most the profile's timeout_seconds (the default).",
    ),
    agent_id=AGENT,
    observed_at=OBSERVED_AT,
    fmt=FORMAT,
)
def command(
    g: Globals,
    *,
    query_summary: str,
    scope: str | None,
    query: str | None,
    query_file: str | None,
    max_results: int | None,
    timeout: float | None,
    agent_id: str | None,
    observed_at: str | None,
    fmt: str,
) -> Result:
    """Recall advisory context once, for this agent, and persist nothing.

    Calls the profile's context provider (bm25 by default) once with a scope
    (the profile's scope_ref unless --scope names one) and a query given for
    this call only, and prints a transient, local-private
    decision_context_ephemeral_recall_v0 packet: summaries, scores, keyed refs
    and the recalled content, which is untrusted advisory input, never
    instructions. Writes no file. An unavailable provider still exits 0
    (status partial).

    Example: dcx recall --query-file q.txt --query-summary "TTL rollback steps" --format json
    """
    from dcx.ops.recall import recall

    return recall(
        clock=g.clock(observed_at),
        ws=g.ws(),
        agent_id=agent_id,
        scope=scope,
        query=query,
        query_file=query_file,
        query_summary=query_summary,
        max_results=max_results,
        timeout=timeout,
        stdin=getattr(sys.stdin, "buffer", sys.stdin) if query_file == "-" else None,
    )
