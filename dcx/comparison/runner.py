"""One profile's run: a throwaway workspace, then one real ``dcx recall`` subprocess per query (SPEC §11).

The workspace lives in a temp folder removed afterwards. Its one source is
the frozen corpus (an absolute locator with the plan's include patterns); its
profile is the plan's profile file, unchanged except that ``max_results``
defaults to the largest k when the profile leaves it out (a profile that sets
a smaller one is compared at that limit: the profile is what is compared).
A bm25 profile gets ``dcx index``; a plan entry with ``extension`` gets
``dcx ext install`` of that manifest. Each query runs as
``python -m dcx -C <ws> recall --query-file - …`` with the query on stdin (never
in argv), so the caller's wall time is the real command's. The recalled
content stays in this process: it is matched to the corpus and dropped.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

from dcx.comparison.corpus import Matcher
from dcx.comparison.plan import Plan, ProfileEntry, Query
from dcx.core.clock import Clock
from dcx.state.profile import Profile

SOURCE_ID = "source:compare:corpus"
RECALL_TIMEOUT_MARGIN = 30  # seconds beyond the profile's own timeout before the caller gives up
_DROPPED_ENV = ("DCX_WORKSPACE", "DCX_FORMAT", "DCX_AGENT_ID")


class QueryRun(NamedTuple):
    query_id: str
    status: str  # completed | unavailable
    reason_code: str | None
    ranking: tuple[str, ...]  # matched docids, first occurrences, rank order
    items: int
    unmatched: int
    spanning: int
    latency_ms: int | None  # the receipt's
    wall_ms: int  # the caller's, around the whole subprocess
    provider_version: str | None


class SetupError(Exception):
    """A step of the throwaway workspace failed: (plan field, problem)."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(problem)
        self.field = field
        self.problem = problem


def _env(entry: ProfileEntry) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _DROPPED_ENV}
    if entry.path_prepend:
        env["PATH"] = os.pathsep.join([*(str(p) for p in entry.path_prepend), env.get("PATH", "")])
    return env


def _dcx(
    root: Path,
    args: list[str],
    env: dict[str, str],
    *,
    stdin: bytes | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "dcx", "-C", str(root), *args, "--format", "json"],
        input=stdin if stdin is not None else b"",
        capture_output=True,
        env=env,
        timeout=timeout,
        check=False,
    )


