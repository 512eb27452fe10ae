"""``dcx mcp``: serve this workspace to an agent host over MCP (stdio)."""

from __future__ import annotations

from dcx.cli._declare import declare
from dcx.cli._globals import Globals
from dcx.cli._options import AGENT, FORMAT
from dcx.core.errors import DcxError


@declare(own_output=True, agent_id=AGENT, fmt=FORMAT)
def command(g: Globals, *, agent_id: str | None, fmt: str) -> int:
    """Serve this goal to an agent host over the Model Context Protocol, on stdio.

    One tool per command (status, scan, index, prepare, recall, propose,
    outcome, writeback, commit, feedback, log, show, verify, audit) and the
    resources dcx://decisions/<id> and dcx://packets/<ref>. The workspace
    (-C) and the acting agent are fixed when the server starts; no tool
    argument can name another workspace or a file outside the goal root.
    A start-up error is printed as --format says and exits as the CLI does;
    after that stdout belongs to the protocol, and the server runs until the
    host closes its stdin. Needs the optional dependency group mcp
    (pip install 'dcx[mcp]'; make install does).

    Example: dcx -C ~/goals/catalog mcp --agent-id agent-a
    """
    from dcx.cli._render import emit_error
    from dcx.ops.mcp import open_session

    try:
        session = open_session(ws=g.ws(), agent_id=agent_id)
    except DcxError as exc:
        emit_error(exc, fmt)
        return int(exc.exit_code)
    from dcx.mcp.server import serve

    try:
        serve(session)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # the SDK failed: one line, the stack (no messages) in private/log/
        from dcx.core.errors import InternalError
        from dcx.mcp.answer import internal

        error = internal(session.ws, exc).structured
        emit_error(InternalError(error["message"], hint=error["hint"]), fmt)
        return 5
    return 0
