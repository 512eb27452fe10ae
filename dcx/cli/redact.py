from __future__ import annotations

from typing import Annotated

import typer

from dcx.cli._boundary import run
from dcx.cli._options import AgentOpt, FormatOpt, ObservedAtOpt, OutputFormat, WaitOpt
from dcx.core.result import Result


def command(
    ctx: typer.Context,
    ref: Annotated[
        str, typer.Argument(help="The packet to redact: a ref, or a unique prefix of one.")
    ],
    reason: Annotated[
        str,
        typer.Option("--reason", help="Why, as a reason code (a token), e.g. leaked_credential."),
    ],
    agent_id: AgentOpt = None,
    observed_at: ObservedAtOpt = None,
    wait: WaitOpt = 5.0,
    fmt: FormatOpt = OutputFormat.text,
) -> None:
    """Replace a stored packet by a dcx_redacted_v0 stub: for what `dcx audit` flags.

    The stub keeps the packet's ref, kind, goal, decision and key id and the
    blake3 digest and size of the removed bytes, never the bytes. `dcx verify`
    then reports the packet as redacted (not corrupt) and checks every other
    link; show, log, diff and feedback say "redacted"; a commit whose chain
    needs it is refused (chain_redacted). Git history still holds the old
    bytes: see docs/redaction.md (git filter-repo, rotating a leaked key).

    Example: dcx redact decision-proposal-78ddce73 --reason leaked_credential
    """

    def call(g) -> Result:
        from dcx.ops.redact import redact

        return redact(
            ws=g.ws(),
            ref=ref,
            reason_code=reason,
            clock=g.clock(observed_at),
            wait=wait,
            agent_id=agent_id,
        )

    run(ctx, fmt, call, render)


def render(console, result: Result) -> None:
    stub = result.data["stub"]
    if not result.data["redacted"]:
        console.print(
            f"{stub['redacted_ref']} was already redacted ({stub['reason_code']}); nothing to do",
            markup=False,
        )
        return
    console.print(
        f"redacted {stub['redacted_ref']} ({stub['reason_code']}) · removed {stub['removed_size']} bytes, "
        f"{stub['removed_blake3']}",
        markup=False,
    )
    console.print(
        f"  {result.data['file']} is now a dcx_redacted_v0 stub; git history still holds the old bytes "
        "(docs/redaction.md)",
        markup=False,
    )
