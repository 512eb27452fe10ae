"""``dcx index [--rebuild]``: bring the bm25 index up to date (SPEC §6.3).

Needs activation. Walks every indexable source with the source plane's walker
and stat cache, and re-reads only files whose revision changed. Writes only
``private/index/`` (and the stat cache) and the keyed ref of every path it lists
in ``private/refs.sqlite`` (those paths are private values from now on, SPEC §3.4
v4). ``recall`` and ``prepare`` never index: this command is how the index moves.
"""

from __future__ import annotations

from dcx.core.clock import Clock
from dcx.core.result import Result
from dcx.core.workspace import Workspace
from dcx.providers.bm25_index import index_path
from dcx.providers.bm25_indexer import Progress, update_index
from dcx.sources.files import listing
from dcx.state.activation import require_active
from dcx.state.keys import load_key
from dcx.state.refmap import RefMinter


def index(
    *,
    ws: Workspace,
    agent_id: str | None,
    clock: Clock,
    rebuild: bool = False,
    wait: float = 5.0,
    progress: Progress | None = None,
) -> Result:
    state = require_active(ws, agent_id)
    profile, registry = state.settings()
    # the key exists before anything recalls: recall itself never creates a file
    key = load_key(ws)
    # From the first index on, every path the index may hold is a private value the public
    # writers and audit refuse (SPEC §3.4 v4), scanned or not: its keyed ref is recorded.
    minter = RefMinter(ws, key)

    def list_files(source, tick):
        found = listing(
            ws,
            source,
            max_scan_bytes=profile.max_scan_bytes,
            max_read_bytes=profile.max_read_bytes,
            progress=tick,
        )
        for rel in found.revisions:
            minter.change_ref(source.source_id, rel)
        return found

    with minter:
        report = update_index(
            ws,
            registry,
            list_files,
            now=clock.now(),
            rebuild=rebuild,
            wait=wait,
            progress=progress,
        )
    sources = [r.public() for r in report.sources]
    data = {
        "index": ws.rel(index_path(ws.index)),
        "created": report.created,
        "chunk_count": report.chunk_count,
        "files_indexed": sum(r["files_indexed"] for r in sources),
        "files_removed": sum(r["files_removed"] for r in sources),
        "replaced_legacy": report.replaced_legacy,
        "sources": sources,
    }
    provider = profile.context_provider.provider
    data["recall_provider"] = provider
    unavailable = [r for r in sources if r["status"] == "unavailable"]
    warnings = [f"{r['source_id']}: not indexed ({r['reason_code']})" for r in unavailable]
    if report.replaced_legacy:  # said by the one run that replaces it
        warnings.append(
            "removed the SQLite FTS5 index of an earlier dcx (private/index/bm25.sqlite); "
            "the tantivy index was built whole in its place"
        )
    if provider != "bm25":
        use = (
            "recall is off"
            if provider == "none"
            else f"recall reads {provider}; this index only matches its items to authority files"
        )
        warnings.append(
            f"the recall provider is {provider}, not bm25: {use} "
            "([context_provider] provider in profile.toml)"
        )
    return Result("index", data, status="partial" if unavailable else "ok", warnings=warnings)
