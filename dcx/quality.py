"""Decision-quality measures (SPEC §13), pure functions of verified packets.

``measure_decision`` turns one decision's assemblies, proposals and outcome
receipts into a row; ``summarise`` sums rows into a goal's (or all goals')
measures; ``gate`` reads the promotion gate off the goals. No file access:
``dcx/ops/report.py`` loads and verifies, this module measures. Definitions:
docs/report.md.
"""

from __future__ import annotations

import itertools
import statistics
from collections import Counter
from collections.abc import Iterable
from typing import Any

from dcx.core.clock import parse_ts

# reason codes of a *stale* claim (the authority moved); every other reason is a rejection
STALE_REASONS = frozenset({"stale_authority_revision"})
BINS = 5
DISPOSITIONS = ("approve", "reject", "defer", "no_change")  # decision_review_receipt_v0 (SPEC §10)
UNATTRIBUTED = "unattributed"  # a claim whose provider_ref no retrieval of its decision returned


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
            out.append(
                {
                    "claim_id": claim["claim_id"],
                    "evidence_ref": evidence["packet_ref"],
                    "summary": claim["summary"],
                }
            )
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
        either = a if a is not None else c_before[cid]  # the id came from one of the two
        if was != now or (a and b and a.get("source_revision") != b.get("source_revision")):
            changed.append(
                {
                    "claim_id": cid,
                    "summary": either["summary"],
                    "before": was,
                    "after": now,
                    "provider_ref": either.get("provider_ref"),
                }
            )
    return {
        "comparable": True,
        "facts_added": sorted(
            (fact_row(after[k]) for k in after.keys() - before.keys()), key=lambda r: r["fact_id"]
        ),
        "facts_removed": sorted(
            (fact_row(before[k]) for k in before.keys() - after.keys()), key=lambda r: r["fact_id"]
        ),
        "claims_changed": changed,
    }


def _provider_row() -> dict[str, Any]:
    # plain dicts, not Counters: a 10,000-decision report makes tens of thousands of these
    return {
        "calls": 0,
        "results": 0,
        "accepted": 0,
        "stale": {},
        "rejected": {},
        "unavailable": {},
        "mattered": False,
    }


def _bump(counts: dict[str, int], key: str, by: int = 1) -> None:
    counts[key] = counts.get(key, 0) + by


def _seconds(start: str, end: str) -> int:
    return int((parse_ts(end) - parse_ts(start)).total_seconds())


