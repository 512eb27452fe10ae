"""``dcx report``: decision quality, measured from public files only (SPEC §13).

It reads the decision indexes and the packets they list — never a key, a
profile, a cursor or any other private file — so it works on a fresh clone of
a goal repository and on the git-merged history of several agents. Each
workspace given is one goal; several are reported side by side and summed.

Every file it reads is checked with ``dcx verify``'s own file check
(``store.verify_file``: canonical bytes, schema, spec, ref recomputes) plus
verify's goal and decision rules; a file that fails is left out of every
measure and named in ``left_out`` (status ``partial``). An accepted claim
that cites a revision its own evidence does not list as current is an
*accepted stale claim*: the report names it and exits 1.

Measures and their definitions are in docs/report.md; this module is the
reference for them. Reading is tolerant on purpose: a decision-index line of
a kind the report does not measure (e.g. ``review`` from a newer dcx) is
counted in ``other_packets`` and otherwise ignored; an ``agent_id`` on any
packet is picked up when present.
"""

from __future__ import annotations

import itertools
import json
import os
import statistics
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from dcx import decisions
from dcx.canonical import REF_RE
from dcx.clock import normalise_ts, parse_ts
from dcx.errors import ExitCode, InvalidInput
from dcx.packets import KINDS
from dcx.result import Result
from dcx.store import verify_bytes
from dcx.workspace import Workspace

SCHEMA = "dcx_decision_quality_report_v0"
# reason codes of a *stale* claim (the authority moved); every other reason is a rejection
STALE_REASONS = frozenset({"stale_authority_revision"})
MEASURED_KINDS = ("assembly", "proposal", "outcome")
# stored apart by prepare and read here through the assembly that embeds them
EMBEDDED_KINDS = frozenset({"scan", "coverage", "freshness", "retrieval", "evidence", "rebase", "checkpoint"})
BINS = 5
UNATTRIBUTED = "unattributed"  # a claim whose provider_ref no retrieval of its decision returned


# -- loading -------------------------------------------------------------------


class Verdicts:
    """Which file contents already passed ``verify_file`` here: a private, optional cache.

    The verdict is a pure function of (dcx version, goal root, kind, bytes) — the
    goal root because the detector refuses text holding it — so the key is their
    hash; an edited file has other bytes, hence another key, and is checked again.
    Only passes are kept (a failing file is re-checked, so it is always named
    with its reason). Kept only where ``private/`` exists: on a bare fresh clone
    the report writes nothing and checks every file.
    """

    NAME = "report-verified.txt"

    def __init__(self, ws: Workspace) -> None:
        from dcx import __version__

        self.path = ws.cache / self.NAME
        self.enabled = ws.private.is_dir()
        self.salt = f"{__version__}\0{ws.root}\0".encode()
        self.known: set[str] = set()
        self.new: set[str] = set()
        if self.enabled:
            try:
                self.known = set(self.path.read_text(encoding="ascii").split())
            except (OSError, UnicodeDecodeError):
                self.known = set()

    def key(self, kind: str, data: bytes) -> str:
        from dcx.canonical import digest_hex

        return digest_hex(self.salt + kind.encode() + b"\0" + data)

    def passed(self, key: str) -> bool:
        return key in self.known

    def add(self, key: str) -> None:
        if self.enabled:
            self.new.add(key)

    def save(self) -> None:
        if not self.new:
            return
        from dcx.fsutil import atomic_write

        # concurrent reports: the last writer wins; a lost entry only costs a re-check
        atomic_write(self.path, "\n".join(sorted(self.known | self.new)).encode() + b"\n", mode=0o600)


