from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from typing import Annotated

import typer

from dcx.cli._boundary import run
from dcx.cli._options import AgentOpt, FormatOpt, OutputFormat, WaitOpt
from dcx.core.result import Result


@contextlib.contextmanager
def _progress(fmt: str, no_color: bool) -> Iterator[Callable[[str, int], None] | None]:
    """A rich progress line on stderr, only on a terminal and never in json mode."""
    if getattr(fmt, "value", fmt) == "json" or not sys.stderr.isatty():
        yield None
        return
    from rich.progress import Progress, SpinnerColumn, TextColumn

    from dcx.cli._render import console

    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        console=console(stderr=True, no_color=no_color),
        transient=True,
    ) as bar:
        task = bar.add_task("indexing", total=None)

        def tick(source_id: str, done: int) -> None:
            bar.update(task, description=f"indexing {source_id}: {done} file(s) walked")

        yield tick


def command(
    ctx: typer.Context,
    rebuild: Annotated[
        bool,
        typer.Option("--rebuild", help="Start over: build a new index and replace the old one."),
    ] = False,
    wait: WaitOpt = 5.0,
    agent_id: AgentOpt = None,
    fmt: FormatOpt = OutputFormat.text,
) -> None:
    """Update the local bm25 recall index from the enabled sources.

    Walks each enabled source whose exact_read_policy is not never, and
    re-reads and re-chunks only the files whose revision changed (the stat
    cache answers for the rest). Recall never indexes: run this after sources
    change. The index stays in .decision-context/private/index/.

    Example: dcx index --rebuild
    """

    def call(g) -> Result:
        from dcx.ops.index import index

        with _progress(fmt, g.no_color) as progress:
            return index(
                clock=g.clock(),
                ws=g.ws(),
                agent_id=agent_id,
                rebuild=rebuild,
                wait=wait,
                progress=progress,
            )

    run(ctx, fmt, call, render)


def render(console, result: Result) -> None:
    data = result.data
    for row in data["sources"]:
        if row["status"] == "indexed":
            console.print(
                f"{row['source_id']}  {row['files']} file(s), {row['chunks']} chunk(s)"
                f" · {row['files_indexed']} re-indexed, {row['files_removed']} removed",
                markup=False,
            )
            skipped = row.get("skipped") or []
            if skipped:
                console.print(
                    f"  not searchable ({len(skipped)}{'+' if len(skipped) >= 50 else ''}):",
                    markup=False,
                )
                for item in skipped:
                    console.print(
                        f"    {item['path']}  ({item['why']})", markup=False, soft_wrap=True
                    )
        else:
            console.print(
                f"{row['source_id']}  {row['status']} ({row['reason_code']})", markup=False
            )
    verb = "built" if data["created"] else "updated"
    console.print(f"{data['index']} {verb} · {data['chunk_count']} chunk(s)", markup=False)
