"""The OpenViking provider (SPEC §6.4): the ``ov`` CLI (≥ 0.5) as a bounded subprocess.

dcx never imports OpenViking (AGPL, 1.3 GB); every call goes through the one
subprocess boundary (deadline, process-group kill, capped output, allow-listed
environment). One retrieval is:

1. preflight: ``ov --version`` (against ``minimum_version``) and ``ov status -o json``;
2. one ``ov find <query> -u <viking:// scope> -n <N> [-L <levels>] --read-content -o json``;
3. ``ov read <uri> -o json`` only for a kept hit that came back without content.

Recorded 0.5.2 behaviour this relies on (``fixtures/openviking-0.5.2/README.md``):
a leading ``cmd:`` line may precede the JSON; exit 2 means the CLI is not set
up (the first-run ``ov language`` trap); ``-n`` is a candidate budget applied
before L0/L1 records are merged, so default levels and L2-only mode over-fetch
4x (at most 32) and then drop the ``.abstract.md``/``.overview.md`` sidecars
(L2-only: every level 0/1 row); a sidecar's content opens with YAML front
matter naming the server's upload path, which is stripped from any content;
a hit outside the requested scope is dropped too. stderr is never parsed.
"""

from __future__ import annotations

import json
import math
import time
from typing import Any

from dcx.core import public
from dcx.core.process import ProcessOutcome, run_bounded
from dcx.core.workspace import Workspace
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

    def __init__(self, ws: Workspace, config: dict[str, Any], *, transient: bool = False) -> None:
        self.ws = ws
        self.config = config
        self.transient = transient
        self.version = ""  # known after the preflight
        self.levels: list[int] | None = config.get("result_levels")

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
        outcome = self._run(["--version"], deadline, conf)
        self._common(outcome)
        if outcome.returncode != 0:
            raise _Failed("provider_cli_unavailable")
        line = outcome.stdout.decode("utf-8", "replace").strip().splitlines()[:1]
        parts = line[0].split() if line else []
        found = parse_version(parts[1]) if len(parts) == 2 and parts[0] == "openviking" else None
        minimum = parse_version(self.config["minimum_version"])  # validated with the config
        if found is None or minimum is None or found < minimum:
            raise _Failed("provider_version_incompatible")
        self.version = ".".join(map(str, found))
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

    @property
    def _drops_sidecars(self) -> bool:
        """Default levels and L2-only never return sidecars: the server's generated summaries are
        not authority. Only a ``result_levels`` that names level 0 or 1 asks for them."""
        return self.levels is None or self.levels == [2]

    def _find(
        self, request: RetrievalRequest, deadline: float, conf: str, http_timeout: float
    ) -> list[dict[str, Any]]:
        # -n is a candidate budget spent before L0/L1 records merge: over-fetch when sidecars are dropped
        n = (
            min(OVERFETCH_MAX, request.max_results * OVERFETCH)
            if self._drops_sidecars
            else request.max_results
        )
        options = ["-n", str(n)]
        if request.scope_ref:
            options = ["-u", request.scope_ref, *options]
        if self.levels is not None:
            options += ["-L", ",".join(map(str, self.levels))]
        options += ["--read-content", "-o", "json"]
        if request.query.startswith("-"):  # keep a leading dash from reading as an option
            args = ["find", *options, "--", request.query]
        else:
            args = ["find", request.query, *options]
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

    def check(self, timeout: float) -> str | None:
        """What recall's preflight would say, without searching: None when ready, else the reason code.

        ``dcx status --check`` asks this, so it cannot call a dead server or a
        too-old CLI ready (the version is held to ``minimum_version``, the
        server must answer ``status`` healthy, through dcx's own config).
        """
        deadline = time.monotonic() + timeout
        http_timeout = max(0.1, math.floor((timeout - HTTP_MARGIN) * 10) / 10)
        try:
            with cli_conf(self.ws, self.config, http_timeout, transient=True) as conf_path:
                self._preflight(deadline, str(conf_path))
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
                self._preflight(deadline, conf)
                hits = self._find(request, deadline, conf, http_timeout)
                searched = True
                return self._answer(request, hits, deadline, conf)
        except _Failed as failure:
            return unavailable(
                request,
                NAME,
                failure.reason_code,
                provider_version=self.version or None,
                search_performed=searched or failure.searched,
            )

    def _answer(
        self, request: RetrievalRequest, hits: list[dict[str, Any]], deadline: float, conf: str
    ) -> Retrieval:
        dropped = 0
        kept: list[dict[str, Any]] = []
        for hit in sorted((h for h in hits if _well_formed(h)), key=lambda h: -h["score"]):
            if not in_scope(hit["uri"], request.scope_ref) or not self._level_ok(hit):
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

    def _level_ok(self, hit: dict[str, Any]) -> bool:
        if self.levels is not None and hit["level"] not in self.levels:
            return False  # contradicts the -L we sent
        return not (self._drops_sidecars and hit["uri"].endswith(SIDECARS))

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