class Loaded:
    """The verified packets of one workspace, by decision, and what was left out."""

    def __init__(self, ws: Workspace, only: str | None) -> None:
        from dcx.public import bind_goal_root

        bind_goal_root(str(ws.root))  # verify semantics: text holding this goal root is refused
        self.ws = ws
        self.goal_id = ws.goal_id
        self.packets_dir, self.decisions_dir = str(ws.packets), str(ws.decisions)
        self.verdicts = Verdicts(ws)
        self.left_out: list[dict[str, Any]] = []
        self.key_ids: Counter[str] = Counter()
        self.other_packets: Counter[str] = Counter()
        self.by_decision: dict[str, dict[str, list[dict[str, Any]]]] = {}
        self.first_seen: dict[str, str] = {}
        ids = decisions.decision_ids(ws)
        for ident in ids if only is None else [i for i in ids if i == only]:
            self._decision(ident)
        self.verdicts.save()

    def _leave_out(self, path: Any, ref: str, problem: str) -> None:
        self.left_out.append({"goal_id": self.goal_id, "file": self.ws.rel(path), "ref": ref, "problem": problem})

    def _entries(self, ident: str) -> list[dict[str, Any]]:
        """The index lines in (observed_at, line) order, as ``decisions.entries`` gives them;
        one JSON parse per file instead of one per line (the fast path of a 10,000-decision report)."""
        path = os.path.join(self.decisions_dir, f"{ident}.jsonl")
        try:
            with open(path, "rb") as handle:
                text = handle.read().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return decisions.entries(self.ws, ident)
        if not text.endswith("\n"):
            return decisions.entries(self.ws, ident)  # a torn last line: the careful reader skips it
        try:
            rows = json.loads("[" + text.rstrip("\n").replace("\n", ",") + "]")
        except ValueError:
            return decisions.entries(self.ws, ident)
        if not all(type(r) is dict and type(r.get("ref")) is str and type(r.get("kind")) is str for r in rows):
            return decisions.entries(self.ws, ident)
        order = sorted(range(len(rows)), key=lambda i: (str(rows[i].get("observed_at", "")), i))
        return [rows[i] for i in order]

    def _decision(self, ident: str) -> None:
        packets: dict[str, list[dict[str, Any]]] = {kind: [] for kind in MEASURED_KINDS}
        seen: set[str] = set()
        entries = self._entries(ident)
        if entries:
            self.first_seen[ident] = str(entries[0].get("observed_at", ""))
        for entry in entries:
            kind, ref = entry["kind"], entry["ref"]
            if ref in seen:
                continue  # a union merge may repeat a line
            seen.add(ref)
            if kind not in MEASURED_KINDS:
                if kind not in EMBEDDED_KINDS:
                    self.other_packets[kind] += 1  # commit, feedback, review, kinds of a newer dcx
                continue
            packet = self._read(kind, ref, ident)
            if packet is not None:
                packets[kind].append(packet)
        self.by_decision[ident] = packets

    def _read(self, kind: str, ref: str, ident: str) -> dict[str, Any] | None:
        match = REF_RE.fullmatch(ref)
        if not match or match.group("prefix") != KINDS[kind].prefix:
            self._leave_out(self.ws.decisions / f"{ident}.jsonl", ref[:160], f"indexed as {kind}, which its ref is not")
            return None
        path = os.path.join(self.packets_dir, kind, f"{ref}.json")
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except FileNotFoundError:
            self._leave_out(Path(path), ref, "listed in the decision index but missing")
            return None
        except OSError as exc:
            self._leave_out(Path(path), ref, f"unreadable ({exc.strerror})")
            return None
        key = self.verdicts.key(kind, data)
        if not self.verdicts.passed(key):
            problem = verify_bytes(kind, ref, data)  # dcx verify's own check of a stored file
            if problem:
                self._leave_out(Path(path), ref, problem)
                return None
            self.verdicts.add(key)
        packet = json.loads(data)
        if packet.get("goal_id") != self.goal_id:
            self._leave_out(Path(path), ref, f"belongs to another goal ({packet.get('goal_id')})")
            return None
        if packet.get("decision_id") != ident:
            self._leave_out(Path(path), ref, "belongs to another decision")
            return None
        self.key_ids[packet["key_id"]] += 1
        return packet


# -- per-decision measures -------------------------------------------------------


def _claim_state(claim: dict[str, Any]) -> str:
    return claim.get("reason_code", "accepted")


def _accepted_stale(evidence: dict[str, Any]) -> list[dict[str, Any]]:
    """Accepted claims citing a revision the evidence does not list as its source's current one."""
    listed = {row["source_ref"]: row for row in evidence["source_revisions"]}
    out = []
    for claim in evidence["recalled_claims"]:
        row = listed.get(claim["source_ref"])
        if row is None or row["revision"] != claim["source_revision"]:
            out.append({"claim_id": claim["claim_id"], "evidence_ref": evidence["packet_ref"],
                        "summary": claim["summary"]})
    return out


