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

from typing import Any

from dcx import decisions, pending, rebasing
from dcx.activation import require_active
from dcx.assembler import (
    AuthorityReader,
    Change,
    EvidenceDraft,
    previous_claims,
)
from dcx.checkpoints import READY, derive_rows
from dcx.clock import clock_from_env, parse_ts
from dcx.cursors import agent_cursors, read_freshness, record_freshness
from dcx.errors import InvalidInput
from dcx.keys import load_key
from dcx.ops._common import check_decision_id, json_input, validated
from dcx.packets import assembly, checkpoint, evidence, manifest, rebase, retrieval
from dcx.packets import coverage as coverage_packets
from dcx.packets import freshness as freshness_packets
from dcx.packets import scan as scan_packets
from dcx.packets.coverage import build_coverage
from dcx.packets.freshness import build_freshness
from dcx.packets.scan import build_scan_receipt
from dcx.packets.spec import PacketContext
from dcx.refmap import RefMinter
from dcx.result import Result
from dcx.sources.plane import exact_read_scan, read_times, scan_sources, select_sources
from dcx.sources.registry import Providers
from dcx.store import Store
from dcx.workspace import Workspace

MODES = ("agent", "auto", "baseline", "none")


def _changes(scans, reads, minter: RefMinter) -> list[Change]:
    out = []
    for scan in scans:
        source_reads = reads.get(scan.source_id, {})
        for item in scan.items:
            read = source_reads.get(item.resource_ref)
            kind = read.content_kind if read is not None and read.absorbed else item.content_kind
            out.append(Change(
                source_id=scan.source_id, path=item.resource_ref, revision=item.revision, change=item.change,
                content_kind=kind or item.content_kind,
                change_ref=minter.change_ref(scan.source_id, item.resource_ref),
                revision_ref=minter.revision_ref(scan.source_id, item.resource_ref, item.revision),
                read_status=read.status if read is not None else None,
                content=read.content if read is not None and read.status == "verified" else None,
                observed_at=item.observed_at,
            ))
    return out


def _provider_health(scans, run, observed_at: str) -> list[dict[str, Any]]:
    by_provider: dict[str, list] = {}
    for scan in scans:
        by_provider.setdefault(scan.provider_id, []).append(scan)
    rows = []
    for provider_id, group in by_provider.items():
        bad = [s for s in group if not s.ok]
        status = "healthy" if not bad else ("unavailable" if len(bad) == len(group) else "degraded")
        rows.append({"provider": provider_id, "status": status, "observed_at": observed_at, "fail_open": True,
                     "reason_code": bad[0].reason_code if bad else None})
    if run is not None:
        answer = run.retrieval
        rows.append({"provider": answer.provider, "status": "healthy" if answer.ok else "unavailable",
                     "reason_code": answer.reason_code, "observed_at": observed_at, "fail_open": True})
    return [{k: v for k, v in r.items() if v is not None} for r in rows]


