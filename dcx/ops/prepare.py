"""``dcx prepare``: rebuild what is currently true for a decision (SPEC §8.2).

scan (against the committed cursors) → exact read (policy permitting) →
advisory recall (when a query is given) → evidence, by one of four modes:

- ``none`` (no flag): a read-only preview; changed sources are preserved;
- ``agent`` (``--rebase FILE``): the agent's account of what changed;
- ``auto`` (``--auto-rebase``): generic facts, recall judged by authority;
- ``baseline`` (``--baseline``): adopt the current state of each source.

It stores the scan receipts, coverage, freshness, retrieval receipt,
evidence, rebase receipt, cursor checkpoint and the assembly embedding them,
appends the decision index and writes the private pending companion. It
never touches the committed cursor file. ``--show-content`` instead returns
a ``local_private_transient`` packet with the content and writes nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from dcx.core.clock import Clock, parse_ts
from dcx.core.envelope import PacketContext
from dcx.core.errors import InvalidInput
from dcx.core.result import Result
from dcx.core.workspace import Workspace
from dcx.evidence import rebasing
from dcx.evidence.assembler import (
    MAX_CONTENT_CANDIDATES,
    AuthorityReader,
    Change,
    EvidenceDraft,
    previous_claims,
)
from dcx.evidence.builders import (
    build_coverage,
    build_freshness,
    build_manifest,
    build_scan_receipt,
)
from dcx.evidence.checkpoints import READY, derive_rows
from dcx.ops._common import check_decision_id, json_input, validated
from dcx.packets import assembly, checkpoint, evidence, manifest, rebase, retrieval
from dcx.packets import coverage as coverage_packets
from dcx.packets import freshness as freshness_packets
from dcx.packets import scan as scan_packets
from dcx.providers.bm25 import find_by_content, parse_resource_ref
from dcx.sources import alerts
from dcx.sources.files import CurrentFiles
from dcx.sources.plane import (
    content_kind_after_read,
    exact_read_scan,
    read_times,
    scan_sources,
    select_sources,
)
from dcx.sources.registry import Providers
from dcx.state import decisions, pending
from dcx.state.activation import require_active
from dcx.state.cursors import agent_cursors, read_freshness, record_freshness
from dcx.state.keys import load_key
from dcx.state.profile import Profile, Registry
from dcx.state.refmap import RefMinter
from dcx.state.source_health import read_source_health, record_source_health
from dcx.state.statements import signed
from dcx.state.store import Store

if TYPE_CHECKING:
    from dcx.evidence.recall import RecallRun
    from dcx.providers.base import RetrievalRequest
    from dcx.sources.base import ReadResult
    from dcx.sources.plane import SourceScan

MODES = ("agent", "auto", "baseline", "none")


def _changes(scans, reads, minter: RefMinter) -> list[Change]:
    out = []
    for scan in scans:
        source_reads = reads.get(scan.source_id, {})
        for item in scan.items:
            read = source_reads.get(item.resource_ref)
            out.append(
                Change(
                    source_id=scan.source_id,
                    path=item.resource_ref,
                    revision=item.revision,
                    change=item.change,
                    content_kind=content_kind_after_read(item, read),
                    change_ref=minter.change_ref(scan.source_id, item.resource_ref),
                    revision_ref=minter.revision_ref(
                        scan.source_id, item.resource_ref, item.revision
                    ),
                    read_status=read.status if read is not None else None,
                    content=read.content
                    if read is not None and read.status == "verified"
                    else None,
                    observed_at=item.observed_at,
                )
            )
    return out


def authority_reader(
    ws: Workspace, profile: Profile, registry: Registry, minter: RefMinter, changes: list[Change]
) -> AuthorityReader:
    """The assembler's reader of current authority, wired to the planes: exact reads of files as
    they are now (the source plane) and content candidates from the bm25 index (the providers)."""
    files = CurrentFiles(
        ws, max_read_bytes=profile.max_read_bytes, timeout_seconds=profile.scan_timeout_seconds
    )
    return AuthorityReader(
        registry,
        minter,
        changes,
        read_file=files.read,
        chunk_of=parse_resource_ref,
        find_by_content=lambda text: find_by_content(ws, text, MAX_CONTENT_CANDIDATES),
    )


def _provider_health(scans, run, observed_at: str) -> list[dict[str, Any]]:
    by_provider: dict[str, list] = {}
    for scan in scans:
        by_provider.setdefault(scan.provider_id, []).append(scan)
    rows = []
    for provider_id, group in by_provider.items():
        bad = [s for s in group if not s.ok]
        status = "healthy" if not bad else ("unavailable" if len(bad) == len(group) else "degraded")
        rows.append(
            {
                "provider": provider_id,
                "status": status,
                "observed_at": observed_at,
                "fail_open": True,
                "reason_code": bad[0].reason_code if bad else None,
            }
        )
    if run is not None:
        answer = run.retrieval
        rows.append(
            {
                "provider": answer.provider,
                "status": "healthy" if answer.ok else "unavailable",
                "reason_code": answer.reason_code,
                "observed_at": observed_at,
                "fail_open": True,
            }
        )
    return [{k: v for k, v in r.items() if v is not None} for r in rows]


def _show_content(changes: list[Change], run: RecallRun | None) -> Result:
    items = [
        {
            "source_id": c.source_id,
            "path": c.path,
            "change_ref": c.change_ref,
            "revision_ref": c.revision_ref,
            "change": c.change,
            "content_kind": c.content_kind,
            "content": c.content,
        }
        for c in changes
    ]
    results = [
        {"provider_ref": ref, "summary": item.summary, "score": item.score, "content": item.content}
        for ref, item in (run.pairs() if run is not None else [])
    ]
    packet = {
        "schema_version": "decision_context_prepare_content_v0",
        "visibility": "local_private_transient",
        "authority": "advisory_only",
        "content_trust": "untrusted_advisory",
        "content_may_instruct": False,
        "exact_reads": items,
        "recall_results": results,
        "recall_status": run.retrieval.status if run is not None else "not_run",
    }
    return Result("prepare", {"content": packet}, status="ok")


class Run(NamedTuple):
    """What every phase of one run shares: where, for which decision, as whom, and when."""

    ws: Workspace
    decision_id: str
    profile: Profile
    registry: Registry
    mode: str
    agent_id: str
    key_id: str
    minter: RefMinter
    ctx: PacketContext  # the decision's packets carry the decision and the agent
    clock: Clock
    now: str
    wait: float


class Observed(NamedTuple):
    """What this run saw: scans, their exact reads, the recall, and the changed items."""

    scans: list[SourceScan]
    reads: dict[str, dict[str, ReadResult]]
    run: RecallRun | None
    changes: list[Change]


class Account(NamedTuple):
    """What the run makes of it: freshness as it will be once recorded, and the evidence draft."""

    read_at: dict[str, str]
    freshness: dict[str, Any]
    draft: EvidenceDraft
    alerts: dict[str, alerts.Assessment]  # each scanned source's attempt (SPEC §5.5 v4)


class Packets(NamedTuple):
    manifest: dict[str, Any]
    receipts: list[dict[str, Any]]
    coverage: dict[str, Any]
    freshness: dict[str, Any]
    retrieval: dict[str, Any] | None
    evidence: dict[str, Any]
    rebase: dict[str, Any]
    checkpoint: dict[str, Any]
    assembly: dict[str, Any]
    ready: list[dict[str, Any]]  # the checkpoint rows ready after writeback


@signed("prepare")  # one signed statement of what it read and wrote (SPEC §18)
def prepare(
    *,
    ws: Workspace,
    decision_id: str,
    agent_id: str | None,
    source_ids: list[str],
    query: str | None,
    query_file: str | None,
    query_summary: str | None,
    scope: str | None,
    clock: Clock,
    rebase_file: str | None,
    auto_rebase: bool,
    baseline: bool,
    show_content: bool,
    wait: float,
    progress: Any = None,
    rebase_document: object = None,
) -> Result:
    """observe (scan, read, recall) → account (freshness, facts, claims) → assemble (the
    packets, the checkpoint among them) → persist (store, one index append, the companion)."""
    check_decision_id(decision_id)
    mode = _mode(rebase_file, rebase_document, auto_rebase, baseline, show_content, query_file)
    state = require_active(ws, agent_id)
    profile, registry = state.settings()
    agent = state.acting_agent()
    rebase_input = _rebase_input(rebase_file, rebase_document) if mode == "agent" else None
    now = clock.now()
    key = load_key(ws)
    ctx = PacketContext(ws.goal_id, key.key_id, decision_id, agent)
    minter = RefMinter(ws, key, record=not show_content)
    run = Run(
        ws, decision_id, profile, registry, mode, agent, key.key_id, minter, ctx, clock, now, wait
    )
    # recall first: its request bounds are input checks (exit 2) that must come before any scan
    request = _recall_request(profile, query, query_file, query_summary, scope, now)
    seen = observe(run, source_ids, request, progress=progress, transient=show_content)
    if show_content:
        return _show_content(seen.changes, seen.run)
    acct = account(run, seen, rebase_input)
    packets = assemble(run, seen, acct, rebase_input)
    persist(run, seen, acct, packets)
    return _result(seen, acct, packets, mode)


def _mode(
    rebase_file: str | None,
    rebase_document: object,
    auto_rebase: bool,
    baseline: bool,
    show_content: bool,
    query_file: str | None,
) -> str:
    """The mode the flags choose (``show_content`` is ``none``, writing nothing); one at a time."""
    agent_rebase = rebase_file is not None or rebase_document is not None
    chosen = [
        flag
        for flag, on in (
            ("--rebase", agent_rebase),
            ("--auto-rebase", auto_rebase),
            ("--baseline", baseline),
            ("--show-content", show_content),
        )
        if on
    ]
    if len(chosen) > 1:
        raise InvalidInput(
            f"{' and '.join(chosen)} cannot be combined", field=chosen[1], code="flags_exclusive"
        )
    if rebase_file == "-" and query_file == "-":
        raise InvalidInput(
            "--rebase - and --query-file -: only one input can come from stdin",
            field="--query-file",
            code="stdin_twice",
            hint="put the query or the rebase input in a file",
        )
    return (
        "agent" if agent_rebase else "auto" if auto_rebase else "baseline" if baseline else "none"
    )


def _rebase_input(rebase_file: str | None, rebase_document: object) -> tuple[dict[str, Any], str]:
    """The agent's ``--rebase`` account, checked, and the digest of its content."""
    from dcx.core.canonical import content_digest

    raw, display = json_input(rebase_file, rebase_document, flag="--rebase", name="rebase")
    body = validated(rebase.INPUT, raw, display)
    if body.get("semantic_no_change") and any(
        body.get(k)
        for k in ("changed_facts", "recalled_claims", "stale_or_rejected_claims", "conflicts")
    ):
        raise InvalidInput(
            f"{display}: semantic_no_change cannot come with records",
            field="semantic_no_change",
            code="semantic_no_change_with_records",
        )
    return body, content_digest(body)[:32]


