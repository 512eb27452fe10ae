"""The OpenViking provider (SPEC §6.4): the ``ov`` CLI (≥ 0.5) as a bounded subprocess.

dcx never imports OpenViking (AGPL, 1.3 GB); every call goes through the one
subprocess boundary (deadline, process-group kill, capped output, allow-listed
environment). One retrieval is:

1. preflight: ``ov version`` (the CLI's version and the **server's**, both held
   to ``minimum_version``) and ``ov status -o json`` (the server says it is
   healthy) — remembered for a short while (``openviking_ready``), so a healthy
   recall usually starts one ``ov`` process;
2. one ``ov find <query> -u <viking:// scope> -n <N> [-L <levels>] --read-content -o json``
   (with default levels, once more with ``-L 2`` when every hit was a sidecar);
3. ``ov read <uri> -o json`` only for a kept hit that came back without content.

Recorded 0.5.2 behaviour this relies on (``fixtures/openviking-0.5.2/README.md``):
a leading ``cmd:`` line may precede the JSON; exit 2 means the CLI is not set
up (the first-run ``ov language`` trap); ``ov version`` prints ``CLI:`` and
``Server:`` lines and drops the ``Server:`` line when the server is down
(``status -o json`` carries no version); ``-n`` is a candidate budget applied
before L0/L1 records are merged, so default levels and L2-only mode over-fetch
4x (at most 32) and then drop the ``.abstract.md``/``.overview.md`` sidecars
(L2-only: every level 0/1 row); a sidecar's content opens with YAML front
matter naming the server's upload path, which is stripped from any content;
a hit outside the requested scope is dropped too; an unrelated query still
gets hits (0.5 with the stub), which ``min_score`` can drop. stderr is never
parsed.
"""

from __future__ import annotations

import json
import math
import time
from typing import Any

from dcx.core import public
from dcx.core.process import ProcessOutcome, run_bounded
from dcx.core.workspace import Workspace
from dcx.providers import openviking_ready as ready_cache
from dcx.providers.base import (
    Retrieval,
    RetrievalItem,
    RetrievalRequest,
    completed,
    unavailable,
)
from dcx.providers.openviking_config import cli_conf, resolve_binary
from dcx.providers.validate import CONTENT_MAX, ITEM_SUMMARY_MAX, admit
from dcx.state.provider_config import parse_version

NAME = "openviking"
SIDECARS = ("/.abstract.md", "/.overview.md")
OVERFETCH = 4
OVERFETCH_MAX = 32
CONF_ENV = "OPENVIKING_CLI_CONFIG_FILE"
HTTP_MARGIN = 0.2  # seconds kept between the CLI's own HTTP timeout and our deadline
PROBE_QUERY = "dcx readiness probe"  # status --check's tiny find: what recall needs, not relevance


class _Failed(Exception):
    def __init__(self, reason_code: str, *, searched: bool = False) -> None:
        super().__init__(reason_code)
        self.reason_code = reason_code
        self.searched = searched


def parse_output(stdout: bytes) -> Any:
    """The ``result`` of a ``{"ok": true, "result": …}`` envelope, after an optional ``cmd:`` line."""
    try:
        text = stdout.decode("utf-8")
    except UnicodeDecodeError:
        raise _Failed("provider_search_parse_failed", searched=True) from None
    if text.startswith("cmd:"):
        text = text.partition("\n")[2]
    try:
        doc = json.loads(text)
    except ValueError:
        raise _Failed("provider_search_parse_failed", searched=True) from None
    if not isinstance(doc, dict) or doc.get("ok") is not True or "result" not in doc:
        raise _Failed("provider_search_parse_failed", searched=True)
    return doc["result"]


def parse_versions(stdout: bytes) -> tuple[str | None, str | None]:
    """(CLI version, server version) from ``ov version``'s two lines (``CLI:     0.5.2`` and
    ``Server:  0.5.2``), after an optional ``cmd:`` line; None for a line that is not there."""
    found: dict[str, str | None] = {"CLI:": None, "Server:": None}
    for line in stdout.decode("utf-8", "replace").splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] in found and found[parts[0]] is None:
            found[parts[0]] = parts[1]
    return found["CLI:"], found["Server:"]


def _hits(result: Any) -> list[dict[str, Any]]:
    lists = ("memories", "resources", "skills")
    if not isinstance(result, dict) or not any(k in result for k in lists):
        raise _Failed("provider_search_parse_failed", searched=True)
    hits: list[dict[str, Any]] = []
    for key in lists:
        part = result.get(key, [])
        if not isinstance(part, list):
            raise _Failed("provider_search_parse_failed", searched=True)
        hits.extend(part)
    return hits


