"""``dcx mcp``: the session a server is fixed to (workspace and agent), checked before it serves."""

from __future__ import annotations

import importlib.util
from typing import NamedTuple

from dcx.core.errors import NoWorkspace
from dcx.core.public import check_token
from dcx.core.workspace import Workspace


class Session(NamedTuple):
    """What the server fixed at start: every tool call acts here, as this agent."""

    ws: Workspace
    agent_id: str | None


def open_session(*, ws: Workspace, agent_id: str | None) -> Session:
    """Fix the workspace and the acting agent; refuse before serving when the SDK is missing.

    The agent is checked as a token only: whether it is enabled is each tool's
    activation gate, exactly as for the command it mirrors.
    """
    if importlib.util.find_spec("mcp") is None:
        raise NoWorkspace(
            "the MCP Python SDK is not installed",
            code="mcp_unavailable",
            hint="pip install 'dcx[mcp]' (make install does)",
        )
    agent = check_token(agent_id, field="--agent-id") if agent_id is not None else None
    return Session(ws=ws, agent_id=agent)
