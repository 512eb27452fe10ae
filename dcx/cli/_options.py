"""Shared options, defined once as Annotated aliases (SPEC §3.6)."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

from dcx.cli._globals import Globals


class OutputFormat(str, Enum):  # noqa: UP042 — typer needs a str-valued Enum for choices
    text = "text"
    json = "json"


FormatOpt = Annotated[
    OutputFormat,
    typer.Option(
        "--format",
        envvar="DCX_FORMAT",
        case_sensitive=False,
        help="text for people (rich), json for machines: exactly one JSON document on stdout.",
    ),
]
AgentOpt = Annotated[
    str | None,
    typer.Option(
        "--agent-id",
        envvar="DCX_AGENT_ID",
        help="The agent acting (default: the profile's only enabled agent).",
    ),
]
ObservedAtOpt = Annotated[
    str | None,
    typer.Option(
        "--observed-at", help="RFC 3339 time to stamp instead of now (DCX_NOW fixes the clock too)."
    ),
]
WaitOpt = Annotated[
    float,
    typer.Option(
        "--wait", min=0, help="Seconds to wait for a busy lock before giving up (exit 4)."
    ),
]
DecisionOpt = Annotated[
    str,
    typer.Option("--decision-id", help="The decision: [a-z0-9][a-z0-9._-]{0,127}."),
]


def globals_of(ctx: typer.Context) -> Globals:
    root = ctx.find_root()
    if not isinstance(root.obj, Globals):
        root.obj = Globals()
    return root.obj