def _evidence_diff(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """Facts and claims that differ between two evidence packets of one decision."""
    if old["key_id"] != new["key_id"]:
        # refs minted with another key are not comparable (SPEC §3.3): report, never compare
        return {"comparable": False, "facts_added": [], "facts_removed": [], "claims_changed": []}

    def facts(ev: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
        return {(f["source_ref"], f["source_revision"]): f for f in ev["changed_facts"]}

    def claims(ev: dict[str, Any]) -> dict[str, dict[str, Any]]:
        out = {c["claim_id"]: c for c in ev["stale_or_rejected_claims"]}
        out.update({c["claim_id"]: c for c in ev["recalled_claims"]})
        return out

    before, after = facts(old), facts(new)
    fact_row = lambda f: {"fact_id": f["fact_id"], "summary": f["summary"]}  # noqa: E731
    c_before, c_after = claims(old), claims(new)
    changed = []
    for cid in sorted(set(c_before) | set(c_after)):
        b, a = c_before.get(cid), c_after.get(cid)
        was = _claim_state(b) if b else "absent"
        now = _claim_state(a) if a else "absent"
        if was != now or (a and b and a.get("source_revision") != b.get("source_revision")):
            changed.append({"claim_id": cid, "summary": (a or b)["summary"], "before": was, "after": now,
                            "provider_ref": (a or b).get("provider_ref")})
    return {
        "comparable": True,
        "facts_added": sorted((fact_row(after[k]) for k in after.keys() - before.keys()), key=lambda r: r["fact_id"]),
        "facts_removed": sorted((fact_row(before[k]) for k in before.keys() - after.keys()), key=lambda r: r["fact_id"]),
        "claims_changed": changed,
    }


def _provider_row() -> dict[str, Any]:
    return {"calls": 0, "results": 0, "accepted": 0, "stale": Counter(), "rejected": Counter(),
            "unavailable": Counter(), "mattered": False}


def _seconds(start: str, end: str) -> int:
    return int((parse_ts(end) - parse_ts(start)).total_seconds())


def measure_decision(goal_id: str, ident: str, packets: dict[str, list[dict[str, Any]]],
                     first_seen: str) -> dict[str, Any]:
    assemblies, proposals, outcomes = packets["assembly"], packets["proposal"], packets["outcome"]
    evidence = {a["evidence"]["packet_ref"]: a["evidence"] for a in assemblies}
    latest = outcomes[-1] if outcomes else None
    by_ref = {p["packet_ref"]: p for p in proposals}
    linked = by_ref.get(latest["proposal_packet_ref"]) if latest and latest.get("proposal_packet_ref") else None
    basis = linked or (proposals[-1] if proposals else None)
    agents = sorted({a for a in _agents(assemblies, proposals, outcomes) if a})

    # authority
    scans = [s for a in assemblies for s in a["scan_receipts"]]
    authority = {
        "prepares": len(assemblies),
        "source_reads": len(scans),
        "sources": len({s["source_id"] for s in scans}),
        "exact_reads": sum(s["exact_read_count"] for s in scans),
        "changed_facts": sum(len(e["changed_facts"]) for e in evidence.values()),
        "coverage_partial": sum(1 for a in assemblies if a["coverage"]["status"] != "complete"),
    }

    # recall, per provider
    owner: dict[str, str] = {}
    providers: dict[str, dict[str, Any]] = {}
    for asm in assemblies:
        retrieval = asm.get("retrieval")
        if not retrieval:
            continue
        row = providers.setdefault(retrieval["provider"], _provider_row())
        row["calls"] += 1
        row["results"] += retrieval["result_count"]
        if retrieval["status"] != "completed":
            row["unavailable"][retrieval.get("reason_code") or "unavailable"] += 1
        for item in retrieval["results"]:
            owner.setdefault(item["provider_ref"], retrieval["provider"])
    stale_presented = Counter()
    accepted_stale: list[dict[str, Any]] = []
    for ev in evidence.values():
        for claim in ev["recalled_claims"]:
            providers.setdefault(owner.get(claim["provider_ref"], UNATTRIBUTED), _provider_row())["accepted"] += 1
        for claim in ev["stale_or_rejected_claims"]:
            name = owner.get(claim.get("provider_ref", ""), UNATTRIBUTED)
            bucket = "stale" if claim["reason_code"] in STALE_REASONS else "rejected"
            providers.setdefault(name, _provider_row())[bucket][claim["reason_code"]] += 1
            if bucket == "stale":
                stale_presented["demoted"] += 1
        found = _accepted_stale(ev)
        accepted_stale += [{"goal_id": goal_id, "decision_id": ident, **row} for row in found]

    # evidence-driven changes: consecutive proposals recommending another option
    changes, without_new_evidence = [], 0
    for old, new in itertools.pairwise(proposals):
        before, after = old["recommended_decision"]["option_id"], new["recommended_decision"]["option_id"]
        if before == after:
            continue
        e_old, e_new = evidence.get(old["evidence_packet_ref"]), evidence.get(new["evidence_packet_ref"])
        if old["evidence_packet_ref"] == new["evidence_packet_ref"] or e_old is None or e_new is None:
            without_new_evidence += 1
            continue
        diff = _evidence_diff(e_old, e_new)
        changes.append({"from_option": before, "to_option": after, "from_proposal": old["packet_ref"],
                        "to_proposal": new["packet_ref"], "from_evidence": old["evidence_packet_ref"],
                        "to_evidence": new["evidence_packet_ref"], "observed_at": new["observed_at"], **diff})
        for claim in diff["claims_changed"]:
            name = owner.get(claim.get("provider_ref") or "", UNATTRIBUTED)
            if name in providers:
                providers[name]["mattered"] = True
    # a provider also matters when one of its accepted claims is in evidence an outcome receipt links
    for out in outcomes:
        ev = evidence.get(out["evidence_packet_ref"])
        for claim in ev["recalled_claims"] if ev else ():
            providers[owner.get(claim["provider_ref"], UNATTRIBUTED)]["mattered"] = True

    # outcomes
    status = latest["verification_status"] if latest else "none"
    assumptions = {a["assumption_id"]: a for o in outcomes for a in o["invalidated_assumptions"]}
    time_to_verified = None
    linkage = False
    if status == "verified" and basis is not None:
        first = next(o for o in outcomes if o["verification_status"] == "verified"
                     and o.get("proposal_packet_ref", basis["packet_ref"]) == basis["packet_ref"])
        time_to_verified = _seconds(basis["observed_at"], first["observed_at"])
        linkage = (linked is not None and any(o["status"] == "verified" for o in latest["observed_outcomes"])
                   and latest["evidence_packet_ref"] == linked["evidence_packet_ref"]
                   and linked["evidence_packet_ref"] in evidence)
    return {
        "goal_id": goal_id,
        "decision_id": ident,
        "agents": agents,
        "started_at": basis["observed_at"] if basis else first_seen or None,
        "confidence": basis["recommended_decision"]["confidence"] if basis else None,
        "recommended_option": basis["recommended_decision"]["option_id"] if basis else None,
        "proposals": len(proposals),
        "outcome_receipts": len(outcomes),
        "outcome": status,
        "outcome_at": latest["observed_at"] if latest else None,
        "outcome_linked": linkage,
        "invalidated_assumptions": [{"assumption_id": k, "summary": v["summary"]} for k, v in sorted(assumptions.items())],
        "time_to_verified_seconds": time_to_verified,
        "authority": authority,
        "providers": providers,
        "stale_demoted": stale_presented["demoted"],
        "accepted_stale": accepted_stale,
        "changes": changes,
        "changes_without_new_evidence": without_new_evidence,
    }


def _agents(*groups: Iterable[dict[str, Any]]) -> Iterable[str | None]:
    for group in groups:
        for packet in group:
            yield packet.get("agent_id")
            yield packet.get("proposed_by")
            yield packet.get("recorded_by")


# -- aggregation -----------------------------------------------------------------


def _ratio(num: int, den: int) -> float | None:
    return round(num / den, 6) if den else None


def calibration(rows: list[dict[str, Any]]) -> dict[str, Any]:
    pairs = [(r["confidence"], 1 if r["outcome"] == "verified" else 0) for r in rows
             if r["outcome"] in ("verified", "refuted") and r["confidence"] is not None]
    left_out = Counter(r["outcome"] if r["outcome"] in ("pending", "inconclusive", "none") else "no_confidence"
                       for r in rows if not (r["outcome"] in ("verified", "refuted") and r["confidence"] is not None))
    bins = []
    for index in range(BINS):
        lo, hi = index / BINS, (index + 1) / BINS
        inside = [(c, o) for c, o in pairs if min(BINS - 1, int(round(c * BINS, 9))) == index]
        bins.append({
            "bin": f"{lo:.1f}-{hi:.1f}", "lower": lo, "upper": hi, "count": len(inside),
            "mean_confidence": round(statistics.fmean(c for c, _ in inside), 6) if inside else None,
            "observed_rate": round(statistics.fmean(o for _, o in inside), 6) if inside else None,
        })
    brier = round(statistics.fmean((c - o) ** 2 for c, o in pairs), 6) if pairs else None
    return {"scored": len(pairs), "brier_score": brier, "bins": bins,
            "left_out": {k: left_out.get(k, 0) for k in ("pending", "inconclusive", "none", "no_confidence")}}


def _merge_providers(rows: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    total: dict[str, dict[str, Any]] = {}
    for row in rows:
        for name, p in row["providers"].items():
            t = total.setdefault(name, _provider_row())
            for key in ("calls", "results", "accepted"):
                t[key] += p[key]
            for key in ("stale", "rejected", "unavailable"):
                if p[key]:
                    t[key].update(p[key])
            t["mattered"] = t["mattered"] or p["mattered"]
    return total


def provider_rows(goal_id: str | None, merged: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for name in sorted(merged):
        p = merged[name]
        stale, rejected = sum(p["stale"].values()), sum(p["rejected"].values())
        judged = p["accepted"] + stale + rejected
        if p["mattered"]:
            stop = "mattered"
        elif p["results"] or judged:
            stop = "stop"  # volume that never changed a decision nor reached an outcome receipt
        else:
            stop = "no_volume"
        row = {"provider": name, "calls": p["calls"], "results": p["results"], "accepted": p["accepted"],
               "stale": sum(p["stale"].values()), "stale_by_reason": dict(sorted(p["stale"].items())),
               "rejected": rejected, "rejected_by_reason": dict(sorted(p["rejected"].items())),
               "unavailable": sum(p["unavailable"].values()),
               "unavailable_by_reason": dict(sorted(p["unavailable"].items())),
               "acceptance_rate": _ratio(p["accepted"], judged), "stop_condition": stop}
        if goal_id is not None:
            row = {"goal_id": goal_id, **row}
        out.append(row)
    return out


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The goal-level (or all-goal) measures of a set of decision rows."""
    keys = ("prepares", "source_reads", "exact_reads", "changed_facts", "coverage_partial")
    authority = {k: sum(r["authority"][k] for r in rows) for k in keys}
    demoted = sum(r["stale_demoted"] for r in rows)
    accepted_stale = sum(len(r["accepted_stale"]) for r in rows)
    outcomes = Counter(r["outcome"] for r in rows)
    times = [r["time_to_verified_seconds"] for r in rows if r["time_to_verified_seconds"] is not None]
    providers = _merge_providers(rows)
    recall = {"calls": 0, "results": 0, "accepted": 0}
    reasons: dict[str, Counter[str]] = {"stale": Counter(), "rejected": Counter(), "unavailable": Counter()}
    for p in providers.values():
        for key in recall:
            recall[key] += p[key]
        for key, counter in reasons.items():
            counter.update(p[key])
    return {
        "decisions": len(rows),
        "authority": authority,
        "recall": {**recall, **{f"{k}_by_reason": dict(sorted(v.items())) for k, v in reasons.items()},
                   "stale": sum(reasons["stale"].values()), "rejected": sum(reasons["rejected"].values()),
                   "unavailable": sum(reasons["unavailable"].values())},
        "stale_claims": {"presented": demoted + accepted_stale, "demoted": demoted, "accepted_stale": accepted_stale,
                         "rejection_rate": _ratio(demoted, demoted + accepted_stale)},
        "decision_changes": {"evidence_driven": sum(len(r["changes"]) for r in rows),
                             "decisions_changed": sum(1 for r in rows if r["changes"]),
                             "without_new_evidence": sum(r["changes_without_new_evidence"] for r in rows)},
        "outcomes": {**{k: outcomes.get(k, 0) for k in ("verified", "refuted", "inconclusive", "pending", "none")},
                     "linked_verified": sum(1 for r in rows if r["outcome_linked"]),
                     "invalidated_assumptions": sum(len(r["invalidated_assumptions"]) for r in rows),
                     "time_to_verified_seconds": {
                         "count": len(times),
                         "median": statistics.median(times) if times else None,
                         "min": min(times) if times else None,
                         "max": max(times) if times else None}},
        "calibration": calibration(rows),
    }


def _gate(goals: list[dict[str, Any]]) -> dict[str, Any]:
    rows = []
    for goal in goals:
        s = goal["summary"]
        stale = s["stale_claims"]["demoted"] >= 1 and s["stale_claims"]["accepted_stale"] == 0
        linkage = s["outcomes"]["linked_verified"] >= 1
        rows.append({"goal_id": goal["goal_id"], "stale_rejection": stale, "outcome_linkage": linkage,
                     "proves": stale and linkage})
    proving = [r["goal_id"] for r in rows if r["proves"]]
    status = "reproduced" if len(proving) >= 2 else "proven_once" if proving else "not_proven"
    return {"status": status, "goals_proving": proving, "goals": rows}


def _public_decision(row: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in row.items() if k != "providers"}
    out["providers"] = provider_rows(None, row["providers"])
    return out


# -- the use case ------------------------------------------------------------------


def report(*, workspaces: list[Workspace], decision_id: str | None = None, since: str | None = None,
           html: str | None = None) -> Result:
    since_ts = normalise_ts(since, field="--since") if since else None
    loaded: list[Loaded] = []
    seen_goals: dict[str, int] = {}
    for index, ws in enumerate(workspaces):
        item = Loaded(ws, decision_id)
        if item.goal_id in seen_goals:
            raise InvalidInput(
                f"-C #{index + 1} serves goal {item.goal_id}, like -C #{seen_goals[item.goal_id] + 1}",
                code="goal_repeated", field="-C",
                hint="give each goal once; merge two agents' histories of one goal with git first")
        seen_goals[item.goal_id] = index
        loaded.append(item)

    goals, all_rows, left_out = [], [], []
    for item in loaded:
        rows = []
        for ident, packets in sorted(item.by_decision.items()):
            row = measure_decision(item.goal_id, ident, packets, item.first_seen.get(ident, ""))
            if since_ts and (row["started_at"] is None or parse_ts(row["started_at"]) < parse_ts(since_ts)):
                continue
            rows.append(row)
        rows.sort(key=lambda r: (r["started_at"] or "", r["decision_id"]))
        all_rows += rows
        left_out += item.left_out
        pinned = _pinned_key(item.ws)
        goals.append({
            "goal_id": item.goal_id,
            "summary": summarise(rows),
            "providers": provider_rows(item.goal_id, _merge_providers(rows)),
            "agents": sorted({a for r in rows for a in r["agents"]}),
            "key_ids": dict(sorted(item.key_ids.items())),
            "foreign_key_ids": _foreign(item.key_ids, pinned),
            "other_packets": dict(sorted(item.other_packets.items())),
        })

    accepted_stale = [c for r in all_rows for c in r["accepted_stale"]]
    data = {
        "schema_version": SCHEMA,
        "filters": {"decision_id": decision_id, "since": since_ts},
        "goals": goals,
        "totals": summarise(all_rows),
        "providers": provider_rows(None, _merge_providers(all_rows)),
        "promotion_gate": _gate(goals),
        "decisions": [_public_decision(r) for r in all_rows],
        "accepted_stale_claims": accepted_stale,
        "left_out": left_out,
    }
    warnings = [f"{row['goal_id']}: {row['file']}: {row['problem']} (left out of the report)" for row in left_out]
    for goal in goals:
        if goal["foreign_key_ids"]:
            warnings.append(f"{goal['goal_id']}: packets minted with another key ({', '.join(goal['foreign_key_ids'])})"
                            " are measured; their opaque refs are not compared with this key's")
    if html:
        from pathlib import Path

        from dcx.fsutil import atomic_write
        from dcx.report_html import render_html

        target = Path(html)
        if not target.parent.is_dir():
            raise InvalidInput(f"--html: the folder of {target.name} does not exist", field="--html")
        atomic_write(target, render_html(data).encode())
    if accepted_stale:
        warnings.insert(0, f"{len(accepted_stale)} accepted stale claim(s): a recalled claim was accepted against "
                           "an authority revision that is not current")
        return Result("report", data, status="error", warnings=warnings, exit_code=ExitCode.REFUSED)
    return Result("report", data, status="partial" if left_out else "ok", warnings=warnings)


def _foreign(key_ids: Counter[str], pinned: str | None) -> list[str]:
    """Key ids other than the goal's: the pinned one, else the one most packets carry."""
    if not key_ids:
        return []
    own = pinned or min(key_ids, key=lambda k: (-key_ids[k], k))
    return sorted(k for k in key_ids if k != own)


def _pinned_key(ws: Workspace) -> str | None:
    """The goal's key id: pinned in workspace.toml when present (public), else none."""
    import tomllib

    try:
        value = tomllib.loads(ws.workspace_toml.read_text(encoding="utf-8")).get("key_id")
    except (OSError, tomllib.TOMLDecodeError):
        return None
    return value if isinstance(value, str) else None
