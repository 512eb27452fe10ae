"""What a test run builds once, for every test worker (pytest-xdist) at once.

``once(tmp_path_factory, name, build)`` builds ``name`` into the run's shared temp folder
(the base temp of the run, above each worker's own) under a file lock: the first worker
to ask builds it, the others wait and reuse it. ``build(target)`` makes the folder
``target`` and returns a JSON value (refs, say), kept beside it. Tests never write into
what ``once`` returns: they copy it (``shutil.copytree``) or only read it.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

BUILD_TIMEOUT = 1800  # seconds a worker waits for another one's build (a cycle: seconds)


def run_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The temp folder of the whole run: above each xdist worker's own, else the base temp."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def once(
    tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], Any]
) -> tuple[Path, Any]:
    """``(folder, value)`` of ``build(folder)``, built once per test run under a lock."""
    import portalocker

    base = run_base(tmp_path_factory)
    target = base / name
    done = base / f"{name}.built.json"
    with portalocker.Lock(str(base / f"{name}.lock"), timeout=BUILD_TIMEOUT):
        if not done.exists():
            shutil.rmtree(target, ignore_errors=True)  # a build that failed half-way
            value = build(target)
            done.write_text(json.dumps({"value": value}))
    return target, json.loads(done.read_text())["value"]
