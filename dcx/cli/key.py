from __future__ import annotations

import sys

from dcx.cli._declare import Argument, Group, Option
from dcx.cli._globals import Globals
from dcx.cli._layout import Page, styled
from dcx.cli._options import AGENT, FORMAT, OBSERVED_AT, WAIT
from dcx.core.result import Result

group = Group(
    help="Share one workspace key between the hosts of one goal; manage the agents' signing keys.\n\nExample: dcx key export > goal.key"
)


def render_export(page, result: Result) -> None:
    sys.stdout.write(result.data["key"] + "\n")  # the bare key, for `> goal.key`


@group.command("export", render=render_export, fmt=FORMAT)
def export(g: Globals, *, fmt: str) -> Result:
    """Print the workspace key as 64 hex digits (keep it private).

    Example: dcx key export > goal.key
    """
    from dcx.state.keys import export_hex, load_key

    return Result("key export", {"key": export_hex(load_key(g.ws(), create=False))})


def render_import(page, result: Result) -> None:
    page.line(f"key {result.data['key_id']} installed")


@group.command(
    "import",
    render=render_import,
    source=Argument(help="A file holding the hex key, or - for stdin."),
    force=Option("--force", type=bool, help="Replace a different existing key."),
    fmt=FORMAT,
)
def import_(g: Globals, *, source: str, force: bool, fmt: str) -> Result:
    """Install a key exported from another host of the same goal.

    Example: dcx key import goal.key
    """
    from pathlib import Path

    from dcx.core.errors import InvalidInput
    from dcx.state.keys import import_hex

    ws = g.ws()
    try:
        data = sys.stdin.buffer.read() if source == "-" else Path(source).read_bytes()
    except OSError:
        raise InvalidInput("key import: cannot read the key file", field="FILE") from None
    key = import_hex(ws, data, force=force)
    return Result("key import", {"key_id": key.key_id})


def render_create(page: Page, result: Result) -> None:
    data = result.data
    made = "created" if data["created"] else "exists"
    page.line(f"signing key {data['key_id']} of {data['agent_id']} ({made}): {data['file']}")


@group.command(
    "create", render=render_create, agent_id=AGENT, observed_at=OBSERVED_AT, wait=WAIT, fmt=FORMAT
)
def create(
    g: Globals, *, agent_id: str | None, observed_at: str | None, wait: float, fmt: str
) -> Result:
    """Make the acting agent's signing key on this host, if it has none, and print its id.

    The private half stays in private/signing/ (0600); the public half is
    written to .decision-context/signers/AGENT/KEY-ID.pub, to commit with the
    goal. Every writing command makes it on first use too.

    Example: dcx key create --agent-id agent-a
    """
    from dcx.ops.key import create as create_key

    return create_key(ws=g.ws(), agent_id=agent_id, clock=g.clock(observed_at), wait=wait)


def render_signers(page: Page, result: Result) -> None:
    if not result.data["signers"]:
        page.line("no signers yet: every writing command makes its agent's key")
    for row in result.data["signers"]:
        here = " · this host" if row["this_host"] else ""
        status = row["status"]
        if status == "revoked":
            rev = row["revocation"]
            status = f"revoked {rev['revoked_at']} ({rev['reason_code']}, by {rev['revoked_by_agent_id']})"
        page.line(
            styled(
                "{}  [cyan]{}[/]  {}  {}{}",
                row["agent_id"],
                row["key_id"],
                row["created_at"],
                status,
                here,
            )
        )
    for problem in result.data["problems"]:
        page.line(
            styled("[red]bad[/] {}: {}: {}", problem["file"], problem["code"], problem["problem"])
        )


@group.command("signers", render=render_signers, fmt=FORMAT)
def signers(g: Globals, *, fmt: str) -> Result:
    """List every agent's public signing keys in signers/, and which are revoked or on this host.

    Example: dcx key signers
    """
    from dcx.ops.key import list_signers

    return list_signers(ws=g.ws())


def render_revoke(page: Page, result: Result) -> None:
    doc = result.data["revocation"]
    verb = "revoked" if result.data["written"] else "was already revoked:"
    page.line(
        f"{verb} {doc['key_id']} of {doc['agent_id']} ({doc['reason_code']}) · {result.data['file']}"
    )
    if result.data["retired_local_key"]:
        page.line("  this host's key was moved aside; the next command makes a new one")


@group.command(
    "revoke",
    render=render_revoke,
    key_id=Argument(metavar="KEY-ID", help="The key: its id or a unique prefix."),
    reason=Option(
        "--reason",
        required=True,
        metavar="CODE",
        help="Why, as a reason code; key_compromise withdraws all it signed.",
    ),
    agent_id=AGENT,
    observed_at=OBSERVED_AT,
    wait=WAIT,
    fmt=FORMAT,
)
def revoke(
    g: Globals,
    *,
    key_id: str,
    reason: str,
    agent_id: str | None,
    observed_at: str | None,
    wait: float,
    fmt: str,
) -> Result:
    """Record a signed revocation of a signing key in signers/ (public, to commit).

    Signed by the key itself on the host that holds it, or else by the acting
    agent's key (another signer of the goal). With --reason key_compromise
    every statement the key signed stops counting; with any other reason only
    those observed after the revocation. A revoked key of this host is moved
    aside, and the next writing command makes a new one.

    Example: dcx key revoke signer-3f2a --reason host_retired
    """
    from dcx.ops.key import revoke as revoke_key

    return revoke_key(
        ws=g.ws(),
        key_id=key_id,
        reason_code=reason,
        agent_id=agent_id,
        clock=g.clock(observed_at),
        wait=wait,
    )
