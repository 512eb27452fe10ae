"""The built-in ``mcp`` source adapter: authority read from another MCP server (SPEC §15.1).

``locator = {command = [...], env = {...}, uri_prefix = "…", include = [...]}``
(all private). Each call (``check``, ``scan``, ``exact_read_many``) starts the
server once, over stdio, with the MCP SDK's own client (``stdio_client`` +
``ClientSession``; the ``mcp`` extra, imported on the first call, never at
start-up), and stops it when done. The SDK spawns the process itself, so the
command it is given is dcx's relay (``dcx.sources.mcp_relay``), which starts
the real server under the one subprocess boundary's rules: the allow-listed
environment plus the locator's ``env``, its own process group, stderr never
read, each stdout line capped, the deadline, and the group killed at the end.

- Listing: ``resources/list`` page by page (a cursor seen twice is a protocol
  error), keeping the URIs that start with ``uri_prefix`` and whose rest
  passes the ``include`` globs (gitwildmatch). A resource's revision is the
  server's own annotation when it has one (``_meta.version`` or
  ``_meta.etag``: ``v:`` + blake3 of it), else blake3 of the bytes of one
  ``resources/read`` (text as UTF-8, hex digest as for local files).
- Text only: a resource whose read is a blob is skipped and counted
  (``skipped_binary``); one over ``max_scan_bytes`` is skipped unhashed
  (``skipped_oversize``) and keeps its committed entry, as one that cannot be
  read now does: skipping never reads as removing.
- Cursor: the ``URI → revision`` map, stored write-once like local-file trees
  (``private/trees/<hash>.json``) behind ``tree:<hash>``. A scan reports the
  added, changed and removed URIs relative to the committed map, in URI
  order, at most ``max_changes`` (the proposed cursor then covers exactly the
  items reported); when the deadline passes after the listing but before
  every read, the changes found so far are reported with
  ``result_cap_applied`` and the note ``mcp_timeout``, and the next scan
  resumes. Reads stop once ``max_changes`` + 1 changes are known.
- Exact read: one ``resources/read`` re-hashed (or its version compared; when
  the read carries none, a listing in the same session gives it); a removal
  is verified by a listing without the URI. Oversize and blob reads are
  terminal outcomes, as for local files.
- Fail-open: a server that cannot start (``mcp_start_failed``), passes the
  deadline (``mcp_timeout``), sends a line that is not JSON-RPC or an answer
  that breaks the protocol (``mcp_protocol_error``), exits mid-session
  (``mcp_server_exited``), writes a line over the cap
  (``mcp_output_too_large``), answers ``resources/list`` with an error
  (``mcp_request_failed``) or has no resources (``mcp_resources_unsupported``)
  makes the scan unavailable; without the SDK it is ``mcp_sdk_missing``. No
  cursor moves on any of them.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import blake3

from dcx.core import trees
from dcx.core.process import KILL_GRACE_SECONDS, child_env
from dcx.core.walk import glob_matcher
from dcx.core.workspace import Workspace
from dcx.sources.base import (
    COMPLETED,
    DELETED,
    MAX_RESOURCE_REF_CHARS,
    NO_CHANGE,
    PROVIDER_CONFIGURATION_FAILED,
    READ_MISMATCH,
    READ_NOT_TEXT,
    READ_OVERSIZE,
    READ_TIMEOUT,
    VERIFIED,
    Health,
    ReadResult,
    ScanItem,
    ScanResult,
    ScanTelemetry,
    SourceUnavailable,
    failed_read,
)
from dcx.state.profile import Source

ADAPTER = "mcp"
VERSION = "1"
MCP_SDK_MISSING = "mcp_sdk_missing"
MCP_START_FAILED = "mcp_start_failed"
MCP_TIMEOUT = "mcp_timeout"
MCP_PROTOCOL_ERROR = "mcp_protocol_error"
MCP_SERVER_EXITED = "mcp_server_exited"
MCP_OUTPUT_TOO_LARGE = "mcp_output_too_large"
MCP_REQUEST_FAILED = "mcp_request_failed"
MCP_NO_RESOURCES = "mcp_resources_unsupported"
RELAY_REASONS = frozenset({MCP_START_FAILED, MCP_TIMEOUT, MCP_SERVER_EXITED, MCP_OUTPUT_TOO_LARGE})
VERSION_KEYS = ("version", "etag")  # the `_meta` keys read as the server's revision
VERSIONED = "v:"
CHECK_SECONDS = 10.0
RELAY = Path(__file__).with_name("mcp_relay.py")
RELAY_ENV = "DCX_MCP_RELAY"
CONNECTION_CLOSED = -32000  # JSON-RPC code the SDK gives a request whose connection closed
WINDOW = 16  # reads in flight at once: a round trip through the relay costs latency, not work
# The work keeps the deadline itself (each step is bounded by what remains, so a scan the
# deadline cuts short still reports what it found); the session's own scope and the relay
# stop a server past it by this much and twice this much: backstops, never the rule.
BACKSTOP_SECONDS = 1.0


class Listed(NamedTuple):
    uri: str
    version: str | None  # the server's revision annotation, as text


class Body(NamedTuple):
    kind: str  # text | binary
    data: bytes  # UTF-8 of the text, or the decoded blob
    version: str | None  # the read's own revision annotation


class Located(NamedTuple):
    argv: list[str]
    env: dict[str, str]
    prefix: str
    match: Callable[[str], bool] | None

    def admits(self, uri: str) -> bool:
        if not uri.startswith(self.prefix):
            return False
        return self.match is None or self.match(uri[len(self.prefix) :])


def locate(source: Source) -> Located:
    locator = source.locator
    command = locator.get("command")
    if not isinstance(command, list) or not command:
        raise SourceUnavailable(PROVIDER_CONFIGURATION_FAILED)
    include = tuple(locator.get("include") or ())
    return Located(
        [str(c) for c in command],
        {str(k): str(v) for k, v in (locator.get("env") or {}).items()},
        str(locator.get("uri_prefix", "")),
        glob_matcher(include, ()),
    )


def version_text(meta: Any) -> str | None:
    """A ``_meta`` version or etag as text (strings and integers), or None."""
    if not isinstance(meta, dict):
        return None
    for key in VERSION_KEYS:
        value = meta.get(key)
        if isinstance(value, bool):
            continue
        if isinstance(value, str) and value:
            return value
        if isinstance(value, int):
            return str(value)
    return None


def versioned(version: str) -> str:
    return VERSIONED + blake3.blake3(version.encode("utf-8", "surrogatepass")).hexdigest()


def hashed(data: bytes) -> str:
    return blake3.blake3(data).hexdigest()


# -- one session with the server ------------------------------------------------------------


class Conn:
    """The calls dcx makes of one started server (inside its session)."""

    def __init__(self, session: Any, loc: Located, deadline: float) -> None:
        self.session = session
        self.loc = loc
        self.deadline = deadline
        self.skipped_outside = 0
        self._listing: dict[str, Listed] | None = None
        self._listing_lock: Any = None

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    async def list_all(self) -> dict[str, Listed]:
        """Every resource under the locator (paginated), by URI; listed once per session, however
        many reads in flight ask."""
        import anyio

        if self._listing_lock is None:
            self._listing_lock = anyio.Lock()
        async with self._listing_lock:
            if self._listing is None:
                self._listing = await self._list()
            return self._listing

    async def _list(self) -> dict[str, Listed]:
        import anyio
        import mcp_types as types
        from mcp.shared.exceptions import MCPError

        found: dict[str, Listed] = {}
        seen: set[str] = set()
        cursor: str | None = None
        while True:
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            try:
                with anyio.fail_after(max(0.0, self.remaining())):
                    page = await self.session.list_resources(params=params)
            except MCPError as exc:
                if exc.code == CONNECTION_CLOSED:
                    raise
                raise SourceUnavailable(MCP_REQUEST_FAILED) from None
            for resource in page.resources:
                uri = str(resource.uri)
                if not self.loc.admits(uri):
                    continue
                if len(uri) > MAX_RESOURCE_REF_CHARS:
                    self.skipped_outside += 1  # a URI the port cannot carry
                    continue
                found.setdefault(uri, Listed(uri, version_text(resource.meta)))
            cursor = page.next_cursor
            if not cursor:
                break
            if cursor in seen:
                raise SourceUnavailable(MCP_PROTOCOL_ERROR)  # pagination that never ends
            seen.add(cursor)
        return found

    async def read(self, uri: str) -> Body | None:
        """One ``resources/read``; None when the server answers it with an error."""
        import base64
        import binascii

        import mcp_types as types
        from mcp.shared.exceptions import MCPError

        try:
            result = await self.session.read_resource(uri)
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                raise
            return None
        parts: list[bytes] = []
        blob = False
        version = None
        for content in result.contents:
            version = version or version_text(content.meta)
            if isinstance(content, types.BlobResourceContents):
                blob = True
                try:
                    parts.append(base64.b64decode(content.blob, validate=True))
                except (binascii.Error, ValueError):
                    raise SourceUnavailable(MCP_PROTOCOL_ERROR) from None
            else:
                parts.append(content.text.encode("utf-8", "surrogatepass"))
        return Body("binary" if blob else "text", b"".join(parts), version)


def _quiet_sdk_logs() -> None:
    """The SDK logs a malformed line with its text: that may be private content."""
    import logging

    for name in ("mcp", "mcp_types", "httpx", "anyio"):
        logger = logging.getLogger(name)
        logger.handlers[:] = [logging.NullHandler()]
        logger.propagate = False


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        out: list[BaseException] = []
        for inner in exc.exceptions:
            out += _leaves(inner)
        return out
    return [exc]


def run_session(
    ws: Workspace,
    loc: Located,
    deadline: float,
    line_cap: int,
    work: Callable[[Conn], Awaitable[Any]],
) -> Any:
    """Start the server, initialise, run ``work`` and stop it; ``SourceUnavailable`` says why
    not (its reason code, the session's first cause)."""
    try:
        import anyio
        import pydantic
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client
        from mcp.shared.exceptions import MCPError
    except ImportError:
        raise SourceUnavailable(MCP_SDK_MISSING) from None
    _quiet_sdk_logs()
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise SourceUnavailable(MCP_TIMEOUT)
    fd, status_path = tempfile.mkstemp(prefix="dcx-mcp-", suffix=".status")
    os.close(fd)
    config = {
        "argv": loc.argv,
        "env": child_env((), loc.env),
        "cwd": str(ws.root),
        "timeout": remaining + 2 * BACKSTOP_SECONDS,
        "line_cap": line_cap,
        "grace": KILL_GRACE_SECONDS,
        "status_path": status_path,
    }
    params = StdioServerParameters(
        command=sys.executable,
        args=["-I", "-S", str(RELAY)],
        env={RELAY_ENV: json.dumps(config)},
        cwd=str(ws.root),
    )
    state = {"stage": "start", "protocol": False}

    async def main() -> Any:
        scope = anyio.CancelScope()

        async def on_message(message: Any) -> None:
            if isinstance(message, Exception):  # a line that is not JSON-RPC
                state["protocol"] = True
                scope.cancel()

        with (
            open(os.devnull, "w") as errlog,
            scope,
        ):
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write, message_handler=on_message) as session,
            ):
                with anyio.fail_after(max(0.0, deadline - time.monotonic()) + BACKSTOP_SECONDS):
                    with anyio.fail_after(max(0.0, deadline - time.monotonic())):
                        init = await session.initialize()
                    if init.capabilities.resources is None:
                        raise SourceUnavailable(MCP_NO_RESOURCES)
                    state["stage"] = "talk"
                    return await work(Conn(session, loc, deadline))
        raise SourceUnavailable(MCP_PROTOCOL_ERROR)  # cancelled by on_message

    try:
        return anyio.run(main)
    except BaseException as exc:
        leaves = _leaves(exc)
        if any(isinstance(leaf, KeyboardInterrupt) for leaf in leaves):
            raise KeyboardInterrupt from None  # Ctrl-C stays Ctrl-C (exit 130), never a reason
        relayed = _relay_reason(status_path)
        if state["protocol"]:
            raise SourceUnavailable(MCP_PROTOCOL_ERROR) from None
        for leaf in leaves:
            if isinstance(leaf, SourceUnavailable):
                raise SourceUnavailable(relayed or leaf.reason_code) from None
        if relayed is not None:
            raise SourceUnavailable(relayed) from None
        for leaf in leaves:
            if isinstance(leaf, TimeoutError):
                raise SourceUnavailable(MCP_TIMEOUT) from None
            if isinstance(leaf, MCPError) and leaf.code == CONNECTION_CLOSED:
                raise SourceUnavailable(
                    MCP_START_FAILED if state["stage"] == "start" else MCP_SERVER_EXITED
                ) from None
            if isinstance(leaf, MCPError | pydantic.ValidationError):
                raise SourceUnavailable(MCP_PROTOCOL_ERROR) from None
            if isinstance(leaf, OSError):
                raise SourceUnavailable(MCP_START_FAILED) from None
        raise
    finally:
        with contextlib.suppress(OSError):
            os.unlink(status_path)


