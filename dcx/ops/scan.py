"""``dcx scan``: scan sources against their committed cursors, store one receipt each (SPEC §5).

Needs activation. Scans the enabled incremental and snapshot sources, or the
``--source`` ids given (which may name on-demand sources; unknown or disabled
ids are exit 2). Each receipt is stored as a goal-level packet (no decision
index line). It performs no exact read and never writes the cursor file:
scanning never marks anything absorbed. ``partial`` when any source failed
or was unavailable (fail-open: still exit 0). Each scan is an attempt of its
source (SPEC §5.5 v4, ``dcx.sources.alerts``): its receipt carries the
source's failure streak and the alerts it raised or cleared, and the private
record (``private/source-health.json``) is updated once the receipts are stored.
"""

from __future__ import annotations

from collections.abc import Sequence

from dcx.core.clock import Clock
from dcx.core.envelope import PacketContext
from dcx.core.result import Result
from dcx.core.workspace import Workspace
from dcx.evidence.builders import build_scan_receipt
from dcx.packets import scan as scan_packet
from dcx.sources import alerts
from dcx.sources.plane import scan_sources, select_sources
from dcx.sources.registry import ProgressFactory, Providers
from dcx.state.activation import require_active
from dcx.state.cursors import agent_cursors
from dcx.state.keys import load_key
from dcx.state.refmap import RefMinter
from dcx.state.source_health import read_source_health, record_source_health
from dcx.state.statements import signed
from dcx.state.store import Store


@signed("scan")  # one signed statement of what it wrote (SPEC §18)
def scan(
    *,
    ws: Workspace,
    agent_id: str | None,
    source_ids: Sequence[str] = (),
    clock: Clock,
    progress: ProgressFactory | None = None,
) -> Result:
    state = require_active(ws, agent_id)
    profile, registry = state.settings()
    selected = select_sources(registry, source_ids)
    committed = agent_cursors(
        ws, state.acting_agent(), profile.enabled_agents
    )  # this agent's (SPEC §16)
    providers = Providers(ws, profile, registry, progress=progress)
    scans = scan_sources(providers, selected, committed=committed, clock=clock)
    assessed = alerts.assess(
        scans, None, read_source_health(ws), failure_alert_after=profile.failure_alert_after
    )
    key = load_key(ws)
    ctx = PacketContext(goal_id=ws.goal_id, key_id=key.key_id, agent_id=state.agent_id)
    store = Store(ws)
    receipts = []
    with RefMinter(ws, key) as minter:
        for one in scans:
            receipt = build_scan_receipt(ctx, one, {}, minter, assessed[one.source_id].public())
            store.put_built(scan_packet.SPEC, receipt)
            receipts.append(receipt)
    record_source_health(ws, alerts.records(assessed))
    partial = any(not one.ok for one in scans)
    warnings = (
        []
        if selected
        else ["no source selected: sources.toml has no enabled incremental or snapshot source"]
    )
    return Result(
        "scan", {"receipts": receipts}, status="partial" if partial else "ok", warnings=warnings
    )