def _recall_request(
    profile: Profile,
    query: str | None,
    query_file: str | None,
    query_summary: str | None,
    scope: str | None,
    now: str,
) -> RetrievalRequest | None:
    if query is None and query_file is None:
        return None
    import sys

    from dcx.evidence.recall import build_request
    from dcx.ops.recall import read_query

    if not query_summary:
        raise InvalidInput("--query-summary: required with --query", field="--query-summary")
    text, _ = read_query(query, query_file, sys.stdin)
    return build_request(
        profile.context_provider,
        scope_ref=scope,
        query=text,
        query_summary=query_summary,
        max_results=None,
        timeout_seconds=None,
        observed_at=now,
        labels={"scope_ref": "--scope", "query": "--query", "query_summary": "--query-summary"},
    )


def observe(
    run: Run,
    source_ids: list[str],
    request: RetrievalRequest | None,
    *,
    progress: Any,
    transient: bool,
) -> Observed:
    """Scan the selected sources against the agent's committed cursors, exact-read (no reads
    for a baseline: it adopts), and recall once when there is a request."""
    from dcx.evidence.recall import run_recall

    ws, profile, registry, mode, minter, clock = (
        run.ws,
        run.profile,
        run.registry,
        run.mode,
        run.minter,
        run.clock,
    )

    selected = select_sources(registry, source_ids)
    providers = Providers(ws, profile, registry, progress=progress, persist=not transient)
    # this agent's cursors (SPEC §16)
    committed = agent_cursors(ws, run.agent_id, profile.enabled_agents, wait=run.wait)
    scans = scan_sources(
        providers, selected, committed=committed, clock=clock, adopt=mode == "baseline"
    )
    reads = (
        {}
        if mode == "baseline"
        else {s.source_id: exact_read_scan(providers, s, clock=clock) for s in scans}
    )
    recall = None
    if request is not None:
        recall = run_recall(ws, profile, request, minter=minter, clock=clock, transient=transient)
    return Observed(scans, reads, recall, _changes(scans, reads, minter))


