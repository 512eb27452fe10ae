"""Figures the reliability and fuzz tests measured, kept for ``bench/reliability.py``.

Each test records what it counted (runs, kills, torn files, cases, canaries
found, overruns, ...) under ``<section>.json[part]`` in ``.reliability/`` at
the repository root (or ``$DCX_RELIABILITY_FIGURES``), *before* it asserts,
so a failing run's figures are printed too. The last run wins.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from tests.support.workspace import REPO

FIGURES = Path(os.environ.get("DCX_RELIABILITY_FIGURES") or REPO / ".reliability")


def record(section: str, part: str, figures: dict[str, Any]) -> None:
    """Keep ``figures`` as ``<section>.json[part]``: read, modify and replace under a lock (the
    test workers of one run write the same sections at once)."""
    import portalocker

    FIGURES.mkdir(parents=True, exist_ok=True)
    path = FIGURES / f"{section}.json"
    with portalocker.Lock(str(FIGURES / f".{section}.lock"), timeout=120):
        try:
            data = json.loads(path.read_text())
        except (FileNotFoundError, ValueError):
            data = {}
        data[part] = {**figures, "recorded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
        os.replace(tmp, path)
