from __future__ import annotations

from dcx.cli._declare import Argument, Option, declare
from dcx.cli._globals import Globals
from dcx.cli._options import AGENT, FORMAT, OBSERVED_AT, WAIT
from dcx.core.result import Result


def render(page, result: Result) -> None:
    stub = result.data["stub"]
    if not result.data["redacted"]:
        page.line(
            f"{stub['redacted_ref']} was already redacted ({stub['reason_code']}); nothing to do"
        )
        return
    page.line(
        f"redacted {stub['redacted_ref']} ({stub['reason_code']}) · removed {stub['removed_size']} bytes, "
        f"{stub['removed_blake3']}"
    )
    page.line(
        f"  {result.data['file']} is now a dcx_redacted_v0 stub; git history still holds the old bytes "
        "(docs/redaction.md)"
    )


@declare(
    render=render,
    ref=Argument(help="The packet to redact: a ref, or a unique prefix of one."),
    reason=Option(
        "--reason",
        required=True,
        metavar="CODE",
        help="Why, as a reason code (a token), e.g. leaked_credential.",
    ),
    agent_id=AGENT,
    observed_at=OBSERVED_AT,
    wait=WAIT,
    fmt=FORMAT,
)
def command(
    g: Globals,
    *,
    ref: str,
    reason: str,
    agent_id: str | None,
    observed_at: str | None,
    wait: float,
    fmt: str,
) -> Result:
    """Replace a stored packet by a dcx_redacted_v0 stub: for what `dcx audit` flags.

    The stub keeps the packet's ref, kind, goal, decision and key id and the
    blake3 digest and size of the removed bytes, never the bytes. `dcx verify`
    then reports the packet as redacted (not corrupt) and checks every other
    link; show, log, diff and feedback say "redacted"; a commit whose chain
    needs it is refused (chain_redacted). Git history still holds the old
    bytes: see docs/redaction.md (git filter-repo, rotating a leaked key).

    Example: dcx redact decision-proposal-78ddce73 --reason leaked_credential
    """
    from dcx.ops.redact import redact

    return redact(
        ws=g.ws(),
        ref=ref,
        reason_code=reason,
        clock=g.clock(observed_at),
        wait=wait,
        agent_id=agent_id,
    )