def account(run: Run, seen: Observed, rebase_input: tuple[dict[str, Any], str] | None) -> Account:
    """Freshness as it will be once this run's reads are recorded, then the evidence draft:
    facts and claims by the mode's rules, every changed item cited."""
    ws, registry, minter, now = run.ws, run.registry, run.minter, run.now
    read_at = read_times(seen.scans, seen.reads)
    last_reads = read_freshness(ws)
    for source_id, stamp in read_at.items():
        if source_id not in last_reads or parse_ts(stamp) > parse_ts(last_reads[source_id]):
            last_reads[source_id] = stamp
    fresh = build_freshness(run.ctx, registry, seen.scans, last_reads, now)
    freshness_of = {
        row["source_id"]: ("current" if row["status"] == "fresh" else "stale")
        for row in fresh["sources"]
    }
    draft = EvidenceDraft(now, freshness_of)
    reader = authority_reader(ws, run.profile, registry, minter, seen.changes)
    if run.mode == "auto":
        earlier = [
            Store(ws).get(ref, kind="evidence")
            for ref in decisions.refs_of(ws, run.decision_id, "evidence")
        ]
        policies = {s.source_id: s.exact_read_policy for s in registry.sources}
        rebasing.auto(
            draft, seen.changes, policies, reader, seen.run, previous_claims(earlier), minter
        )
    elif run.mode == "agent" and rebase_input is not None:
        rebasing.agent(draft, rebase_input[0], seen.changes, reader, seen.run, minter)
    elif run.mode == "baseline":
        rebasing.baseline(draft, seen.scans, minter)
    for change in seen.changes:  # every changed item is a source revision, cited or not
        draft.cite(change.source_id, change.change_ref, change.revision_ref, changed=True)
    assessed = alerts.assess(
        seen.scans,
        None if run.mode == "baseline" else seen.reads,
        read_source_health(ws),
        failure_alert_after=run.profile.failure_alert_after,
    )
    return Account(read_at, fresh, draft, assessed)