def _show_content(scans, changes: list[Change], run) -> Result:
    items = [
        {"source_id": c.source_id, "path": c.path, "change_ref": c.change_ref, "revision_ref": c.revision_ref,
         "change": c.change, "content_kind": c.content_kind, "content": c.content}
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
    observed_at: str | None,
    rebase_file: str | None,
    auto_rebase: bool,
    baseline: bool,
    show_content: bool,
    wait: float,
    progress: Any = None,
    rebase_document: object = None,
) -> Result:
    check_decision_id(decision_id)
    agent_rebase = rebase_file is not None or rebase_document is not None
    chosen = [flag for flag, on in (("--rebase", agent_rebase), ("--auto-rebase", auto_rebase),
                                     ("--baseline", baseline), ("--show-content", show_content)) if on]
    if len(chosen) > 1:
        raise InvalidInput(f"{' and '.join(chosen)} cannot be combined", field=chosen[1], code="flags_exclusive")
    if rebase_file == "-" and query_file == "-":
        raise InvalidInput("--rebase - and --query-file -: only one input can come from stdin",
                           field="--query-file", code="stdin_twice",
                           hint="put the query or the rebase input in a file")
    mode = "agent" if agent_rebase else "auto" if auto_rebase else "baseline" if baseline else "none"
    state = require_active(ws, agent_id)
    profile, registry = state.profile, state.registry
    assert profile is not None and registry is not None and state.agent_id is not None
    body = None
    input_digest = None
    if agent_rebase:
        raw, display = json_input(rebase_file, rebase_document, flag="--rebase", name="rebase")
        body = validated(rebase.INPUT, raw, display)
        if body.get("semantic_no_change") and any(body.get(k) for k in (
                "changed_facts", "recalled_claims", "stale_or_rejected_claims", "conflicts")):
            raise InvalidInput(f"{display}: semantic_no_change cannot come with records",
                               field="semantic_no_change", code="semantic_no_change_with_records")
        from dcx.canonical import content_digest

        input_digest = content_digest(body)[:32]
    clock = clock_from_env(observed_at)
    now = clock.now()
    key = load_key(ws)
    store = Store(ws)
    minter = RefMinter(ws, key, record=not show_content)
    ctx = PacketContext(ws.goal_id, key.key_id, decision_id, state.agent_id)
    goal_ctx = PacketContext(ws.goal_id, key.key_id)  # the manifest describes the registry: no agent made it

    # recall first: its request bounds are input checks (exit 2) that must come before any scan
    run = None
    if query is not None or query_file is not None:
        import sys

        from dcx.ops.recall import read_query
        from dcx.providers.runner import build_request, run_recall

        if not query_summary:
            raise InvalidInput("--query-summary: required with --query", field="--query-summary")
        text, _ = read_query(query, query_file, sys.stdin)
        request = build_request(profile.context_provider, scope_ref=scope, query=text,
                                query_summary=query_summary, max_results=None, timeout_seconds=None,
                                observed_at=now, labels={"scope_ref": "--scope", "query": "--query",
                                                         "query_summary": "--query-summary"})

    selected = select_sources(registry, source_ids)
    providers = Providers(ws, profile, registry, progress=progress, persist=not show_content)
    committed = agent_cursors(ws, state.agent_id, profile.enabled_agents, wait=wait)  # this agent's (SPEC §16)
    scans = scan_sources(providers, selected, committed=committed, clock=clock, adopt=mode == "baseline")
    reads = {} if mode == "baseline" else {s.source_id: exact_read_scan(providers, s, clock=clock) for s in scans}
    if query is not None or query_file is not None:
        run = run_recall(ws, profile, request, minter=minter, clock=clock, transient=show_content)
    changes = _changes(scans, reads, minter)
    if show_content:
        return _show_content(scans, changes, run)

    # the run's own packets carry the decision (and get index lines); the manifest stays goal-level
    receipts = [build_scan_receipt(ctx, s, reads.get(s.source_id, {}), minter) for s in scans]
    # freshness as it will be once this run's reads are recorded (recorded only when the run is stored)
    read_at = read_times(scans, reads)
    last_reads = read_freshness(ws)
    for source_id, stamp in read_at.items():
        if source_id not in last_reads or parse_ts(stamp) > parse_ts(last_reads[source_id]):
            last_reads[source_id] = stamp
    fresh = build_freshness(ctx, registry, scans, last_reads, now)
    coverage = build_coverage(ctx, registry, scans, reads, reads_required=mode != "baseline")
    man = manifest.build_manifest(goal_ctx, registry)
    freshness_of = {row["source_id"]: ("current" if row["status"] == "fresh" else "stale") for row in fresh["sources"]}

    draft = EvidenceDraft(now, freshness_of)
    policies = {s.source_id: s.exact_read_policy for s in registry.sources}
    reader = AuthorityReader(ws, profile, registry, minter, changes)
    earlier = [store.get(ref, kind="evidence") for ref in decisions.refs_of(ws, decision_id, "evidence")]
    if mode == "auto":
        rebasing.auto(draft, changes, policies, reader, run, previous_claims(earlier), minter)
    elif mode == "agent":
        rebasing.agent(draft, body or {}, changes, reader, run, minter)
    elif mode == "baseline":
        rebasing.baseline(draft, scans, minter)
    for change in changes:  # every changed item is a source revision, cited or not
        draft.cite(change.source_id, change.change_ref, change.revision_ref, changed=True)

    evidence_packet = evidence.SPEC.build(ctx, {
        "observed_at": now, "visibility": "public_safe", **draft.records(),
        "provider_health": _provider_health(scans, run, now),
    })
    rebase_packet = rebase.SPEC.build(ctx, rebasing.receipt_values(mode, body, changes, draft, now, input_digest))
    manifest_rows = {row["source_id"]: row for row in man["sources"]}
    rows = derive_rows(receipts, manifest_rows, evidence_packet, rebase_packet)
    ready = [r for r in rows if r["disposition"] == READY]
    checkpoint_packet = checkpoint.SPEC.build(ctx, {
        "observed_at": now, "rows": rows, "ready_count": len(ready), "preserve_count": len(rows) - len(ready),
    })
    retrieval_packet = run.receipt(ctx) if run is not None else None
    coverage_status = coverage["status"]
    assembly_packet = assembly.SPEC.build(ctx, {
        "observed_at": now, "agent_id": state.agent_id, "mode": mode, "preview": mode == "none",
        "coverage_status": coverage_status, "manifest": man, "scan_receipts": receipts, "coverage": coverage,
        "freshness": fresh, "retrieval": retrieval_packet, "evidence": evidence_packet,
        "rebase": rebase_packet, "checkpoint": checkpoint_packet,
    })

    # store: parts first, the assembly last, then the index and the private companion
    minter.flush()
    record_freshness(ws, read_at, wait=wait)
    store.put_built(manifest.SPEC, man)
    for receipt in receipts:
        store.put_built(scan_packets.SPEC, receipt)
    store.put_built(coverage_packets.SPEC, coverage)
    store.put_built(freshness_packets.SPEC, fresh)
    if retrieval_packet is not None:
        store.put_built(retrieval.SPEC, retrieval_packet)
    for spec, packet in ((evidence.SPEC, evidence_packet), (rebase.SPEC, rebase_packet),
                         (checkpoint.SPEC, checkpoint_packet), (assembly.SPEC, assembly_packet)):
        store.put_built(spec, packet)
    indexed = [("scan", r["receipt_ref"]) for r in receipts] + [
        ("coverage", coverage["coverage_ref"]), ("freshness", fresh["freshness_ref"])]
    if retrieval_packet is not None:
        indexed.append(("retrieval", retrieval_packet["retrieval_ref"]))
    indexed += [("evidence", evidence_packet["packet_ref"]), ("rebase", rebase_packet["rebase_ref"]),
                ("checkpoint", checkpoint_packet["checkpoint_ref"]), ("assembly", assembly_packet["assembly_ref"])]
    for kind, ref in indexed:
        decisions.append(ws, decision_id, kind, ref, now, wait=wait)
    by_id = {s.source_id: s for s in scans}
    pending.write(ws, {
        "goal_id": ws.goal_id, "decision_id": decision_id, "assembly_ref": assembly_packet["assembly_ref"],
        "evidence_packet_ref": evidence_packet["packet_ref"], "checkpoint_ref": checkpoint_packet["checkpoint_ref"],
        "profile_digest": profile.digest, "registry_digest": registry.digest, "key_id": key.key_id,
        "expected_cursors": {r["source_id"]: by_id[r["source_id"]].cursor_before for r in ready},
        "proposed_cursors": {r["source_id"]: by_id[r["source_id"]].cursor_after for r in ready},
        "exact_reads": [{"source_id": c.source_id, "resource_ref": c.path, "revision": c.revision}
                        for c in changes if c.read_status == "verified"],
    })
    partial = coverage_status == "partial" or (run is not None and not run.retrieval.ok) or any(
        not s.ok for s in scans)
    warnings = []
    if coverage_status == "partial":
        warnings.append("coverage is partial: a required (p0) source was not fully scanned and read")
    for scan in scans:
        if not scan.ok:
            warnings.append(f"source {scan.source_id} is {scan.status} ({scan.reason_code}); it keeps its cursor")
    if run is not None and not run.retrieval.ok:
        from dcx.providers.reasons import hint

        advice = hint(run.retrieval.reason_code)
        warnings.append(f"recall is unavailable ({run.retrieval.reason_code}); the evidence rests on authority alone"
                        + (f" (hint: {advice})" if advice else ""))
    return Result("prepare", {
        "assembly": assembly_packet,
        "summary": {
            "assembly_ref": assembly_packet["assembly_ref"],
            "evidence_packet_ref": evidence_packet["packet_ref"],
            "mode": mode, "preview": mode == "none", "coverage_status": coverage_status,
            "changed_items": len(changes), "facts": len(draft.facts), "accepted_claims": len(draft.claims),
            "stale_or_rejected_claims": rebase_packet["stale_or_rejected_claim_count"],
            "ready_sources": len(ready), "preserved_sources": len(rows) - len(ready),
        },
    }, status="partial" if partial else "ok", warnings=warnings)
