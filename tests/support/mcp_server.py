"""A small real MCP server (the SDK's own low-level server, stdio) whose resources are files.

Run as ``python tests/support/mcp_server.py DIR [options]`` (by path: it imports nothing of
dcx or of the tests): every file under ``DIR`` is a resource ``notes://docs/<relative path>``
(text when it decodes as UTF-8, a base64 blob otherwise), so a test adds, changes and removes
resources between scans by writing files.
The files are read on every request: nothing is cached in the server.

Options (the failure modes the source adapter must survive, SPEC §15.1):

- ``--page-size N``: ``resources/list`` pages of N resources (cursor = the next index);
- ``--versions``: each resource and each read carries ``_meta.version`` (sha256 of the
  bytes: the server's own revision, independent of dcx's blake3);
- ``--slow SECONDS``: every list and read answers that much later (with ``--slow-after N``,
  only those after the N-th request);
- ``--crash-after N``: the process exits (status 3) on the N-th list or read request;
- ``--malformed``: ``resources/list`` is answered by a line that is not JSON;
- ``--hang-after-list``: the first read never answers;
- ``--noisy``: writes a line of junk on stderr per request (stderr is never read back);
- ``--huge N``: one more resource, ``huge.md``, of N bytes of text;
- ``--pidfile FILE``: writes its pid there; ``--spawn-child FILE``: starts a long ``sleep``
  grandchild and writes its pid there (both must be gone when dcx is done);
- ``--env-dump FILE``: writes the names of its environment variables there, one a line;
- ``--control FILE``: read on every request: ``crash`` or ``malformed`` there act as the flags
  above (so a test breaks and mends the server without touching the registry).

``--prefix`` changes the URI prefix (default ``notes://docs/``).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import os
import sys
from pathlib import Path
from typing import Any


def _files(root: Path) -> list[str]:
    out = []
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            out.append(os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/"))
    return sorted(out)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("root")
    parser.add_argument("--prefix", default="notes://docs/")
    parser.add_argument("--page-size", type=int, default=0)
    parser.add_argument("--versions", action="store_true")
    parser.add_argument("--slow", type=float, default=0.0)
    parser.add_argument("--slow-after", type=int, default=0)
    parser.add_argument("--crash-after", type=int, default=0)
    parser.add_argument("--malformed", action="store_true")
    parser.add_argument("--hang-after-list", action="store_true")
    parser.add_argument("--noisy", action="store_true")
    parser.add_argument("--huge", type=int, default=0)
    parser.add_argument("--pidfile")
    parser.add_argument("--spawn-child")
    parser.add_argument("--env-dump")
    parser.add_argument("--control")
    args = parser.parse_args(argv)
    if args.pidfile:
        Path(args.pidfile).write_text(str(os.getpid()))
    if args.spawn_child:
        import subprocess

        child = subprocess.Popen(["sleep", "300"])
        Path(args.spawn_child).write_text(str(child.pid))
    if args.env_dump:
        Path(args.env_dump).write_text("".join(f"{name}\n" for name in sorted(os.environ)))

    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server
    from mcp.shared.exceptions import MCPError

    root = Path(args.root)
    requests = 0
    wire = os.dup(1)  # the SDK's stdio server points sys.stdout away from the wire; this does not

    def control() -> str:
        try:
            return Path(args.control).read_text().strip() if args.control else ""
        except OSError:
            return ""

    async def tick() -> None:
        nonlocal requests
        requests += 1
        if control() == "crash":
            os._exit(3)
        if args.noisy:
            print("noise " * 20, file=sys.stderr, flush=True)
        if args.crash_after and requests >= args.crash_after:
            os._exit(3)
        if args.slow and requests > args.slow_after:
            await anyio.sleep(args.slow)

    def meta(data: bytes) -> dict[str, Any] | None:
        return {"version": hashlib.sha256(data).hexdigest()} if args.versions else None

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        await tick()
        if args.malformed or control() == "malformed":
            os.write(wire, b"this is not json-rpc\n")
            await anyio.sleep(3600)
        names = _files(root) + (["huge.md"] if args.huge else [])
        start = int(params.cursor) if params is not None and params.cursor else 0
        end = start + args.page_size if args.page_size else len(names)
        rows = []
        for rel in names[start:end]:
            data = (root / rel).read_bytes() if args.versions and rel != "huge.md" else b""
            rows.append(
                types.Resource(
                    uri=args.prefix + rel, name=rel, _meta=meta(data) if args.versions else None
                )
            )
        return types.ListResourcesResult(
            resources=rows, next_cursor=str(end) if end < len(names) else None
        )

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> Any:
        await tick()
        if args.hang_after_list:
            await anyio.sleep(3600)
        uri = str(params.uri)
        rel = uri[len(args.prefix) :] if uri.startswith(args.prefix) else None
        if args.huge and rel == "huge.md":
            return types.ReadResourceResult(
                contents=[types.TextResourceContents(uri=uri, text="x" * args.huge)]
            )
        path = root / rel if rel else None
        if path is None or ".." in rel.split("/") or not path.is_file():
            raise MCPError(-32002, "resource not found")
        data = path.read_bytes()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            content: Any = types.BlobResourceContents(
                uri=uri, blob=base64.b64encode(data).decode("ascii"), _meta=meta(data)
            )
        else:
            content = types.TextResourceContents(uri=uri, text=text, _meta=meta(data))
        return types.ReadResourceResult(contents=[content])

    server: Any = Server(
        "dcx-test-notes",
        version="1",
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )

    async def run() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(run)


if __name__ == "__main__":
    main()