def _well_formed(hit: Any) -> bool:
    if not isinstance(hit, dict) or not isinstance(hit.get("uri"), str) or not hit["uri"]:
        return False
    level, score = hit.get("level"), hit.get("score")
    if isinstance(level, bool) or level not in (0, 1, 2):
        return False
    if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
        return False
    return isinstance(hit.get("abstract", ""), str) and isinstance(hit.get("content", ""), str)


def strip_front_matter(text: str) -> str:
    """``text`` without a leading YAML front matter block (``---`` … ``---``/``...``).

    OpenViking's L0/L1 sidecars carry one, and the ingest root's names the
    server's upload path (fixture README, pitfall 9): it is metadata, never
    content. Text that opens ``---`` but never closes the block is kept whole.
    """
    if not text.startswith(("---\n", "---\r\n")):
        return text
    lines = text.splitlines(keepends=True)
    for index in range(1, len(lines)):
        if lines[index].rstrip("\r\n") in ("---", "..."):
            return "".join(lines[index + 1 :]).lstrip("\r\n")
    return text


def in_scope(uri: str, scope: str) -> bool:
    if not scope:
        return True
    base = scope.rstrip("/")
    return uri == base or uri.startswith(base + "/")


class OpenVikingProvider:
    name = NAME

    def __init__(
        self,
        ws: Workspace,
        config: dict[str, Any],
        *,
        transient: bool = False,
        ready_file: bool | None = None,
    ) -> None:
        self.ws = ws
        self.config = config
        self.transient = transient
        # the private ready.json: persistent callers and `dcx recall` (SPEC §6.4 v4); never the
        # workbench or `prepare --show-content`, which write nothing
        self.ready_file = (not transient) if ready_file is None else ready_file
        self.version = ""  # the server's version, known after the preflight (the receipt's)
        self.cli_version = ""
        self.levels: list[int] | None = config.get("result_levels")
        self.min_score: float | None = config.get("min_score")
        self._key: str | None = None

    # -- process plumbing --------------------------------------------------
    def _run(self, args: list[str], deadline: float, conf: str) -> ProcessOutcome:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise _Failed("provider_search_timeout")
        argv = [resolve_binary(self.ws, self.config["binary"]), *args]
        return run_bounded(argv, timeout=remaining, extra_env={CONF_ENV: conf})

    @staticmethod
    def _common(outcome: ProcessOutcome, *, searched: bool = False) -> None:
        """Failures every stage maps the same way."""
        if outcome.status == "spawn_failed" or (
            outcome.status == "exited" and outcome.returncode in (126, 127)
        ):
            raise _Failed("provider_cli_unavailable")
        if outcome.status == "timeout":
            raise _Failed("provider_search_timeout", searched=searched)
        if outcome.status != "exited":
            raise _Failed("provider_search_parse_failed", searched=searched)
        if outcome.returncode == 2:  # language not set (fresh HOME), or no usable ovcli.conf
            raise _Failed("provider_cli_not_configured")

    def _preflight(self, deadline: float, conf: str) -> None:
        """Both versions against ``minimum_version``, then the server's health; raises the reason."""
        outcome = self._run(["version"], deadline, conf)
        self._common(outcome)
        minimum = parse_version(self.config["minimum_version"])  # validated with the config
        cli, server = parse_versions(outcome.stdout)
        found = parse_version(cli) if cli else None
        if found is None or minimum is None or found < minimum:
            raise _Failed("provider_version_incompatible")  # an older `ov` has no `version` line
        self.cli_version = ".".join(map(str, found))
        if server is None or outcome.returncode != 0:
            # `ov version` drops its Server line when the server does not answer (recorded)
            raise _Failed("provider_service_unavailable")
        served = parse_version(server)
        if served is not None:
            self.version = ".".join(map(str, served))
        if served is None or served < minimum:
            raise _Failed("provider_version_incompatible")
        outcome = self._run(["status", "-o", "json"], deadline, conf)
        self._common(outcome)
        if outcome.returncode != 0:
            raise _Failed("provider_service_unavailable")
        try:
            health = parse_output(outcome.stdout)
        except _Failed:
            raise _Failed("provider_service_unavailable") from None
        if not isinstance(health, dict) or health.get("is_healthy") is not True:
            raise _Failed("provider_service_unavailable")

    def _ready(self, deadline: float, conf: str) -> bool:
        """The preflight, or its remembered answer; True when the answer was remembered."""
        key = self._key = ready_cache.cache_key(
            resolve_binary(self.ws, self.config["binary"]), self.config
        )
        known = ready_cache.lookup(self.ws, key, use_file=self.ready_file)
        if known is not None:
            self.cli_version, self.version = known
            return True
        self._preflight(deadline, conf)
        ready_cache.remember(
            self.ws,
            key,
            ready_cache.Ready(self.cli_version, self.version),
            use_file=self.ready_file,
        )
        return False

    def _forget(self) -> None:
        if self._key is not None:
            ready_cache.forget(self.ws, self._key, use_file=self.ready_file)

    @property
    def _drops_sidecars(self) -> bool:
        """Default levels and L2-only never return sidecars: the server's generated summaries are
        not authority. Only a ``result_levels`` that names level 0 or 1 asks for them."""
        return self.levels is None or self.levels == [2]

    def _find(
        self,
        request: RetrievalRequest,
        deadline: float,
        conf: str,
        http_timeout: float,
        *,
        levels: list[int] | None,
        n: int | None = None,
        read_content: bool = True,
    ) -> list[dict[str, Any]]:
        # -n is a candidate budget spent before L0/L1 records merge: over-fetch when sidecars are dropped
        if n is None:
            n = (
                min(OVERFETCH_MAX, request.max_results * OVERFETCH)
                if self._drops_sidecars
                else request.max_results
            )
        options = ["-n", str(n)]
        if request.scope_ref:
            options = ["-u", request.scope_ref, *options]
        if levels is not None:
            options += ["-L", ",".join(map(str, levels))]
        options += ["--read-content", "-o", "json"] if read_content else ["-o", "json"]
        text = request.query
        # keep a leading dash from reading as an option
        args = ["find", *options, "--", text] if text.startswith("-") else ["find", text, *options]
        started = time.monotonic()
        outcome = self._run(args, deadline, conf)
        self._common(outcome, searched=True)
        if outcome.returncode != 0:
            # stderr is never parsed; an exit after the CLI's own HTTP timeout is its DEADLINE_EXCEEDED
            timed_out = time.monotonic() - started >= http_timeout
            raise _Failed(
                "provider_search_timeout" if timed_out else "provider_search_failed", searched=True
            )
        return _hits(parse_output(outcome.stdout))

    def _read(self, uri: str, deadline: float, conf: str) -> str | None:
        try:
            outcome = self._run(["read", uri, "-o", "json"], deadline, conf)
            if outcome.status != "exited" or outcome.returncode != 0:
                return None
            text = parse_output(outcome.stdout)
        except _Failed:
            return None
        return text if isinstance(text, str) else None

    def check(self, timeout: float, scope_ref: str | None = None) -> str | None:
        """What recall needs, asked afresh: None when ready, else the reason code.

        ``dcx status --check`` asks this, so it cannot call a dead server, a
        too-old CLI or server, or a server whose search cannot answer (a dead
        embedding backend) ready: the full preflight through dcx's own config
        (never a remembered answer), then a tiny ``find`` (``-n 1``, no
        content) in the profile's scope. It writes nothing in the workspace.
        """
        deadline = time.monotonic() + timeout
        http_timeout = max(0.1, math.floor((timeout - HTTP_MARGIN) * 10) / 10)
        scope = scope_ref if scope_ref and scope_ref.startswith("viking://") else ""
        probe = RetrievalRequest(
            namespace="decision-context",
            scope_ref=scope,
            query=PROBE_QUERY,
            query_summary="readiness probe",
            max_results=1,
            timeout_seconds=timeout,
            observed_at="1970-01-01T00:00:00Z",
            max_content_chars=1,
        )
        try:
            with cli_conf(self.ws, self.config, http_timeout, transient=True) as conf_path:
                self._preflight(deadline, str(conf_path))
                self._find(
                    probe,
                    deadline,
                    str(conf_path),
                    http_timeout,
                    levels=self.levels,
                    n=1,
                    read_content=False,
                )
        except _Failed as failure:
            return failure.reason_code
        return None

    # -- the port ----------------------------------------------------------
    def retrieve(self, request: RetrievalRequest, *, deadline: float) -> Retrieval:
        if request.scope_ref and not request.scope_ref.startswith("viking://"):
            return unavailable(request, NAME, "provider_scope_unsupported")
        remaining = deadline - time.monotonic()
        http_timeout = max(0.1, math.floor((remaining - HTTP_MARGIN) * 10) / 10)
        searched = False
        try:
            with cli_conf(
                self.ws, self.config, http_timeout, transient=self.transient
            ) as conf_path:
                conf = str(conf_path)
                remembered = self._ready(deadline, conf)
                try:
                    hits, dropped, levels = self._search(request, deadline, conf, http_timeout)
                except _Failed:
                    if remembered:  # the remembered answer may be out of date: ask again
                        self._forget()
                        self._preflight(deadline, conf)  # its own reason when the server went away
                    raise
                searched = True
                return self._answer(request, hits, deadline, conf, levels, dropped)
        except _Failed as failure:
            return unavailable(
                request,
                NAME,
                failure.reason_code,
                provider_version=self.version or None,
                search_performed=searched or failure.searched,
            )

    def _search(
        self, request: RetrievalRequest, deadline: float, conf: str, http_timeout: float
    ) -> tuple[list[dict[str, Any]], int, list[int] | None]:
        """The find's hits, how many hits of an earlier answer were dropped, and the levels asked.

        With default levels a find whose every usable hit is a sidecar (the top
        candidates were all L0/L1 records) is asked again with ``-L 2``, so
        matching files are never answered as "completed, 0 results"; the
        sidecars of the first answer count as dropped.
        """
        hits = self._find(request, deadline, conf, http_timeout, levels=self.levels)
        if self.levels is not None or not self._starved(hits, request.scope_ref):
            return hits, 0, self.levels
        again = self._find(request, deadline, conf, http_timeout, levels=[2])
        return again, len(hits), [2]

    def _starved(self, hits: list[dict[str, Any]], scope: str) -> bool:
        usable = [h for h in hits if _well_formed(h) and in_scope(h["uri"], scope)]
        return bool(usable) and not any(self._level_ok(h, None) for h in usable)

    def _answer(
        self,
        request: RetrievalRequest,
        hits: list[dict[str, Any]],
        deadline: float,
        conf: str,
        levels: list[int] | None,
        dropped_before: int = 0,
    ) -> Retrieval:
        dropped = dropped_before
        kept: list[dict[str, Any]] = []
        for hit in sorted((h for h in hits if _well_formed(h)), key=lambda h: -h["score"]):
            if (
                not in_scope(hit["uri"], request.scope_ref)
                or not self._level_ok(hit, levels)
                or (self.min_score is not None and hit["score"] < self.min_score)
            ):
                dropped += 1
                continue
            kept.append(hit)
        dropped += sum(1 for h in hits if not _well_formed(h))
        candidates: list[RetrievalItem] = []
        unusable = 0
        read = False
        examined = 0
        for hit in kept:
            if len(candidates) == request.max_results:
                break  # full: later hits are never read
            examined += 1
            content = hit.get("content")
            if content is None:
                content = self._read(hit["uri"], deadline, conf)
                read = True
            if content is not None:
                content = strip_front_matter(content)
            if content is None or len(content) > CONTENT_MAX:
                unusable += 1
                continue
            candidates.append(
                RetrievalItem(
                    hit["uri"], self._summary(hit, request.namespace), content, float(hit["score"])
                )
            )
        if kept and not candidates:
            return unavailable(
                request,
                NAME,
                "provider_reads_unusable",
                provider_version=self.version,
                search_performed=True,
                read_performed=read,
            )
        items, admitted_drops, capped = admit(candidates, request)
        return completed(
            request,
            NAME,
            items,
            provider_version=self.version,
            read_performed=bool(items) or read,
            items_dropped=dropped + unusable + admitted_drops,
            result_cap_applied=capped or examined < len(kept),
        )

    def _level_ok(self, hit: dict[str, Any], levels: list[int] | None) -> bool:
        if levels is not None and hit["level"] not in levels:
            return False  # contradicts the -L we sent
        drops = levels is None or levels == [2]
        return not (drops and hit["uri"].endswith(SIDECARS))

    @staticmethod
    def _summary(hit: dict[str, Any], namespace: str) -> str:
        abstract = hit.get("abstract") or ""
        if (
            abstract.strip()
            and len(abstract) <= ITEM_SUMMARY_MAX
            and public.unsafe_class(abstract) is None
        ):
            return abstract
        return f"OpenViking match in {namespace}"