def _relay_reason(path: str) -> str | None:
    try:
        with open(path, "rb") as handle:
            text = handle.read(64).decode("ascii", "replace")
    except OSError:
        return None
    return text if text in RELAY_REASONS else None


# -- the adapter ----------------------------------------------------------------------------


class _Seen(NamedTuple):
    revision: str | None  # None: listed but not hashed: the committed entry stays
    skip: str | None = None  # binary | oversize | unreadable


class McpProvider:
    """One ``mcp`` binding: every source of it names its own server command."""

    version: str | None = VERSION
    adopts_whole_state = True  # scan(adopt=True): one session proposes the whole current map

    def __init__(
        self,
        ws: Workspace,
        provider_id: str,
        config: dict[str, Any],
        *,
        max_scan_bytes: int,
        persist: bool = True,
    ) -> None:
        if config:
            raise SourceUnavailable(PROVIDER_CONFIGURATION_FAILED)  # mcp takes no config keys
        self.ws = ws
        self.provider_id = provider_id
        self.max_scan_bytes = max_scan_bytes
        self.persist = persist

    @property
    def line_cap(self) -> int:
        """The longest JSON-RPC line accepted: a resource at ``max_scan_bytes``, escaped."""
        return 2 * self.max_scan_bytes + (1 << 20)

    def health(self) -> Health:
        from importlib.util import find_spec

        try:
            found = find_spec("mcp") is not None
        except ValueError:  # ``sys.modules["mcp"]`` is None: import blocked
            found = False
        if not found:
            return Health("unavailable", MCP_SDK_MISSING)
        return Health("healthy")

    def _session(self, source: Source, deadline: float, work: Any) -> Any:
        return run_session(self.ws, locate(source), deadline, self.line_cap, work)

    def check(self, source: Source, deadline: float) -> int:
        """``status --check`` and ``source add --mcp``: the server starts and lists (resources
        under the locator, counted; nothing is read)."""

        async def work(conn: Conn) -> int:
            return len(await conn.list_all())

        return int(self._session(source, deadline, work))

    # -- scan ------------------------------------------------------------------------------
    def scan(
        self,
        source: Source,
        after_cursor: str | None,
        limit: int,
        deadline: float,
        observed_at: str,
        *,
        adopt: bool = False,
    ) -> ScanResult:
        try:
            base = trees.load_tree(self.ws, after_cursor)
        except trees.TreeError as exc:
            raise SourceUnavailable(exc.reason_code) from None
        stop = None if adopt else limit + 1
        survey = self._session(
            source, deadline, lambda conn: _survey(conn, base, stop, self.max_scan_bytes)
        )
        changes = _changes(base, survey, source.source_id, observed_at)
        skips = [s.skip for s in survey.seen.values()]
        if survey.partial and not changes:
            raise SourceUnavailable(MCP_TIMEOUT)
        capped = len(changes) > limit
        reported = changes[:limit]
        applied = changes if adopt else reported
        if (
            survey.cut is not None
            or (capped and not adopt)
            or "oversize" in skips
            or "unreadable" in skips
        ):
            proposed = dict(base)
            for item in applied:
                if item.change == "deleted":
                    proposed.pop(item.resource_ref, None)
                else:
                    proposed[item.resource_ref] = item.revision
        else:
            proposed = {u: s.revision for u, s in survey.seen.items() if s.revision is not None}
        telemetry = ScanTelemetry(
            result_cap_applied=(capped and not adopt) or survey.partial,
            skipped_outside_locator=survey.skipped_outside,
            skipped_oversize=skips.count("oversize"),
            file_count=len(proposed),
            skipped_binary=skips.count("binary"),
        )
        if adopt:
            telemetry = telemetry._replace(adopted_unlisted_count=len(changes) - len(reported))
        status = COMPLETED if reported else NO_CHANGE
        note = MCP_TIMEOUT if survey.partial else None
        return ScanResult(status, tuple(reported), self._tree(proposed), note, telemetry)

    def _tree(self, entries: dict[str, str]) -> str:
        if self.persist:
            return trees.store_tree(self.ws, entries)
        return trees.cursor_of(trees.tree_digest(entries))

    # -- exact read ------------------------------------------------------------------------
    def exact_read(
        self, source: Source, item: ScanItem, max_bytes: int, deadline: float, observed_at: str
    ) -> ReadResult:
        return self.exact_read_many(source, [item], max_bytes, deadline, observed_at)[0]

    def exact_read_many(
        self,
        source: Source,
        items: Sequence[ScanItem],
        max_bytes: int,
        deadline: float,
        observed_at: str,
    ) -> list[ReadResult]:
        """Every item re-read in one session, in order; a session that fails fails them all
        with its reason code, and reads past the deadline fail ``exact_read_timeout``."""
        if time.monotonic() > deadline:
            return [failed_read(item, observed_at, READ_TIMEOUT) for item in items]

        async def work(conn: Conn) -> list[ReadResult]:
            import anyio

            out: list[ReadResult | None] = [None] * len(items)

            async def verify(index: int) -> None:
                out[index] = await _verify(conn, items[index], max_bytes, observed_at)

            for start in range(0, len(items), WINDOW):  # WINDOW reads in flight at once
                if conn.remaining() <= 0:
                    break
                with anyio.move_on_after(conn.remaining()):
                    async with anyio.create_task_group() as group:
                        for index in range(start, min(start + WINDOW, len(items))):
                            group.start_soon(verify, index)
            return [
                done if done is not None else failed_read(item, observed_at, READ_TIMEOUT)
                for item, done in zip(items, out, strict=True)
            ]

        try:
            return list(self._session(source, deadline, work))
        except SourceUnavailable as exc:
            return [failed_read(item, observed_at, exc.reason_code) for item in items]

    def read_now(self, source: Source, uri: str, deadline: float) -> tuple[str, bytes] | None:
        """(blake3 revision, bytes) of one text resource under the locator now, or None."""

        async def work(conn: Conn) -> tuple[str, bytes] | None:
            if not conn.loc.admits(uri):
                return None
            body = await conn.read(uri)
            if body is None or body.kind != "text":
                return None
            return hashed(body.data), body.data

        found = self._session(source, deadline, work)
        return None if found is None else (found[0], found[1])

    def current(
        self, source: Source, deadline: float, max_read_bytes: int
    ) -> dict[str, tuple[str, bytes | None]]:
        """Every text resource under the locator now: URI → (revision, bytes, None when over
        ``max_read_bytes``), from one session (what ``dcx index`` is fed)."""

        async def work(conn: Conn) -> dict[str, tuple[str, bytes | None]]:
            out: dict[str, tuple[str, bytes | None]] = {}
            for uri in sorted(await conn.list_all()):
                if conn.remaining() <= 0:
                    raise SourceUnavailable(MCP_TIMEOUT)
                body = await conn.read(uri)
                if body is None or body.kind != "text" or len(body.data) > self.max_scan_bytes:
                    continue
                keep = body.data if len(body.data) <= max_read_bytes else None
                out[uri] = (hashed(body.data), keep)
            return out

        return dict(self._session(source, deadline, work))


