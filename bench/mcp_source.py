"""A no-change scan of an mcp source against a bare SDK client doing the same calls (SPEC §15.1).

Run on demand: `.venv/bin/python bench/mcp_source.py [--resources 1000] [--page-size 100]
[--rounds 5]`.

The server is the tests' small SDK server (`tests/support/mcp_server.py`) over a folder of N
small notes. Two shapes, each timed both ways, interleaved, median of `--rounds` (the machine
is shared and noisy: compare the ratios of one run):

- **hashed**: the server has no version annotations, so a no-change scan lists every page and
  reads every resource once to hash it;
- **versioned** (`--versions`): every resource carries `_meta.version`, so the scan only lists.

"dcx" is `scan_source` in-process with the committed cursor (a fresh `Providers` each round:
its relay, the server start, `initialize`, the listing, the reads, blake3, the map
comparison). "bare" is the MCP SDK's `stdio_client` + `ClientSession` starting the same server
command directly and making the same `initialize`, `resources/list` pages and `resources/read`
calls, hashing nothing — one read at a time, and again with as many reads in flight as dcx
keeps (`WINDOW`), so the relay's and dcx's own costs show apart from concurrency. Both pay the server's start (a Python process importing the SDK). The
SDK's client import is paid once, before the first round, by both. Goal: dcx <= 1.5x bare.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

SERVER = REPO / "tests" / "support" / "mcp_server.py"
PREFIX = "notes://docs/"


def build_notes(folder: Path, count: int) -> None:
    for i in range(count):
        sub = folder / f"d{i // 100:02d}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"n{i:05d}.md").write_text(f"# Note {i}\n\nThe catalog TTL rule {i} holds.\n")


def workspace(root: Path, argv: list[str]) -> None:
    import json

    from dcx.core.workspace import Workspace  # noqa: F401 (dcx importable from here)
    from dcx.ops.init import init

    root.mkdir()
    init(root=root, goal_id="bench", agent_id="agent-a")
    dc = root / ".decision-context"
    (dc / "profile.toml").write_text(
        'schema_version = "decision_context_profile_v0"\ngoal_id = "bench"\nenabled = true\n'
        'enabled_agents = ["agent-a"]\n[bounds]\ntimeout_seconds = 600\n'
    )
    (dc / "sources.toml").write_text(
        'schema_version = "decision_source_registry_v0"\n'
        '[[bindings]]\nprovider_id = "servers"\nadapter = "mcp"\n'
        '[[sources]]\nsource_id = "notes"\nprovider_id = "servers"\nsource_kind = "document"\n'
        'priority = "p0"\nevidence_level = "s1"\nobjectives = ["bench"]\n'
        'scan_mode = "incremental"\nexact_read_policy = "always"\nfreshness_seconds = 86400\n'
        "max_changes = 10000\n"
        f"locator = {{ command = {json.dumps(argv)}, uri_prefix = {json.dumps(PREFIX)} }}\n"
    )


def dcx_scan(root: Path, cursor: str | None) -> tuple[float, object]:
    from dcx.core.clock import FixedClock
    from dcx.core.workspace import Workspace
    from dcx.sources.plane import scan_source
    from dcx.sources.registry import Providers
    from dcx.state.profile import load_profile, load_registry

    ws = Workspace(root)
    profile, registry = load_profile(ws), load_registry(ws)
    providers = Providers(ws, profile, registry)
    started = time.perf_counter()
    scan = scan_source(
        providers,
        registry.source("notes"),
        cursor_before=cursor,
        clock=FixedClock("2026-11-29T18:00:00Z"),
    )
    return time.perf_counter() - started, scan


def bare(argv: list[str], read: bool, window: int = 1) -> tuple[float, int]:
    import anyio
    import mcp_types as types
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=argv[0], args=argv[1:])

    async def main() -> int:
        calls = 0
        with open("/dev/null", "w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (r, w),
                ClientSession(r, w) as session,
            ):
                await session.initialize()
                uris, cursor = [], None
                while True:
                    page = await session.list_resources(
                        params=types.PaginatedRequestParams(cursor=cursor) if cursor else None
                    )
                    calls += 1
                    uris += [str(x.uri) for x in page.resources if str(x.uri).startswith(PREFIX)]
                    cursor = page.next_cursor
                    if not cursor:
                        break
                if read:
                    for start in range(0, len(uris), window):
                        async with anyio.create_task_group() as group:
                            for uri in uris[start : start + window]:
                                group.start_soon(session.read_resource, uri)
                        calls += len(uris[start : start + window])
        return calls

    started = time.perf_counter()
    calls = anyio.run(main)
    return time.perf_counter() - started, calls


def main() -> None:
    from dcx.sources.mcp_source import WINDOW  # reads dcx keeps in flight: a second yardstick

    parser = argparse.ArgumentParser()
    parser.add_argument("--resources", type=int, default=1000)
    parser.add_argument("--page-size", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    import mcp.client.stdio  # noqa: F401 (the client import, paid once by both sides)

    with tempfile.TemporaryDirectory(prefix="dcx-bench-mcp-") as tmp:
        notes = Path(tmp) / "notes"
        build_notes(notes, args.resources)
        print(f"{args.resources} resources, pages of {args.page_size}, median of {args.rounds}")
        for shape, flags in (("hashed", []), ("versioned", ["--versions"])):
            argv = [
                sys.executable,
                "-P",
                str(SERVER),
                str(notes),
                "--page-size",
                str(args.page_size),
            ]
            argv += flags
            root = Path(tmp) / f"goal-{shape}"
            workspace(root, argv)
            first_s, first = dcx_scan(root, None)
            assert first.status == "completed" and len(first.items) == args.resources, first
            cursor = first.cursor_after
            dcx_times, bare_times, window_times = [], [], []
            for _ in range(args.rounds):
                took, scan = dcx_scan(root, cursor)
                assert scan.status == "no_change", (scan.status, scan.reason_code)
                dcx_times.append(took)
                took, calls = bare(argv, read=not flags)
                bare_times.append(took)
                if not flags:
                    window_times.append(bare(argv, read=True, window=WINDOW)[0])
            d, b = statistics.median(dcx_times), statistics.median(bare_times)
            line = (
                f"  {shape:9s} first scan {first_s * 1000:6.0f} ms | no-change scan: dcx "
                f"{d * 1000:6.0f} ms, bare SDK {b * 1000:6.0f} ms ({calls} calls) -> "
                f"{d / b:.2f}x (goal <= 1.5x)"
            )
            if window_times:
                w = statistics.median(window_times)
                line += f"; bare with {WINDOW} reads in flight {w * 1000:6.0f} ms -> {d / w:.2f}x"
            print(line)


if __name__ == "__main__":
    main()
