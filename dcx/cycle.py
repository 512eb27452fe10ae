"""Where a decision stands in its cycle: the next step, and whether an outcome is due.

Two chains settle a decision (SPEC §8, §10):

- legacy: prepare → propose → outcome → writeback → commit → feedback;
- review: prepare → propose → gate → review (which commits) → outcome → feedback
  after an approve; reject, defer and a quiet ``no_change`` end at the review.

After an approve the decision is **outcome due** until an outcome receipt
with at least one observed outcome is recorded for the approved proposal
(a later settlement of the same decision does not clear it).
Pure functions over what ``status`` (index lines and event lines, no packet
verification: it stays fast) and ``log`` already read. Stdlib only.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

# The legacy cycle, in order: which packet kind each step leaves behind.
CYCLE = (
    ("assembly", "prepare"),
    ("proposal", "propose"),
    ("outcome", "outcome"),
    ("event", "writeback"),
    ("commit", "commit"),
    ("feedback", "feedback"),
)


def _details(event: dict[str, Any]) -> dict[str, Any]:
    details = event.get("details")
    return details if isinstance(details, dict) else {}


ABANDON = "abandon"  # the event kind of `dcx abandon` (dcx.state.events.ABANDON)
PREVIEW_HINT = (
    "the latest assembly is a preview: nothing in it can be committed; prepare again with "
    "--auto-rebase, --rebase FILE or --baseline"
)


def settlement(decision_events: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """What a decision's events say: a gate seen, the latest review settlement, a legacy writeback,
    whether a person abandoned it."""
    out: dict[str, Any] = {
        "gate": False,
        "disposition": None,
        "approved": [],
        "writeback": False,
        "abandoned": False,
    }
    latest = ""
    for event in decision_events:
        details = _details(event)
        if event.get("event_kind") == ABANDON:
            out["abandoned"] = True
        elif details.get("task_class") == "user_gate":
            out["gate"] = True
        elif details.get("capability") == "decision_context" and details.get("disposition"):
            when = str(event.get("recorded_at") or "")
            if when >= latest:
                latest = when
                out["disposition"] = details["disposition"]
            refs = [
                r
                for r in event.get("artifact_refs") or []
                if str(r).startswith("decision-proposal-")
            ]
            if details["disposition"] == "approve" and refs and refs[0] not in out["approved"]:
                out["approved"].append(refs[0])
        else:
            out["writeback"] = True
    return out


def outcome_observed(outcomes: Iterable[dict[str, Any]], approved: Iterable[str]) -> bool:
    """Every approved proposal has an outcome receipt with at least one observed outcome."""
    seen = {o.get("proposal_packet_ref") for o in outcomes if o.get("observed_outcomes")}
    return all(ref in seen for ref in approved)


def next_step(
    kinds: set[str], settled: dict[str, Any], observed: bool, require_review: bool = False
) -> tuple[str | None, bool]:
    """(the verb to run next or None when complete, outcome due)."""
    if "assembly" not in kinds:
        return "prepare", False
    if settled["disposition"] is not None or "review" in kinds:
        if "commit" not in kinds:
            return "review", False  # a settlement interrupted before its commit: run it again
        if settled["approved"]:
            if not observed:
                return "outcome", True  # an approve stays due even after a later quiet settlement
            return (None if "feedback" in kinds else "feedback"), False
        return None, False
    if "proposal" not in kinds:
        return "propose", False
    if settled["gate"]:
        return "review", False
    if require_review:
        return "gate", False
    legacy = set(kinds)
    if settled["writeback"]:
        legacy.add("event")
    return next((verb for kind, verb in CYCLE if kind not in legacy), None), False


def standing(
    kinds: set[str],
    settled: dict[str, Any],
    observed: bool,
    *,
    require_review: bool = False,
    latest_is_preview: bool = False,
) -> dict[str, Any]:
    """Where a decision stands, as status and log both show it: ``next_step``, ``next_hint``,
    ``outcome_due``, ``settlement``, ``abandoned``.

    An abandoned decision has no next step. A preview assembly can never be
    committed, so after one the next step is another ``prepare`` (with a
    mode), whatever was recorded after it.
    """
    out = {
        "next_step": None,
        "next_hint": None,
        "outcome_due": False,
        "settlement": settled["disposition"],
        "abandoned": settled.get("abandoned", False),
    }
    if out["abandoned"]:
        return out
    if latest_is_preview:
        out.update(next_step="prepare", next_hint=PREVIEW_HINT)
        return out
    out["next_step"], out["outcome_due"] = next_step(kinds, settled, observed, require_review)
    return out


def last_observed(index_times: Iterable[str], event_times: Iterable[str]) -> str | None:
    """The latest time a decision's index or events record (status and log agree on it).

    By time, not file order: a union-merged index interleaves two agents' lines.
    """
    return max([*index_times, *event_times], default=None)


COMMIT_ELSEWHERE_HINT = (
    "waits for its commit on the host that prepared it: no pending companion of its "
    "assemblies is on this host"
)


def commit_here(where: dict[str, Any], pending_here: bool) -> dict[str, Any]:
    """No "next: dcx commit" on a host that cannot commit (SPEC §16): the step is left to the host
    that holds the pending companion, and the hint says so."""
    if where.get("next_step") == "commit" and not pending_here:
        return {
            **where,
            "next_step": None,
            "next_hint": COMMIT_ELSEWHERE_HINT,
            "commit_elsewhere": True,
        }
    return where
