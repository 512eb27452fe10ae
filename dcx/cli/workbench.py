from __future__ import annotations

import signal
import sys
from typing import Any

from dcx.cli._declare import Option, declare
from dcx.cli._globals import Globals
from dcx.cli._options import AGENT, FORMAT
from dcx.core.errors import ExitCode
from dcx.core.result import Result


def _serve(server: Any, *, open_browser: bool) -> int:
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
    return int(ExitCode.INTERRUPTED)


def render(page, result: Result) -> None:
    data = result.data
    page.line(
        f"dcx workbench for goal {data['goal_id']}, agent {data['agent_id']} (Ctrl-C stops it)"
    )
    page.line(data["url"])


@declare(
    own_output=True,
    port=Option(
        "--port",
        type=int,
        default=0,
        min=0,
        max=65535,
        metavar="PORT",
        help="Port on 127.0.0.1 (default 0: a free one).",
    ),
    open_browser=Option("--open", type=bool, help="Open the page in the default browser."),
    agent_id=AGENT,
    fmt=FORMAT,
)
def command(g: Globals, *, port: int, open_browser: bool, agent_id: str | None, fmt: str) -> int:
    """Serve the recall workbench: a local page to try a profile and a query.

    Binds 127.0.0.1 only and prints the page's address with a token made
    for this run. The page edits a profile of its own (never profile.toml),
    shows the activation it would have, and recalls through the same path as
    `dcx recall`, for the agent fixed here. Nothing is written to disk.
    Serves until Ctrl-C (exit 130). With --format json the address is one
    JSON document printed at start.

    Example: dcx workbench --open
    """
    from dcx.cli._answer import answer

    holder: dict[str, Any] = {}

    def start(g: Globals) -> Result:
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

    code = answer(g, fmt, start, render)
    if code:
        return code
    sys.stdout.flush()
    return _serve(holder["server"], open_browser=open_browser)