def assemble(
    run: Run, seen: Observed, acct: Account, rebase_input: tuple[dict[str, Any], str] | None
) -> Packets:
    """Every packet of the run, built and validated, the assembly embedding them last. The run's
    own packets carry the decision and the agent; the manifest describes the registry (no agent
    made it) and stays goal-level."""
    ctx, registry, minter, mode, now = run.ctx, run.registry, run.minter, run.mode, run.now
    body, input_digest = rebase_input if rebase_input is not None else (None, None)
    goal_ctx = PacketContext(ctx.goal_id, ctx.key_id)
    receipts = [
        build_scan_receipt(
            ctx, s, seen.reads.get(s.source_id, {}), minter, acct.alerts[s.source_id].public()
        )
        for s in seen.scans
    ]
    coverage = build_coverage(ctx, registry, seen.scans, seen.reads)
    man = build_manifest(goal_ctx, registry)
    evidence_packet = evidence.SPEC.build(
        ctx,
        {
            "observed_at": now,
            "visibility": "public_safe",
            **acct.draft.records(),
            "provider_health": _provider_health(seen.scans, seen.run, now),
        },
    )
    rebase_packet = rebase.SPEC.build(
        ctx, rebasing.receipt_values(mode, body, seen.changes, acct.draft, now, input_digest)
    )
    rows = derive_rows(
        receipts, {row["source_id"]: row for row in man["sources"]}, evidence_packet, rebase_packet
    )
    ready = [r for r in rows if r["disposition"] == READY]
    checkpoint_packet = checkpoint.SPEC.build(
        ctx,
        {
            "observed_at": now,
            "rows": rows,
            "ready_count": len(ready),
            "preserve_count": len(rows) - len(ready),
        },
    )
    retrieval_packet = seen.run.receipt(ctx) if seen.run is not None else None
    assembly_packet = assembly.SPEC.build(
        ctx,
        {
            "observed_at": now,
            "agent_id": run.agent_id,
            "mode": mode,
            "preview": mode == "none",
            "coverage_status": coverage["status"],
            "manifest": man,
            "scan_receipts": receipts,
            "coverage": coverage,
            "freshness": acct.freshness,
            "retrieval": retrieval_packet,
            "evidence": evidence_packet,
            "rebase": rebase_packet,
            "checkpoint": checkpoint_packet,
        },
    )
    return Packets(
        man,
        receipts,
        coverage,
        acct.freshness,
        retrieval_packet,
        evidence_packet,
        rebase_packet,
        checkpoint_packet,
        assembly_packet,
        ready,
    )


