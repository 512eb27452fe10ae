"""`dcx mcp`: server start-up (spawn to the first tools/list answer) and tool-call round trips.

Run on demand: `.venv/bin/python bench/mcp_server.py [runs]`. Prints medians from one
run on a copy of the example goal, driven by the MCP SDK's own stdio client.
The machine is shared and noisy: compare with `python -c "import mcp.server"`
(printed too), which is most of the start-up: the SDK's import, not dcx's.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

REPO = Path(__file__).resolve().parents[1]
DCX = shutil.which("dcx", path=str(Path(sys.executable).parent)) or "dcx"


async def session(goal: Path, calls: int) -> tuple[float, dict[str, float]]:
    params = StdioServerParameters(
        command=DCX, args=["-C", str(goal), "mcp"], env={"DCX_NOW": "2026-11-29T18:00:00Z"}
    )
    start = time.perf_counter()
    async with Client(params) as client:
        await client.list_tools()
        ready = (time.perf_counter() - start) * 1000
        timings: dict[str, list[float]] = {"status": [], "log": [], "show": []}
        ref = None
        for _ in range(calls):
            for name, args in (("status", {}), ("log", {})):
                t = time.perf_counter()
                result = await client.call_tool(name, args)
                timings[name].append((time.perf_counter() - t) * 1000)
                if name == "log" and ref is None and result.structured_content["decisions"]:
                    ref = result.structured_content["decisions"][0]["chain"][0]["ref"]
            if ref:
                t = time.perf_counter()
                await client.call_tool("show", {"ref": ref})
                timings["show"].append((time.perf_counter() - t) * 1000)
    return ready, {k: statistics.median(v) for k, v in timings.items() if v}


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    with tempfile.TemporaryDirectory() as tmp:
        goal = Path(tmp) / "example"
        shutil.copytree(REPO / ".dcx-example", goal)
        (goal / ".decision-context" / "private").mkdir(exist_ok=True)
        env = {"DCX_NOW": "2026-11-29T18:00:00Z", "PATH": str(Path(DCX).parent)}
        subprocess.run(
            [DCX, "-C", str(goal), "prepare", "--decision-id", "bench", "--auto-rebase"],
            env=env,
            stdout=subprocess.DEVNULL,
            check=True,
        )
        imports = []
        for _ in range(runs):
            t = time.perf_counter()
            subprocess.run(
                [sys.executable, "-c", "import mcp.server.lowlevel, mcp.server.stdio"], check=True
            )
            imports.append((time.perf_counter() - t) * 1000)
        starts, calls = [], []
        for _ in range(runs):
            ready, per_call = anyio.run(session, goal, 10)
            starts.append(ready)
            calls.append(per_call)
    print(f"python -c 'import mcp.server'      {statistics.median(imports):8.1f} ms")
    print(f"dcx mcp: spawn to tools/list       {statistics.median(starts):8.1f} ms")
    for name in ("status", "log", "show"):
        print(
            f"tools/call {name:<8} round trip       {statistics.median(c[name] for c in calls):8.1f} ms"
        )


if __name__ == "__main__":
    main()