def _error_of(proc: subprocess.CompletedProcess[bytes]) -> str:
    try:
        return str(json.loads(proc.stdout)["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return f"exit {proc.returncode}"


def _profile_text(entry: ProfileEntry, max_k: int) -> str:
    import tomlkit

    doc = tomlkit.parse(entry.profile.read_text(encoding="utf-8"))
    table = doc.get("context_provider")
    if table is not None and "max_results" not in table:
        table["max_results"] = max_k
    return tomlkit.dumps(doc)


def _sources_text(plan: Plan) -> str:
    import tomlkit

    doc = tomlkit.document()
    doc["schema_version"] = "decision_source_registry_v0"
    binding = tomlkit.table()
    binding.update({"provider_id": "files", "adapter": "local-file"})
    doc["bindings"] = tomlkit.aot()
    doc["bindings"].append(binding)
    source = tomlkit.table()
    source.update(
        {
            "source_id": SOURCE_ID,
            "provider_id": "files",
            "source_kind": "document",
            "priority": "p0",
            "evidence_level": "s1",
            "objectives": ["comparison"],
            "scan_mode": "snapshot",
            "exact_read_policy": "always",
            "freshness_seconds": 86400,
            "locator": {"path": str(plan.corpus.resolve()), "include": list(plan.include)},
        }
    )
    doc["sources"] = tomlkit.aot()
    doc["sources"].append(source)
    return tomlkit.dumps(doc)


@contextmanager
def throwaway(plan: Plan, entry: ProfileEntry, profile: Profile) -> Iterator[Path]:
    """The goal root of a fresh workspace for this profile, removed on exit."""
    tmp = Path(tempfile.mkdtemp(prefix="dcx-compare-"))
    try:
        root = tmp / "goal"
        root.mkdir()
        env = _env(entry)
        agent = profile.enabled_agents[0]
        proc = _dcx(root, ["init", "--goal-id", profile.goal_id, "--agent-id", agent], env)
        if proc.returncode:
            raise SetupError(f"{entry.field}.profile", f"dcx init failed: {_error_of(proc)}")
        dc = root / ".decision-context"
        (dc / "profile.toml").write_text(_profile_text(entry, max(plan.k)), encoding="utf-8")
        (dc / "sources.toml").write_text(_sources_text(plan), encoding="utf-8")
        if profile.context_provider.provider == "bm25":
            proc = _dcx(root, ["index"], env, timeout=600)
            if proc.returncode:
                raise SetupError(f"{entry.field}.profile", f"dcx index failed: {_error_of(proc)}")
        if entry.extension is not None:
            proc = _dcx(root, ["ext", "install", str(entry.extension)], env)
            # exit 1 is a failed doctor: the extension stays installed and every recall
            # says so (extension_doctor_not_ready), which is what a comparison should show
            if proc.returncode not in (0, 1):
                raise SetupError(
                    f"{entry.field}.extension", f"dcx ext install failed: {_error_of(proc)}"
                )
        yield root
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def recall_once(
    root: Path,
    entry: ProfileEntry,
    profile: Profile,
    query: Query,
    *,
    max_results: int,
    matcher: Matcher,
    clock: Clock,
    env: dict[str, str],
) -> QueryRun:
    cp = profile.context_provider
    args = [
        "recall",
        "--scope",
        cp.scope_ref or "",
        "--query-file",
        "-",
        "--query-summary",
        query.query_summary,
        "--max-results",
        str(max_results),
        "--agent-id",
        profile.enabled_agents[0],
    ]
    started = clock.monotonic()
    try:
        proc = _dcx(
            root,
            args,
            env,
            stdin=query.query.encode(),
            timeout=cp.timeout_seconds + RECALL_TIMEOUT_MARGIN,
        )
    except subprocess.TimeoutExpired:
        return QueryRun(
            query.query_id,
            "unavailable",
            "recall_command_timeout",
            (),
            0,
            0,
            0,
            None,
            clock.elapsed_ms(started),
            None,
        )
    wall = clock.elapsed_ms(started)
    try:
        data: dict[str, Any] = json.loads(proc.stdout)["data"]
        receipt = data["retrieval"]
    except (ValueError, KeyError, TypeError):
        return QueryRun(
            query.query_id, "unavailable", "recall_command_failed", (), 0, 0, 0, None, wall, None
        )
    ranking: list[str] = []
    unmatched = spanning = 0
    for row in data["results"]:
        found = matcher.match(row["content"])
        if found.docid is None:
            unmatched += 1
            continue
        spanning += found.spanning
        if found.docid not in ranking:
            ranking.append(found.docid)
    return QueryRun(
        query_id=query.query_id,
        status=data["status"],
        reason_code=data["reason_code"],
        ranking=tuple(ranking),
        items=len(data["results"]),
        unmatched=unmatched,
        spanning=spanning,
        latency_ms=receipt["telemetry"]["latency_ms"],
        wall_ms=wall,
        provider_version=receipt.get("provider_version"),
    )


def run_profile(
    plan: Plan,
    entry: ProfileEntry,
    profile: Profile,
    queries: tuple[Query, ...],
    *,
    matcher: Matcher,
    clock: Clock,
    progress: Callable[[str, int, int], None] | None = None,
) -> tuple[QueryRun, ...]:
    max_results = effective_max_results(plan, entry)
    env = _env(entry)
    out: list[QueryRun] = []
    with throwaway(plan, entry, profile) as root:
        for i, query in enumerate(queries, start=1):
            out.append(
                recall_once(
                    root,
                    entry,
                    profile,
                    query,
                    max_results=max_results,
                    matcher=matcher,
                    clock=clock,
                    env=env,
                )
            )
            if progress is not None:
                progress(entry.name, i, len(queries))
    return tuple(out)


def _explicit_max_results(entry: ProfileEntry) -> int | None:
    import tomllib

    data = tomllib.loads(entry.profile.read_text(encoding="utf-8"))
    value = (data.get("context_provider") or {}).get("max_results")
    return value if isinstance(value, int) else None


def effective_max_results(plan: Plan, entry: ProfileEntry) -> int:
    explicit = _explicit_max_results(entry)
    return min(max(plan.k), explicit) if explicit is not None else max(plan.k)
