from __future__ import annotations

import sys
from typing import Annotated

import typer

from dcx.cli._boundary import run
from dcx.cli._options import AgentOpt, FormatOpt, ObservedAtOpt, OutputFormat, WaitOpt
from dcx.core.result import Result

app = typer.Typer(
    help="Share one workspace key between the hosts of one goal; manage the agents' signing keys.\n\nExample: dcx key export > goal.key",
    no_args_is_help=True,
)


@app.command("export")
def export(ctx: typer.Context, fmt: FormatOpt = OutputFormat.text) -> None:
    """Print the workspace key as 64 hex digits (keep it private).

    Example: dcx key export > goal.key
    """

    def call(g) -> Result:
        from dcx.state.keys import export_hex, load_key

        return Result("key export", {"key": export_hex(load_key(g.ws(), create=False))})

    def show(console, r: Result) -> None:
        sys.stdout.write(r.data["key"] + "\n")  # the bare key, for `> goal.key`

    run(ctx, fmt, call, show)


@app.command("import")
def import_(
    ctx: typer.Context,
    source: Annotated[str, typer.Argument(help="A file holding the hex key, or - for stdin.")],
    force: Annotated[
        bool, typer.Option("--force", help="Replace a different existing key.")
    ] = False,
    fmt: FormatOpt = OutputFormat.text,
) -> None:
    """Install a key exported from another host of the same goal.

    Example: dcx key import goal.key
    """

    def call(g) -> Result:
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

    run(
        ctx,
        fmt,
        call,
        lambda console, r: console.print(f"key {r.data['key_id']} installed", markup=False),
    )


@app.command("create")
def create(
    ctx: typer.Context,
    agent_id: AgentOpt = None,
    observed_at: ObservedAtOpt = None,
    wait: WaitOpt = 5.0,
    fmt: FormatOpt = OutputFormat.text,
) -> None:
    """Make the acting agent's signing key on this host, if it has none, and print its id.

    The private half stays in private/signing/ (0600); the public half is
    written to .decision-context/signers/AGENT/KEY-ID.pub, to commit with the
    goal. Every writing command makes it on first use too.

    Example: dcx key create --agent-id agent-a
    """

    def call(g) -> Result:
        from dcx.ops.key import create as create_key

        return create_key(ws=g.ws(), agent_id=agent_id, clock=g.clock(observed_at), wait=wait)

    def show(console, r: Result) -> None:
        made = "created" if r.data["created"] else "exists"
        console.print(
            f"signing key {r.data['key_id']} of {r.data['agent_id']} ({made}): {r.data['file']}",
            markup=False,
        )

    run(ctx, fmt, call, show)


@app.command("signers")
def signers(ctx: typer.Context, fmt: FormatOpt = OutputFormat.text) -> None:
    """List every agent's public signing keys in signers/, and which are revoked or on this host.

    Example: dcx key signers
    """

    def call(g) -> Result:
        from dcx.ops.key import list_signers

        return list_signers(ws=g.ws())

    def show(console, r: Result) -> None:
        from dcx.cli._render import styled

        if not r.data["signers"]:
            console.print(
                "no signers yet: every writing command makes its agent's key", markup=False
            )
        for row in r.data["signers"]:
            here = " · this host" if row["this_host"] else ""
            status = row["status"]
            if status == "revoked":
                rev = row["revocation"]
                status = f"revoked {rev['revoked_at']} ({rev['reason_code']}, by {rev['revoked_by_agent_id']})"
            console.print(
                styled(
                    "{}  [cyan]{}[/]  {}  {}{}",
                    row["agent_id"],
                    row["key_id"],
                    row["created_at"],
                    status,
                    here,
                )
            )
        for problem in r.data["problems"]:
            console.print(
                styled(
                    "[red]bad[/] {}: {}: {}", problem["file"], problem["code"], problem["problem"]
                )
            )

    run(ctx, fmt, call, show)


@app.command("revoke")
def revoke(
    ctx: typer.Context,
    key_id: Annotated[
        str, typer.Argument(metavar="KEY-ID", help="The key: its id or a unique prefix.")
    ],
    reason: Annotated[
        str,
        typer.Option(
            "--reason", help="Why, as a reason code; key_compromise withdraws all it signed."
        ),
    ],
    agent_id: AgentOpt = None,
    observed_at: ObservedAtOpt = None,
    wait: WaitOpt = 5.0,
    fmt: FormatOpt = OutputFormat.text,
) -> None:
    """Record a signed revocation of a signing key in signers/ (public, to commit).

    Signed by the key itself on the host that holds it, or else by the acting
    agent's key (another signer of the goal). With --reason key_compromise
    every statement the key signed stops counting; with any other reason only
    those observed after the revocation. A revoked key of this host is moved
    aside, and the next writing command makes a new one.

    Example: dcx key revoke signer-3f2a --reason host_retired
    """

    def call(g) -> Result:
        from dcx.ops.key import revoke as revoke_key

        return revoke_key(
            ws=g.ws(),
            key_id=key_id,
            reason_code=reason,
            agent_id=agent_id,
            clock=g.clock(observed_at),
            wait=wait,
        )

    def show(console, r: Result) -> None:
        doc = r.data["revocation"]
        verb = "revoked" if r.data["written"] else "was already revoked:"
        console.print(
            f"{verb} {doc['key_id']} of {doc['agent_id']} ({doc['reason_code']}) · {r.data['file']}",
            markup=False,
        )
        if r.data["retired_local_key"]:
            console.print(
                "  this host's key was moved aside; the next command makes a new one", markup=False
            )

    run(ctx, fmt, call, show)