def measure_decision(
    goal_id: str, ident: str, packets: dict[str, list[dict[str, Any]]], first_seen: str
) -> dict[str, Any]:
    assemblies, proposals, outcomes = packets["assembly"], packets["proposal"], packets["outcome"]
    evidence = {a["evidence"]["packet_ref"]: a["evidence"] for a in assemblies}
    latest = outcomes[-1] if outcomes else None
    by_ref = {p["packet_ref"]: p for p in proposals}
    linked = (
        by_ref.get(latest["proposal_packet_ref"])
        if latest and latest.get("proposal_packet_ref")
        else None
    )
    basis = linked or (proposals[-1] if proposals else None)
    agents = sorted(
        {a for a in _agents(*packets.values()) if a}
    )  # every packet's agent_id (SPEC §16)

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
            _bump(row["unavailable"], retrieval.get("reason_code") or "unavailable")
        for item in retrieval["results"]:
            owner.setdefault(item["provider_ref"], retrieval["provider"])
    demoted = 0
    accepted_stale: list[dict[str, Any]] = []
    for ev in evidence.values():
        for claim in ev["recalled_claims"]:
            providers.setdefault(owner.get(claim["provider_ref"], UNATTRIBUTED), _provider_row())[
                "accepted"
            ] += 1
        for claim in ev["stale_or_rejected_claims"]:
            name = owner.get(claim.get("provider_ref", ""), UNATTRIBUTED)
            bucket = "stale" if claim["reason_code"] in STALE_REASONS else "rejected"
            _bump(providers.setdefault(name, _provider_row())[bucket], claim["reason_code"])
            if bucket == "stale":
                demoted += 1
        found = _accepted_stale(ev)
        accepted_stale += [{"goal_id": goal_id, "decision_id": ident, **row} for row in found]

    # evidence-driven changes: consecutive proposals recommending another option
    changes, without_new_evidence = [], 0
    for old, new in itertools.pairwise(proposals):
        before, after = (
            old["recommended_decision"]["option_id"],
            new["recommended_decision"]["option_id"],
        )
        if before == after:
            continue
        e_old, e_new = (
            evidence.get(old["evidence_packet_ref"]),
            evidence.get(new["evidence_packet_ref"]),
        )
        if (
            old["evidence_packet_ref"] == new["evidence_packet_ref"]
            or e_old is None
            or e_new is None
        ):
            without_new_evidence += 1
            continue
        diff = _evidence_diff(e_old, e_new)
        changes.append(
            {
                "from_option": before,
                "to_option": after,
                "from_proposal": old["packet_ref"],
                "to_proposal": new["packet_ref"],
                "from_evidence": old["evidence_packet_ref"],
                "to_evidence": new["evidence_packet_ref"],
                "observed_at": new["observed_at"],
                **diff,
            }
        )
        for claim in diff["claims_changed"]:
            name = owner.get(claim.get("provider_ref") or "", UNATTRIBUTED)
            if name in providers:
                providers[name]["mattered"] = True
    # a provider also matters when one of its accepted claims is in evidence an outcome receipt links
    for out in outcomes:
        ev = evidence.get(out["evidence_packet_ref"])
        for claim in ev["recalled_claims"] if ev else ():
            providers[owner.get(claim["provider_ref"], UNATTRIBUTED)]["mattered"] = True

    # review settlement (SPEC §10): the latest receipt settles the decision
    reviews = packets.get("review", [])
    settled = reviews[-1] if reviews else None
    reviewed = by_ref.get(settled.get("proposal_packet_ref", "")) if settled else None
    review = {
        "receipts": len(reviews),
        "disposition": settled["disposition"] if settled else None,
        "settled_at": settled["recorded_at"] if settled else None,
        "proposal_reviewed": reviewed is not None,
        "time_to_review_seconds": (
            max(0, _seconds(reviewed["observed_at"], settled["recorded_at"]))
            if settled and reviewed
            else None
        ),
        "outcome_due": bool(
            settled
            and settled["outcome_observation_required"]
            and not (latest and latest["observed_outcomes"])
        ),
    }

    # outcomes
    status = latest["verification_status"] if latest else "none"
    assumptions = {a["assumption_id"]: a for o in outcomes for a in o["invalidated_assumptions"]}
    time_to_verified = None
    linkage = False
    if status == "verified" and basis is not None and latest is not None:
        first = next(
            (
                o
                for o in outcomes
                if o["verification_status"] == "verified"
                and o.get("proposal_packet_ref", basis["packet_ref"]) == basis["packet_ref"]
            ),
            latest,
        )
        time_to_verified = _seconds(basis["observed_at"], first["observed_at"])
        linkage = (
            linked is not None
            and any(o["status"] == "verified" for o in latest["observed_outcomes"])
            and latest["evidence_packet_ref"] == linked["evidence_packet_ref"]
            and linked["evidence_packet_ref"] in evidence
        )
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
        "invalidated_assumptions": [
            {"assumption_id": k, "summary": v["summary"]} for k, v in sorted(assumptions.items())
        ],
        "time_to_verified_seconds": time_to_verified,
        "authority": authority,
        "providers": providers,
        "stale_demoted": demoted,
        "accepted_stale": accepted_stale,
        "changes": changes,
        "changes_without_new_evidence": without_new_evidence,
        "review": review,
    }


def _agents(*groups: Iterable[dict[str, Any]]) -> Iterable[str | None]:
    """Who acted: the ``agent_id`` every stored packet carries (SPEC §16); on packets stored before
    that, who proposed or recorded it."""
    for group in groups:
        for packet in group:
            if not isinstance(packet, dict):
                continue
            yield packet.get("agent_id")
            yield packet.get("proposed_by")
            yield packet.get("recorded_by")