def persist(run: Run, seen: Observed, acct: Account, packets: Packets) -> None:
    """Store the parts first and the assembly last, then append the decision index (one append
    under one lock) and write the private pending companion. The cursor file is never touched."""
    ws, decision_id, wait = run.ws, run.decision_id, run.wait
    run.minter.flush()
    record_freshness(ws, acct.read_at, wait=wait)
    store = Store(ws)
    stored = (
        [(manifest.SPEC, packets.manifest)]
        + [(scan_packets.SPEC, r) for r in packets.receipts]
        + [(coverage_packets.SPEC, packets.coverage), (freshness_packets.SPEC, packets.freshness)]
    )
    if packets.retrieval is not None:
        stored.append((retrieval.SPEC, packets.retrieval))
    stored += [
        (evidence.SPEC, packets.evidence),
        (rebase.SPEC, packets.rebase),
        (checkpoint.SPEC, packets.checkpoint),
        (assembly.SPEC, packets.assembly),
    ]
    for spec, packet in stored:
        store.put_built(spec, packet)
    indexed = [
        (spec.kind, packet[spec.ref_field]) for spec, packet in stored if spec is not manifest.SPEC
    ]
    decisions.append_many(ws, decision_id, indexed, run.now, wait=wait)
    record_source_health(ws, alerts.records(acct.alerts), wait=wait)
    by_id = {s.source_id: s for s in seen.scans}
    pending.write(
        ws,
        {
            "goal_id": ws.goal_id,
            "decision_id": decision_id,
            "assembly_ref": packets.assembly["assembly_ref"],
            "evidence_packet_ref": packets.evidence["packet_ref"],
            "checkpoint_ref": packets.checkpoint["checkpoint_ref"],
            "profile_digest": run.profile.digest,
            "registry_digest": run.registry.digest,
            "key_id": run.key_id,
            "expected_cursors": {
                r["source_id"]: by_id[r["source_id"]].cursor_before for r in packets.ready
            },
            "proposed_cursors": {
                r["source_id"]: by_id[r["source_id"]].cursor_after for r in packets.ready
            },
            "exact_reads": [
                {"source_id": c.source_id, "resource_ref": c.path, "revision": c.revision}
                for c in seen.changes
                if c.read_status == "verified"
            ],
        },
    )


def _result(seen: Observed, acct: Account, packets: Packets, mode: str) -> Result:
    coverage_status = packets.coverage["status"]
    run = seen.run
    partial = (
        coverage_status == "partial"
        or (run is not None and not run.retrieval.ok)
        or any(not s.ok for s in seen.scans)
    )
    warnings = []
    if coverage_status == "partial" and mode == "baseline":
        warnings.append(
            "coverage is partial: a baseline adopts the current state without reading it "
            "(no exact read confirmed the adopted revisions)"
        )
    elif coverage_status == "partial":
        warnings.append(
            "coverage is partial: a required (p0) source was not fully scanned and read"
        )
    for scan in seen.scans:
        if not scan.ok:
            warnings.append(
                f"source {scan.source_id} is {scan.status} ({scan.reason_code}); it keeps its cursor"
            )
    if run is not None and not run.retrieval.ok:
        from dcx.providers.reasons import hint

        advice = hint(run.retrieval.reason_code)
        warnings.append(
            f"recall is unavailable ({run.retrieval.reason_code}); the evidence rests on authority alone"
            + (f" (hint: {advice})" if advice else "")
        )
    ready = len(packets.ready)
    rows = len(packets.checkpoint["rows"])
    return Result(
        "prepare",
        {
            "assembly": packets.assembly,
            "summary": {
                "assembly_ref": packets.assembly["assembly_ref"],
                "evidence_packet_ref": packets.evidence["packet_ref"],
                "mode": mode,
                "preview": mode == "none",
                "coverage_status": coverage_status,
                "changed_items": len(seen.changes),
                "facts": len(acct.draft.facts),
                "accepted_claims": len(acct.draft.claims),
                "stale_or_rejected_claims": packets.rebase["stale_or_rejected_claim_count"],
                "ready_sources": ready,
                "preserved_sources": rows - ready,
            },
        },
        status="partial" if partial else "ok",
        warnings=warnings,
    )
