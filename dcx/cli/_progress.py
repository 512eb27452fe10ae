"""The progress bar of long work (scans, index builds): stderr, a terminal, text mode only."""

from __future__ import annotations

import time


class HashProgress:
    """A rich progress bar on stderr, one task per source while it is walked and hashed.

    Refreshed from the callback (at most ten times a second) rather than by
    rich's refresh thread: the walker forks stat workers only while no other
    thread runs.
    """

    def __init__(self, *, no_color: bool) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        from dcx.cli._render import console

        self.bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console(stderr=True, no_color=no_color),
            transient=True,
            auto_refresh=False,
        )
        self.shown = 0.0

    def __enter__(self):
        self.bar.start()

        def factory(source_id: str):
            task = self.bar.add_task(f"hashing {source_id}", total=None)
            self.bar.refresh()

            def update(done: int, total: int | None = None) -> None:
                # the total is known once the walk has listed everything
                self.bar.update(task, completed=done, total=total)
                now = time.monotonic()
                if now - self.shown >= 0.1:
                    self.shown = now
                    self.bar.refresh()

            return update

        return factory

    def __exit__(self, *exc: object) -> None:
        self.bar.stop()
