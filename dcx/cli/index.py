from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator

from dcx.cli._declare import Option, declare
from dcx.cli._globals import Globals
from dcx.cli._options import AGENT, FORMAT, WAIT
from dcx.core.result import Result


@contextlib.contextmanager
def _progress(fmt: str, no_color: bool) -> Iterator[Callable[[str, int], None] | None]:
    """A rich progress line on stderr, only on a terminal and never in json mode."""
    if fmt == "json" or not sys.stderr.isatty():
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


def render(page, result: Result) -> None:
    data = result.data
    for row in data["sources"]:
        if row["status"] == "indexed":
            page.line(
                f"{row['source_id']}  {row['files']} file(s), {row['chunks']} chunk(s)"
                f" · {row['files_indexed']} re-indexed, {row['files_removed']} removed"
            )
            skipped = row.get("skipped") or []
            if skipped:
                page.line(f"  not searchable ({len(skipped)}{'+' if len(skipped) >= 50 else ''}):")
                for item in skipped:
                    page.line(f"    {item['path']}  ({item['why']})")
        else:
            page.line(f"{row['source_id']}  {row['status']} ({row['reason_code']})")
    verb = "built" if data["created"] else "updated"
    page.line(f"{data['index']} {verb} · {data['chunk_count']} chunk(s)")


@declare(
    render=render,
    rebuild=Option(
        "--rebuild", type=bool, help="Start over: build a new index and replace the old one."
    ),
    wait=WAIT,
    agent_id=AGENT,
    fmt=FORMAT,
)
def command(g: Globals, *, rebuild: bool, wait: float, agent_id: str | None, fmt: str) -> Result:
    """Update the local bm25 recall index from the enabled sources.

    Walks each enabled source whose exact_read_policy is not never, and
    re-reads and re-chunks only the files whose revision changed (the stat
    cache answers for the rest). Recall never indexes: run this after sources
    change. The index stays in .decision-context/private/index/.

    Example: dcx index --rebuild
    """
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
