"""Own chains: which of a decision's chains the acting agent works on, here (SPEC §16).

A **chain** of a decision is everything bound to one evidence packet: the
assemblies holding it, the evidence, proposals bound to it, their outcomes,
reviews, commit receipts and feedback (each carries ``evidence_packet_ref``).
Several agents and hosts may each prepare the same decision id; git merges
their index lines. ``propose``, ``outcome``, ``writeback``, ``feedback`` and
``review`` default to the acting agent's **own** chain on this host:

1. the latest assembly of the acting agent whose pending companion
   (``private/pending/``) is on this host — what it prepared here and has
   not committed (two agents may share a host; one agent id may work on two);
2. else the latest assembly the acting agent stored (its ``agent_id``);
3. else the latest assembly whose companion is here (packets stored before
   agents were recorded);
4. else the latest evidence.

When another chain of the decision has a packet later (by ``observed_at``)
than the own chain's latest, a warning names that chain's agent and packet,
so a pulled newer chain is never bound silently and never hidden.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from dcx.core.workspace import Workspace
from dcx.names import same_actor
from dcx.state import decisions, pending
from dcx.state.store import Store


def agent_of(packet: dict[str, Any]) -> str | None:
    """The agent that stored a packet: ``agent_id`` (envelope or assembly), else who proposed or recorded it."""
    for key in ("agent_id", "proposed_by", "recorded_by"):
        value = packet.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def evidence_of(packet: dict[str, Any]) -> str | None:
    """The evidence a packet's chain hangs on."""
    if isinstance(packet.get("evidence_packet_ref"), str):
        return packet["evidence_packet_ref"]
    inner = packet.get("evidence")
    if isinstance(inner, dict) and isinstance(inner.get("packet_ref"), str):
        return inner["packet_ref"]  # an assembly
    ref = packet.get("packet_ref")
    if isinstance(ref, str) and ref.startswith("decision-evidence-"):
        return ref
    return None


class Entry(
    NamedTuple
):  # a NamedTuple, not a dataclass: no `inspect` import on read paths (`dcx log`)
    kind: str
    ref: str
    observed_at: str
    packet: dict[str, Any] | None

    @property
    def evidence(self) -> str | None:
        return evidence_of(self.packet) if self.packet is not None else None


class Chains:
    """A decision's index, read once, with each packet (stubs and unreadable ones as None)."""

    def __init__(
        self,
        decision_id: str,
        entries: list[Entry],
        own_evidence: str | None,
        why: str,  # "pending" | "agent" | "latest" | "none"
        warnings: list[str] | None = None,
    ) -> None:
        self.decision_id = decision_id
        self.entries = entries
        self.own_evidence = own_evidence
        self.why = why
        self.warnings: list[str] = [] if warnings is None else warnings

    def __repr__(self) -> str:
        return (
            f"Chains(decision_id={self.decision_id!r}, own_evidence={self.own_evidence!r}, "
            f"why={self.why!r}, entries={len(self.entries)}, warnings={self.warnings!r})"
        )

    def own(self, kind: str) -> list[str]:
        """Refs of ``kind`` in the own chain, oldest first (by observed_at, then line)."""
        if self.own_evidence is None:
            return []
        return [e.ref for e in self.entries if e.kind == kind and e.evidence == self.own_evidence]

    def own_latest(self, kind: str) -> str | None:
        refs = self.own(kind)
        return refs[-1] if refs else None


def _load(store: Store, ref: str, kind: str) -> dict[str, Any] | None:
    from dcx.core.errors import DcxError
    from dcx.state.redaction import is_stub

    try:
        packet = store.get_or_stub(ref, kind=kind)
    except DcxError:  # verify reports damaged or missing packets; a chain just leaves them out
        return None
    return None if is_stub(packet) else packet


def read_chains(ws: Workspace, store: Store, decision_id: str, agent: str | None) -> Chains:
    """The decision's chains and which one is the acting agent's own on this host."""
    entries = []
    seen: set[str] = set()
    for line in decisions.entries(ws, decision_id):
        if line["ref"] in seen:
            continue  # a duplicated line (a union merge of the same append) counts once
        seen.add(line["ref"])
        entries.append(
            Entry(
                line["kind"],
                line["ref"],
                str(line.get("observed_at", "")),
                _load(store, line["ref"], line["kind"]),
            )
        )
    assemblies = [
        e for e in entries if e.kind == "assembly" and e.packet is not None and e.evidence
    ]
    here = [e for e in assemblies if pending.path_for(ws, e.ref).exists()]
    mine = [e for e in assemblies if same_actor(agent_of(e.packet or {}), agent)]
    here_mine = [e for e in here if e in mine]
    if here_mine:  # this agent's uncommitted work on this host (two agents may share a host)
        own, why = here_mine[-1].evidence, "pending"
    elif mine:
        own, why = mine[-1].evidence, "agent"
    elif here:
        own, why = here[-1].evidence, "pending"
    else:
        evidence = [e.ref for e in entries if e.kind == "evidence"]
        own, why = (evidence[-1], "latest") if evidence else (None, "none")
    chains = Chains(decision_id, entries, own, why)
    chains.warnings = _newer_elsewhere(chains)
    return chains


def _newer_elsewhere(chains: Chains) -> list[str]:
    if chains.own_evidence is None:
        return []
    own = [e for e in chains.entries if e.evidence == chains.own_evidence]
    newest_own = max((e.observed_at for e in own), default="")
    others: dict[str, Entry] = {}
    for e in chains.entries:
        ev = e.evidence
        if ev is None or ev == chains.own_evidence or e.observed_at <= newest_own:
            continue
        if ev not in others or e.observed_at >= others[ev].observed_at:
            others[ev] = e
    out = []
    for ev, e in sorted(others.items(), key=lambda item: item[1].observed_at):
        agent = agent_of(e.packet or {}) or _chain_agent(chains, ev) or "another agent"
        out.append(
            f"{agent}'s chain of decision {chains.decision_id} (evidence {ev}) has a newer {e.kind} "
            f"({e.ref}, {e.observed_at}); this binds your own chain (evidence {chains.own_evidence})"
        )
    return out


def _chain_agent(chains: Chains, evidence_ref: str) -> str | None:
    for e in chains.entries:
        if e.kind == "assembly" and e.evidence == evidence_ref and e.packet is not None:
            return agent_of(e.packet)
    return None
