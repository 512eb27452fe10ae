"""``dcx recall``: one-off advisory recall for the current agent (SPEC §6.7).

Activation gates it (an unavailable source adapter does not); the profile
gates the provider, namespace, bounds and timeout; the caller supplies the
scope and the query for this call only. The provider is called once. The
answer is a ``decision_context_ephemeral_recall_v0`` packet in ``data``.

It writes nothing of the recall anywhere: no packet, no ref map
(``RefMinter(record=False)``), no lock file, no index journal (bm25 opens its
index ``mode=ro``), no OpenViking config in the workspace. The one file it may
write is OpenViking's remembered preflight, ``private/openviking/ready.json``
(SPEC §6.4 v4: versions and a check time, no query, result or packet); the
workbench, which shares ``recall_once``, writes not even that. No scan, no cursor read. A profile
changed during the call turns the answer into
``unavailable/profile_changed_during_recall``. An unavailable provider is
exit 0 with status ``partial``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import IO, Any

from dcx.core.clock import Clock
from dcx.core.envelope import PacketContext
from dcx.core.errors import DcxError, InvalidInput, NoWorkspace
from dcx.core.result import Result
from dcx.core.workspace import Workspace
from dcx.evidence.recall import RecallRun, build_request, run_recall
from dcx.packets import recall as recall_packet
from dcx.providers.base import unavailable
from dcx.providers.reasons import hint
from dcx.providers.validate import QUERY_MAX
from dcx.state.activation import Activation, require_active
from dcx.state.keys import Key, load_key
from dcx.state.profile import load_profile
from dcx.state.refmap import RefMinter

LABELS = {
    "namespace": "context_provider.namespace",
    "scope_ref": "--scope",
    "query": "--query",
    "query_summary": "--query-summary",
    "max_results": "--max-results",
    "timeout_seconds": "--timeout",
}
# UTF-8 needs at most 4 bytes a character; 2 more for a trailing CRLF
QUERY_FILE_MAX_BYTES = 4 * QUERY_MAX + 2


def read_query(query: str | None, query_file: str | None, stdin: IO[Any] | None) -> tuple[str, str]:
    """(query text, the flag it came from). Exactly one of --query / --query-file."""
    if (query is None) == (query_file is None):
        raise InvalidInput(
            "give exactly one of --query and --query-file", field="--query", code="usage_error"
        )
    if query is not None:
        return query, "--query"
    try:
        if query_file == "-":
            if stdin is None:
                raise OSError("no stdin")
            raw = stdin.read(QUERY_FILE_MAX_BYTES + 1)
            data = raw.encode() if isinstance(raw, str) else raw
        else:
            with open(query_file, "rb") as handle:  # type: ignore[arg-type]
                data = handle.read(QUERY_FILE_MAX_BYTES + 1)
    except OSError:
        raise InvalidInput("--query-file: cannot read it", field="--query-file") from None
    if len(data) > QUERY_FILE_MAX_BYTES:
        raise InvalidInput(
            f"--query-file: over the limit of {QUERY_MAX} characters",
            field="--query-file",
            code="text_too_long",
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput("--query-file: not UTF-8 text", field="--query-file") from None
    if text.endswith("\n"):
        text = text[:-2] if text.endswith("\r\n") else text[:-1]
    return text, "--query-file"


def _key(ws: Workspace) -> Key:
    try:
        return load_key(ws, create=False)  # recall never creates a file, not even the key
    except NoWorkspace:
        raise NoWorkspace(
            f"{ws.rel(ws.key_path)} is missing",
            code="key_missing",
            hint="run `dcx init` to create it, or `dcx key import FILE` to share this goal's key",
        ) from None


def _profile_digest(ws: Workspace) -> str | None:
    try:
        profile = load_profile(ws)
    except DcxError:
        return None
    return profile.digest if profile is not None else None


def recall(
    *,
    ws: Workspace,
    agent_id: str | None,
    scope: str | None,
    query: str | None,
    query_file: str | None,
    query_summary: str,
    max_results: int | None = None,
    timeout: float | None = None,
    stdin: IO[Any] | None = None,
    clock: Clock,
) -> Result:
    state = require_active(ws, agent_id)
    profile = state.profile
    if profile is None:
        raise DcxError("activation without a profile", code="internal_error")
    before = profile.digest
    text, source_flag = read_query(query, query_file, stdin)
    return recall_once(
        ws=ws,
        state=state,
        scope=scope,
        query=text,
        query_summary=query_summary,
        max_results=max_results,
        timeout=timeout,
        clock=clock,
        labels={**LABELS, "query": source_flag},
        profile_unchanged=lambda: _profile_digest(ws) == before,
        ready_file=True,
    )


def recall_once(
    *,
    ws: Workspace,
    state: Activation,
    scope: str | None,
    query: str,
    query_summary: str,
    max_results: int | None,
    timeout: float | None,
    clock: Clock,
    labels: Mapping[str, str] | None = None,
    profile_unchanged: Callable[[], bool] | None = None,
    ready_file: bool = False,
) -> Result:
    """One recall through a usable activation's profile (``dcx recall`` and the workbench).

    ``profile_unchanged``, when given, is asked after the call: False turns
    the answer into ``unavailable/profile_changed_during_recall``.
    """
    profile = state.profile
    if profile is None or state.agent_id is None:
        raise DcxError("recall needs a usable activation", code="internal_error")
    request = build_request(
        profile.context_provider,
        scope_ref=scope,
        query=query,
        query_summary=query_summary,
        max_results=max_results,
        timeout_seconds=timeout,
        observed_at=clock.now(),
        labels=labels,
    )
    key = _key(ws)
    run = run_recall(
        ws,
        profile,
        request,
        minter=RefMinter(ws, key, record=False),
        clock=clock,
        transient=True,
        ready_file=ready_file,
    )
    if profile_unchanged is not None and not profile_unchanged():
        changed = unavailable(
            request,
            run.retrieval.provider,
            "profile_changed_during_recall",
            provider_version=run.retrieval.provider_version,
            search_performed=run.retrieval.search_performed,
        )._replace(latency_ms=run.retrieval.latency_ms)
        run = RecallRun(request, changed, ())
    receipt = run.receipt(
        PacketContext(goal_id=ws.goal_id, key_id=key.key_id, agent_id=state.agent_id)
    )
    packet = recall_packet.build(
        goal_id=ws.goal_id,
        agent_id=state.agent_id,
        receipt=receipt,
        pairs=run.pairs(),
        provider_readiness=run.retrieval.provider_readiness,
    )
    if run.retrieval.ok:
        return Result("recall", packet)
    reason = run.retrieval.reason_code
    advice = hint(reason)
    warning = f"recall unavailable ({reason})" + (f": {advice}" if advice else "")
    return Result("recall", packet, status="partial", warnings=[warning])