class Survey(NamedTuple):
    seen: dict[str, _Seen]  # the URIs looked at (listed ones only)
    cut: str | None  # the first URI not looked at (None: all were)
    partial: bool  # the deadline made the cut
    skipped_outside: int


async def _survey(
    conn: Conn, base: dict[str, str], stop: int | None, max_scan_bytes: int
) -> Survey:
    """What the server holds now, relative to the committed map ``base``.

    The union of listed and committed URIs is walked in order; a listed resource without a
    version annotation is read (to hash it). The walk stops once ``stop`` changes are known,
    or at the deadline (``partial``); URIs from the cut on are left for a later scan.
    """
    import anyio

    listing = await conn.list_all()
    order = sorted(base.keys() | listing.keys())
    unversioned = [u for u in order if u in listing and listing[u].version is None]
    bodies: dict[str, Body | None] = {}
    queued = 0  # unversioned[:queued] have been read (in windows of WINDOW, in flight together)

    async def read_into(uri: str) -> None:
        bodies[uri] = await conn.read(uri)

    seen: dict[str, _Seen] = {}
    changes = 0
    for uri in order:
        if stop is not None and changes >= stop:
            return Survey(seen, uri, False, conn.skipped_outside)
        listed = listing.get(uri)
        if listed is None:
            changes += 1  # removed: known from the listing alone
            continue
        if listed.version is not None:
            entry = _Seen(versioned(listed.version))
        else:
            if uri not in bodies:  # the next window starts here (reads return in any order)
                window = unversioned[queued : queued + WINDOW]
                queued += len(window)
                if conn.remaining() <= 0:
                    return Survey(seen, uri, True, conn.skipped_outside)
                try:
                    with anyio.fail_after(conn.remaining()):
                        async with anyio.create_task_group() as group:
                            for one in window:
                                group.start_soon(read_into, one)
                except TimeoutError:
                    return Survey(seen, uri, True, conn.skipped_outside)
            body = bodies.pop(uri)
            if body is None:
                entry = _Seen(None, "unreadable")  # listed, but not readable now
            elif body.kind == "binary":
                entry = _Seen(None, "binary")
            elif len(body.data) > max_scan_bytes:
                entry = _Seen(None, "oversize")
            else:
                entry = _Seen(hashed(body.data))
        seen[uri] = entry
        if entry.skip == "binary":
            changes += uri in base  # a text resource that became a blob leaves the map
        elif entry.revision is not None and entry.revision != base.get(uri):
            changes += 1
    return Survey(seen, None, False, conn.skipped_outside)