# -- aggregation -----------------------------------------------------------------


def _ratio(num: int, den: int) -> float | None:
    return round(num / den, 6) if den else None


def calibration(rows: list[dict[str, Any]]) -> dict[str, Any]:
    pairs = [
        (r["confidence"], 1 if r["outcome"] == "verified" else 0)
        for r in rows
        if r["outcome"] in ("verified", "refuted") and r["confidence"] is not None
    ]
    left_out = Counter(
        r["outcome"] if r["outcome"] in ("pending", "inconclusive", "none") else "no_confidence"
        for r in rows
        if not (r["outcome"] in ("verified", "refuted") and r["confidence"] is not None)
    )
    bins = []
    for index in range(BINS):
        lo, hi = index / BINS, (index + 1) / BINS
        inside = [(c, o) for c, o in pairs if min(BINS - 1, int(round(c * BINS, 9))) == index]
        bins.append(
            {
                "bin": f"{lo:.1f}-{hi:.1f}",
                "lower": lo,
                "upper": hi,
                "count": len(inside),
                "mean_confidence": round(statistics.fmean(c for c, _ in inside), 6)
                if inside
                else None,
                "observed_rate": round(statistics.fmean(o for _, o in inside), 6)
                if inside
                else None,
            }
        )
    brier = round(statistics.fmean((c - o) ** 2 for c, o in pairs), 6) if pairs else None
    return {
        "scored": len(pairs),
        "brier_score": brier,
        "bins": bins,
        "left_out": {
            k: left_out.get(k, 0) for k in ("pending", "inconclusive", "none", "no_confidence")
        },
    }


