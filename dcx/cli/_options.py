"""Options many commands share, and the global options, each declared once (SPEC §3.6)."""

from __future__ import annotations

from dcx.cli._declare import NO_COLOR, Option

FORMAT = Option(
    "--format",
    choices=("text", "json"),
    case_sensitive=False,
    default="text",
    envvar="DCX_FORMAT",
    help="text for people (rich), json for machines: exactly one JSON document on stdout.",
)
AGENT = Option(
    "--agent-id",
    envvar="DCX_AGENT_ID",
    metavar="AGENT_ID",
    help="The agent acting (default: the profile's only enabled agent).",
)
OBSERVED_AT = Option(
    "--observed-at",
    metavar="TIME",
    help="RFC 3339 time to stamp instead of now (DCX_NOW fixes the clock too).",
)
WAIT = Option(
    "--wait",
    type=float,
    default=5.0,
    min=0,
    metavar="SECONDS",
    help="Seconds to wait for a busy lock before giving up (exit 4).",
)
DECISION = Option(
    "--decision-id",
    required=True,
    metavar="ID",
    help="The decision: [a-z0-9][a-z0-9._-]{0,127}.",
)

# propose and outcome: print the input's skeleton instead (then --decision-id and --from may go)
TEMPLATE = Option(
    "--template",
    type=bool,
    help="Print a commented skeleton of the input (it validates) and exit.",
)

# Given before the subcommand, as in git. ``--version`` prints and exits before any command.
GLOBALS = {
    "workspace": Option(
        "-C",
        "--workspace",
        metavar="PATH",
        help="Run as if dcx started in this goal root (env DCX_WORKSPACE).",
    ),
    "no_color": NO_COLOR,
    "verbose": Option("-v", "--verbose", count=True, help="Show tracebacks of internal errors."),
    "version": Option("--version", type=bool, help="Print the version and exit."),
    # SPEC §3.5 v4; dcx.core.fsutil reads DCX_ALLOW_LINKED_WORKSPACE=1 itself
    "allow_linked_workspace": Option(
        "--allow-linked-workspace",
        type=bool,
        help="Let .decision-context/ or its private/ be a link to another disk "
        "(env DCX_ALLOW_LINKED_WORKSPACE=1); no other link is ever followed.",
    ),
}