def _changes(
    base: dict[str, str], survey: Survey, source_id: str, observed_at: str
) -> list[ScanItem]:
    """Changes from the committed map to what the survey saw, in URI order, up to its cut."""
    items: list[ScanItem] = []
    seen, cut = survey.seen, survey.cut
    for uri in sorted(base.keys() | seen.keys()):
        if cut is not None and uri >= cut:
            break
        entry = seen.get(uri)
        old = base.get(uri)
        if entry is None or entry.skip == "binary":
            if old is not None:  # not listed, or no longer a text resource
                items.append(ScanItem(source_id, uri, DELETED, observed_at, "deleted", "deleted"))
            continue
        if entry.revision is None:
            continue  # not hashed now: the committed entry stays
        if old is None:
            items.append(ScanItem(source_id, uri, entry.revision, observed_at, "text", "added"))
        elif old != entry.revision:
            items.append(ScanItem(source_id, uri, entry.revision, observed_at, "text", "modified"))
    return items


async def _verify(conn: Conn, item: ScanItem, max_bytes: int, observed_at: str) -> ReadResult:
    uri = item.resource_ref

    def result(status: str, content: str | None = None, reason: str | None = None) -> ReadResult:
        return ReadResult(status, uri, item.revision, observed_at, content, reason)

    if item.revision == DELETED:
        if not conn.loc.admits(uri):
            return result("deleted")  # out of the locator's view now: removed from it
        listed = (await conn.list_all()).get(uri)
        if listed is None:
            return result("deleted")
        # listed again: still removed only if it is not a text resource any more
        body = await conn.read(uri)
        if body is not None and body.kind == "binary":
            return result("deleted")
        return failed_read(item, observed_at, READ_MISMATCH)
    if not conn.loc.admits(uri):
        return failed_read(item, observed_at, "locator_outside_root")
    body = await conn.read(uri)
    if body is None:
        return failed_read(item, observed_at, READ_MISMATCH)  # gone since the scan
    if item.revision.startswith(VERSIONED):
        version = body.version
        if version is None:
            listed = (await conn.list_all()).get(uri)
            version = listed.version if listed is not None else None
        if version is None or versioned(version) != item.revision:
            return failed_read(item, observed_at, READ_MISMATCH)
    elif body.kind != "text" or hashed(body.data) != item.revision:
        return failed_read(item, observed_at, READ_MISMATCH)
    if body.kind == "binary":
        return result("binary", reason=READ_NOT_TEXT)
    if len(body.data) > max_bytes:
        return result("oversize", reason=READ_OVERSIZE)
    return result(VERIFIED, body.data.decode("utf-8", "surrogatepass"))
