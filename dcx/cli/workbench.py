from __future__ import annotations

import signal
import sys
from typing import Annotated, Any

import typer

from dcx.cli._boundary import run
from dcx.cli._options import AgentOpt, FormatOpt, OutputFormat
from dcx.core.errors import ExitCode
from dcx.core.result import Result


def command(
    ctx: typer.Context,
    port: Annotated[
        int,
        typer.Option(
            "--port",
            min=0,
            max=65535,
            metavar="PORT",
            help="Port on 127.0.0.1 (default 0: a free one).",
        ),
    ] = 0,
    open_browser: Annotated[
        bool, typer.Option("--open", help="Open the page in the default browser.")
    ] = False,
    agent_id: AgentOpt = None,
    fmt: FormatOpt = OutputFormat.text,
) -> None:
    """Serve the recall workbench: a local page to try a profile and a query.

    Binds 127.0.0.1 only and prints the page's address with a token made
    for this run. The page edits a profile of its own (never profile.toml),
    shows the activation it would have, and recalls through the same path as
    `dcx recall`, for the agent fixed here. Nothing is written to disk.
    Serves until Ctrl-C (exit 130). With --format json the address is one
    JSON document printed at start.

    Example: dcx workbench --open
    """
    holder: dict[str, Any] = {}

    def call(g) -> Result:
        from dcx.core.clock import clock_from_env
        from dcx.core.errors import InvalidInput
        from dcx.ops.workbench import start
        from dcx.web.server import WorkbenchServer

        session = start(ws=g.ws(), agent_id=agent_id)
        try:
            server = WorkbenchServer(session, port=port, clock=clock_from_env)
        except OSError as exc:
            raise InvalidInput(
                f"--port {port}: cannot listen there ({exc.strerror or 'in use'})",
                field="--port",
                code="port_unavailable",
            ) from None
        holder["server"] = server
        return Result(
            "workbench",
            {
                "url": server.url,
                "port": server.port,
                "goal_id": session.ws.goal_id,
                "agent_id": session.agent_id,
            },
        )

    run(ctx, fmt, call, render)
    sys.stdout.flush()
    _serve(holder["server"], open_browser=open_browser)


def _serve(server: Any, *, open_browser: bool) -> None:
    def stop(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    if open_browser:
        import webbrowser

        webbrowser.open(server.url)
    try:
        server.serve_forever(poll_interval=0.25)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    sys.stderr.write("workbench stopped; nothing was written\n")
    raise typer.Exit(int(ExitCode.INTERRUPTED))


def render(console, result: Result) -> None:
    data = result.data
    console.print(
        f"dcx workbench for goal {data['goal_id']}, agent {data['agent_id']} (Ctrl-C stops it)",
        markup=False,
    )
    console.print(data["url"], markup=False, soft_wrap=True)
