from __future__ import annotations

from typing import Annotated

import typer

from dcx.cli._boundary import run
from dcx.cli._options import FormatOpt, OutputFormat, WaitOpt
from dcx.core.result import Result

app = typer.Typer(
    help="Add, remove and list the goal's authority sources (.decision-context/sources.toml).\n\n"
    "Example: dcx source add source:authority:docs --path docs --include '**/*.md'",
    no_args_is_help=True,
)


@app.command("add")
def add(
    ctx: typer.Context,
    source_id: Annotated[
        str, typer.Argument(metavar="ID", help="The source id, e.g. source:authority:docs.")
    ],
    path: Annotated[
        str | None,
        typer.Option(
            "--path",
            metavar="PATH",
            help="A file or folder, relative to the goal root (with --git: inside the repository;"
            " with --mcp: the URI prefix of its resources).",
        ),
    ] = None,
    include: Annotated[
        list[str] | None,
        typer.Option(
            "--include", metavar="GLOB", help="Only these files (gitwildmatch; repeatable)."
        ),
    ] = None,
    exclude: Annotated[
        list[str] | None,
        typer.Option("--exclude", metavar="GLOB", help="Never these files (repeatable)."),
    ] = None,
    priority: Annotated[
        str,
        typer.Option(
            "--priority", metavar="p0|p1|p2", help="p0: its failure makes coverage partial."
        ),
    ] = "p0",
    kind: Annotated[
        str | None,
        typer.Option(
            "--kind", metavar="KIND", help="document (repository with --git), artifact, …"
        ),
    ] = None,
    objectives: Annotated[
        list[str] | None,
        typer.Option(
            "--objective",
            metavar="TOKEN",
            help="What the source is authority for (repeatable; default: the goal id).",
        ),
    ] = None,
    on_demand: Annotated[
        bool, typer.Option("--on-demand", help="Scan only when named with prepare --source.")
    ] = False,
    git: Annotated[
        str | None,
        typer.Option(
            "--git", metavar="REPO", help="A git repository (bare or not): authority at --ref."
        ),
    ] = None,
    ref: Annotated[
        str | None,
        typer.Option("--ref", metavar="REF", help="With --git: a branch, tag or commit."),
    ] = None,
    mcp: Annotated[
        bool,
        typer.Option(
            "--mcp", help="Another MCP server's resources: its command goes after -- (checked now)."
        ),
    ] = False,
    command: Annotated[
        list[str] | None,
        typer.Argument(metavar="[-- CMD ARGS…]", help="With --mcp: the server's command line."),
    ] = None,
    wait: WaitOpt = 5.0,
    fmt: FormatOpt = OutputFormat.text,
) -> None:
    """Add a local-file source, a git source (--git REPO --ref REF) or an MCP server's resources
    (--mcp -- CMD ARGS…); checked before it is written.

    Example: dcx source add source:authority:docs --path docs --include '**/*.md'
    """

    def call(g) -> Result:
        from dcx.core.errors import InvalidInput
        from dcx.ops.config import source_add

        if command and not mcp:
            raise InvalidInput(
                "CMD: a command line only with --mcp", field="CMD", code="usage_error"
            )
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

    def render(console, result: Result) -> None:
        data = result.data
        console.print(
            f"source {data['source_id']} added ({data['priority']}, {data['scan_mode']})"
            + (
                f" · {data['resources_listed']} resource(s) listed"
                if "resources_listed" in data
                else ""
            ),
            markup=False,
        )
        console.print("next: dcx index (recall) · dcx prepare --decision-id D", markup=False)

    run(ctx, fmt, call, render)


@app.command("rm")
def rm(
    ctx: typer.Context,
    source_id: Annotated[str, typer.Argument(metavar="ID", help="The source id to remove.")],
    wait: WaitOpt = 5.0,
    fmt: FormatOpt = OutputFormat.text,
) -> None:
    """Remove a source from the registry (its committed cursor is left alone).

    Example: dcx source rm source:authority:docs
    """

    def call(g) -> Result:
        from dcx.ops.config import source_rm

        return source_rm(ws=g.ws(), source_id=source_id, wait=wait)

    run(
        ctx,
        fmt,
        call,
        lambda console, r: console.print(f"source {r.data['source_id']} removed", markup=False),
    )


@app.command("list")
def list_(ctx: typer.Context, fmt: FormatOpt = OutputFormat.text) -> None:
    """List the sources: the public manifest view (as `dcx sources`).

    Example: dcx source list --format json
    """

    def call(g) -> Result:
        from dcx.ops.sources import sources

        listed = sources(ws=g.ws(), write=False)
        return Result("source list", listed.data, status=listed.status, warnings=listed.warnings)

    from dcx.cli.sources import render

    run(ctx, fmt, call, render)
