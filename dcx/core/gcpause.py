"""Pausing Python's cyclic garbage collector around loops that make 100k small objects.

A first git scan makes a tuple per file several times over (tree entries,
scan items, read results); each 700 new container objects start a young
collection, and every tenth of those an older one, which walks everything
made so far: on 100k files the collector took as long as the loops it
interrupted. These objects hold no cycles, so nothing is lost by waiting:
the collector is switched back on (if it was on) when the block ends, and
collects then whatever cycles were made meanwhile. Memory is not bounded by
it anyway (reference counting frees everything acyclic at once).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic collection within the block; the collector's previous state after it."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