def merge_providers(rows: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    total: dict[str, dict[str, Any]] = {}
    for row in rows:
        for name, p in row["providers"].items():
            t = total.setdefault(name, _provider_row())
            for key in ("calls", "results", "accepted"):
                t[key] += p[key]
            for key in ("stale", "rejected", "unavailable"):
                for reason, count in p[key].items():
                    _bump(t[key], reason, count)
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
        row = {
            "provider": name,
            "calls": p["calls"],
            "results": p["results"],
            "accepted": p["accepted"],
            "stale": sum(p["stale"].values()),
            "stale_by_reason": dict(sorted(p["stale"].items())),
            "rejected": rejected,
            "rejected_by_reason": dict(sorted(p["rejected"].items())),
            "unavailable": sum(p["unavailable"].values()),
            "unavailable_by_reason": dict(sorted(p["unavailable"].items())),
            "acceptance_rate": _ratio(p["accepted"], judged),
            "stop_condition": stop,
        }
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
    times = [
        r["time_to_verified_seconds"] for r in rows if r["time_to_verified_seconds"] is not None
    ]
    providers = merge_providers(rows)
    recall = {"calls": 0, "results": 0, "accepted": 0}
    reasons: dict[str, Counter[str]] = {
        "stale": Counter(),
        "rejected": Counter(),
        "unavailable": Counter(),
    }
    for p in providers.values():
        for key in recall:
            recall[key] += p[key]
        for key, counter in reasons.items():
            counter.update(p[key])
    return {
        "decisions": len(rows),
        "authority": authority,
        "recall": {
            **recall,
            **{f"{k}_by_reason": dict(sorted(v.items())) for k, v in reasons.items()},
            "stale": sum(reasons["stale"].values()),
            "rejected": sum(reasons["rejected"].values()),
            "unavailable": sum(reasons["unavailable"].values()),
        },
        "stale_claims": {
            "presented": demoted + accepted_stale,
            "demoted": demoted,
            "accepted_stale": accepted_stale,
            "rejection_rate": _ratio(demoted, demoted + accepted_stale),
        },
        "decision_changes": {
            "evidence_driven": sum(len(r["changes"]) for r in rows),
            "decisions_changed": sum(1 for r in rows if r["changes"]),
            "without_new_evidence": sum(r["changes_without_new_evidence"] for r in rows),
        },
        "outcomes": {
            **{
                k: outcomes.get(k, 0)
                for k in ("verified", "refuted", "inconclusive", "pending", "none")
            },
            "linked_verified": sum(1 for r in rows if r["outcome_linked"]),
            "invalidated_assumptions": sum(len(r["invalidated_assumptions"]) for r in rows),
            "time_to_verified_seconds": {
                "count": len(times),
                "median": statistics.median(times) if times else None,
                "min": min(times) if times else None,
                "max": max(times) if times else None,
            },
        },
        "calibration": calibration(rows),
        "reviews": _reviews(rows),
    }


def _reviews(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Review settlement over decisions: receipts, latest dispositions, time to review, outcomes due."""
    latest = Counter(r["review"]["disposition"] for r in rows if r["review"]["disposition"])
    times = [
        r["review"]["time_to_review_seconds"]
        for r in rows
        if r["review"]["time_to_review_seconds"] is not None
    ]
    return {
        "receipts": sum(r["review"]["receipts"] for r in rows),
        "decisions_reviewed": sum(1 for r in rows if r["review"]["receipts"]),
        "by_disposition": {k: latest.get(k, 0) for k in DISPOSITIONS},
        "approved_verified": sum(
            1
            for r in rows
            if r["review"]["disposition"] == "approve" and r["outcome"] == "verified"
        ),
        "approved_refuted": sum(
            1 for r in rows if r["review"]["disposition"] == "approve" and r["outcome"] == "refuted"
        ),
        "outcome_due": sum(1 for r in rows if r["review"]["outcome_due"]),
        "time_to_review_seconds": {
            "count": len(times),
            "median": statistics.median(times) if times else None,
            "min": min(times) if times else None,
            "max": max(times) if times else None,
        },
    }


def gate(goals: list[dict[str, Any]]) -> dict[str, Any]:
    rows = []
    for goal in goals:
        s = goal["summary"]
        stale = s["stale_claims"]["demoted"] >= 1 and s["stale_claims"]["accepted_stale"] == 0
        linkage = s["outcomes"]["linked_verified"] >= 1
        rows.append(
            {
                "goal_id": goal["goal_id"],
                "stale_rejection": stale,
                "outcome_linkage": linkage,
                "proves": stale and linkage,
            }
        )
    proving = [r["goal_id"] for r in rows if r["proves"]]
    status = "reproduced" if len(proving) >= 2 else "proven_once" if proving else "not_proven"
    return {"status": status, "goals_proving": proving, "goals": rows}


def public_decision(row: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in row.items() if k != "providers"}
    out["providers"] = provider_rows(None, row["providers"])
    return out


def source_alert_rows(receipts: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Alerts raised and cleared per source kind, from scan receipts' ``alerts`` (SPEC §5.5 v4);
    a receipt without one (older, or a quiet source) counts nothing."""
    counts: Counter[tuple[str, str, str]] = Counter()
    for receipt in receipts:
        alerts = receipt.get("alerts")
        if not alerts:
            continue
        for way in ("raised", "cleared"):
            for code in alerts[way]:
                counts[(alerts["source_kind"], code, way)] += 1
    pairs = sorted({(kind, code) for kind, code, _ in counts})
    return [
        {
            "source_kind": kind,
            "alert": code,
            "raised": counts[(kind, code, "raised")],
            "cleared": counts[(kind, code, "cleared")],
        }
        for kind, code in pairs
    ]


def merge_source_alert_rows(groups: Iterable[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Several goals' ``source_alert_rows`` summed."""
    total: dict[tuple[str, str], dict[str, Any]] = {}
    for rows in groups:
        for row in rows:
            key = (row["source_kind"], row["alert"])
            into = total.setdefault(key, {**row, "raised": 0, "cleared": 0})
            into["raised"] += row["raised"]
            into["cleared"] += row["cleared"]
    return [total[key] for key in sorted(total)]
