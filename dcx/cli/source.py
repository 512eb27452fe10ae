from __future__ import annotations

from dcx.cli._declare import Argument, Group, Option
from dcx.cli._globals import Globals
from dcx.cli._options import FORMAT, WAIT
from dcx.core.result import Result

group = Group(
    help="Add, remove and list the goal's authority sources (.decision-context/sources.toml).\n\n"
    "Example: dcx source add source:authority:docs --path docs --include '**/*.md'"
)


def render_add(page, result: Result) -> None:
    data = result.data
    listed = data.get("resources_listed")
    page.line(
        f"source {data['source_id']} added ({data['priority']}, {data['scan_mode']})"
        + (f" · {listed} resource(s) listed" if listed is not None else "")
    )
    page.line("next: dcx index (recall) · dcx prepare --decision-id D")


@group.command(
    "add",
    render=render_add,
    source_id=Argument(metavar="ID", help="The source id, e.g. source:authority:docs."),
    path=Option(
        "--path",
        metavar="PATH",
        help="A file or folder, relative to the goal root (with --git: inside the repository;"
        " with --mcp: the URI prefix of its resources).",
    ),
    include=Option(
        "--include",
        multiple=True,
        metavar="GLOB",
        help="Only these files (gitwildmatch; repeatable).",
    ),
    exclude=Option(
        "--exclude", multiple=True, metavar="GLOB", help="Never these files (repeatable)."
    ),
    priority=Option(
        "--priority",
        default="p0",
        metavar="p0|p1|p2",
        help="p0: its failure makes coverage partial.",
    ),
    kind=Option("--kind", metavar="KIND", help="document (repository with --git), artifact, …"),
    objectives=Option(
        "--objective",
        multiple=True,
        metavar="TOKEN",
        help="What the source is authority for (repeatable; default: the goal id).",
    ),
    on_demand=Option("--on-demand", type=bool, help="Scan only when named with prepare --source."),
    git=Option("--git", metavar="REPO", help="A git repository (bare or not): authority at --ref."),
    ref=Option("--ref", metavar="REF", help="With --git: a branch, tag or commit."),
    mcp=Option(
        "--mcp",
        type=bool,
        help="Another MCP server's resources: its command goes after -- (checked now).",
    ),
    command=Argument(
        metavar="[-- CMD ARGS…]", help="With --mcp: the server's command line.", variadic=True
    ),
    wait=WAIT,
    fmt=FORMAT,
)
def add(
    g: Globals,
    *,
    source_id: str,
    path: str | None,
    include: list[str] | None,
    exclude: list[str] | None,
    priority: str,
    kind: str | None,
    objectives: list[str] | None,
    on_demand: bool,
    git: str | None,
    ref: str | None,
    mcp: bool,
    command: list[str] | None,
    wait: float,
    fmt: str,
) -> Result:
    """Add a local-file source, a git source (--git REPO --ref REF) or an MCP server's resources
    (--mcp -- CMD ARGS…); checked before it is written.

    Example: dcx source add source:authority:docs --path docs --include '**/*.md'
    """
    from dcx.core.errors import InvalidInput
    from dcx.ops.config import source_add

    if command and not mcp:
        raise InvalidInput("CMD: a command line only with --mcp", field="CMD", code="usage_error")
    return source_add(
        ws=g.ws(),
        source_id=source_id,
        path=path,
        include=include or [],
        exclude=exclude or [],
        priority=priority,
        kind=kind,
        objectives=objectives or [],
        on_demand=on_demand,
        git=git,
        ref=ref,
        mcp=(command or []) if mcp else None,
        wait=wait,
    )


def render_rm(page, result: Result) -> None:
    page.line(f"source {result.data['source_id']} removed")


@group.command(
    "rm",
    render=render_rm,
    source_id=Argument(metavar="ID", help="The source id to remove."),
    wait=WAIT,
    fmt=FORMAT,
)
def rm(g: Globals, *, source_id: str, wait: float, fmt: str) -> Result:
    """Remove a source from the registry (its committed cursor is left alone).

    Example: dcx source rm source:authority:docs
    """
    from dcx.ops.config import source_rm

    return source_rm(ws=g.ws(), source_id=source_id, wait=wait)


def render_list(page, result: Result) -> None:
    from dcx.cli.sources import render

    render(page, result)


@group.command("list", render=render_list, fmt=FORMAT)
def list_(g: Globals, *, fmt: str) -> Result:
    """List the sources: the public manifest view (as `dcx sources`).

    Example: dcx source list --format json
    """
    from dcx.ops.sources import sources

    listed = sources(ws=g.ws(), write=False)
    return Result("source list", listed.data, status=listed.status, warnings=listed.warnings)
