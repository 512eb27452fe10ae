"""The four ways a prepare run accounts for what changed (SPEC §8.2).

- ``auto``: a generic fact per absorbed change; each recalled item
  judged by the authority it resolves to; earlier accepted claims of the
  decision whose authority moved are demoted;
- ``agent``: the agent's ``decision_rebase_input_v0``, with every
  citation resolved to this run's refs (or refused ``rebase_refs_stale``) and
  every recalled claim still judged by authority;
- ``baseline``: one generic fact per source, adopting its current state;
- none (a preview): nothing is cited, so changed sources keep their cursors.

``receipt_values`` then says how complete the account is.
"""

from __future__ import annotations

from typing import Any

from dcx.core.errors import DcxError, InvalidInput
from dcx.evidence.assembler import (
    NOT_REPRODUCED,
    UNVERIFIABLE,
    AuthorityReader,
    Change,
    EvidenceDraft,
    absorbable,
    check_unique_ids,
    claim_id_for,
    fact_id_for,
    generic_summary,
    judge_recall,
    refuse_stale_refs,
)
from dcx.state.refmap import RefMinter


def auto(
    draft: EvidenceDraft,
    changes: list[Change],
    policies: dict[str, str],
    reader: AuthorityReader,
    run,
    previous: dict[str, dict[str, Any]],
    minter: RefMinter,
) -> None:
    for change in changes:
        if absorbable(change, policies[change.source_id]) and policies[change.source_id] != "never":
            draft.fact(
                fact_id_for(change.change_ref), generic_summary(change), change, generic=True
            )
    changed_refs = {c.change_ref for c in changes}
    for provider_ref, item in run.pairs() if run is not None else []:
        verdict = judge_recall(reader, item.resource_ref, item.content)
        cid = claim_id_for(provider_ref)
        changed = verdict.authority is not None and verdict.authority.change_ref in changed_refs
        if verdict.accepted and verdict.authority is not None:
            draft.accept(cid, item.summary, provider_ref, verdict.authority, changed)
        else:
            draft.reject(
                cid,
                item.summary,
                verdict.reason_code or UNVERIFIABLE,
                provider_ref=provider_ref,
                authority=verdict.authority,
                changed=changed,
            )
    demote_moved(draft, previous, reader)


def demote_moved(
    draft: EvidenceDraft, previous: dict[str, dict[str, Any]], reader: AuthorityReader
) -> None:
    """Previously accepted claims of this decision whose authority revision moved become stale."""
    from dcx.state.refmap import reveal

    for cid, claim in previous.items():
        if cid in draft.claims or cid in draft.stale:
            continue
        fields = reveal(reader.minter.ws, claim["source_ref"])
        if not fields or len(fields) != 2:
            continue
        authority = reader.read(fields[0], fields[1])
        current = authority.revision_ref if authority is not None else None
        if current != claim["source_revision"]:
            draft.reject(
                cid,
                claim["summary"],
                "stale_authority_revision",
                provider_ref=claim["provider_ref"],
                authority=authority,
                source_ref=claim["source_ref"],
                source_revision=None if authority else claim["source_revision"],
            )
            draft.demoted += 1


def resolve_citation(citation: Any, minter: RefMinter) -> str:
    if isinstance(citation, dict):
        return minter.change_ref(citation["source_id"], citation["path"])
    return citation


def missing_change(what: str, citation: Any, changes: list[Change]) -> DcxError:
    """Why a citation matches no change of this run: a ``{source_id, path}`` given from the
    repository's (or goal's) root where the source's own ``path`` is the root names the path rule;
    anything else is a ref this run did not see (``rebase_refs_stale``)."""
    if isinstance(citation, dict):
        cited = str(citation["path"]).strip("/")
        if any(
            c.source_id == citation["source_id"] and cited.endswith("/" + c.path) for c in changes
        ):
            return InvalidInput(
                f"rebase: {what} cites a path from above the source's own folder: paths are "
                "relative to the source's path (its locator's `path`)",
                field="path",
                code="rebase_path_not_in_source",
                hint="`dcx prepare --show-content` lists each change's path as the rebase cites it",
            )
    return refuse_stale_refs(what)


def agent(
    draft: EvidenceDraft,
    body: dict[str, Any],
    changes: list[Change],
    reader: AuthorityReader,
    run,
    minter: RefMinter,
) -> None:
    by_ref = {c.change_ref: c for c in changes}
    recalled = {ref: item for ref, item in (run.pairs() if run is not None else [])}
    claim_ids = [
        c["claim_id"]
        for key in ("recalled_claims", "stale_or_rejected_claims")
        for c in body.get(key, [])
    ]
    if len(claim_ids) != len(
        set(claim_ids)
    ):  # the draft keys claims by id: a repeat would merge silently
        raise InvalidInput(
            "rebase: a claim id appears twice across recalled and stale claims",
            field="recalled_claims",
            code="duplicate_id",
        )
    for fact in body.get("changed_facts", []):
        change = by_ref.get(resolve_citation(fact["change_ref"], minter))
        if change is None:
            raise missing_change(f"a change in fact {fact['fact_id']}", fact["change_ref"], changes)
        if fact.get("revision_ref") not in (None, change.revision_ref):
            raise refuse_stale_refs(f"a revision in fact {fact['fact_id']}")
        draft.fact(fact["fact_id"], fact["summary"], change, generic=False)
    for claim in body.get("recalled_claims", []):
        item = recalled.get(claim["provider_ref"])
        if item is None:
            draft.reject(
                claim["claim_id"],
                claim["summary"],
                NOT_REPRODUCED,
                provider_ref=claim["provider_ref"],
            )
            draft.demoted += 1
            continue
        verdict = judge_recall(reader, item.resource_ref, item.content)
        cited = claim.get("change_ref")
        if (
            cited is not None
            and verdict.authority is not None
            and resolve_citation(cited, minter) != verdict.authority.change_ref
        ):
            verdict = verdict._replace(accepted=False, reason_code="unverifiable_recall")
        changed = verdict.authority is not None and verdict.authority.change_ref in by_ref
        if verdict.accepted and verdict.authority is not None:
            draft.accept(
                claim["claim_id"],
                claim["summary"],
                claim["provider_ref"],
                verdict.authority,
                changed,
            )
        else:
            draft.reject(
                claim["claim_id"],
                claim["summary"],
                verdict.reason_code or UNVERIFIABLE,
                provider_ref=claim["provider_ref"],
                authority=verdict.authority,
                changed=changed,
            )
    for claim in body.get("stale_or_rejected_claims", []):
        ref = resolve_citation(claim["change_ref"], minter) if claim.get("change_ref") else None
        change = by_ref.get(ref) if ref else None
        if ref and change is None:
            raise missing_change(
                f"a change in claim {claim['claim_id']}", claim["change_ref"], changes
            )
        draft.reject(
            claim["claim_id"],
            claim["summary"],
            claim["reason_code"],
            provider_ref=claim.get("provider_ref"),
            source_ref=ref,
            source_revision=change.revision_ref if change else None,
        )
        if change:
            draft.cite(change.source_id, change.change_ref, change.revision_ref, changed=True)
    for conflict in body.get("conflicts", []):
        for citation in conflict["change_refs"]:
            if resolve_citation(citation, minter) not in by_ref:
                what = f"a change in conflict {conflict['conflict_id']}"
                raise missing_change(what, citation, changes)
        refs = sorted({resolve_citation(c, minter) for c in conflict["change_refs"]})
        for ref in refs:
            change = by_ref[ref]
            draft.cite(change.source_id, change.change_ref, change.revision_ref, changed=True)
        draft.conflicts[conflict["conflict_id"]] = {
            "conflict_id": conflict["conflict_id"],
            "summary": conflict["summary"],
            "source_refs": refs,
            "conflict_rule": conflict["conflict_rule"],
            "status": conflict["status"],
        }
    check_unique_ids(draft)


def baseline(draft: EvidenceDraft, scans, minter: RefMinter) -> None:
    for scan in scans:
        if not scan.ok or scan.cursor_after is None:
            continue
        change = Change(
            scan.source_id,
            "",
            scan.cursor_after,
            "modified",
            "text",
            minter.change_ref(scan.source_id, ""),
            minter.revision_ref(scan.source_id, "", scan.cursor_after),
            None,
            None,
            scan.observed_at,
        )
        draft.fact(
            fact_id_for(change.change_ref),
            f"Adopted the current state of {scan.source_id}",
            change,
            generic=True,
        )


def receipt_values(
    mode: str,
    body: dict[str, Any] | None,
    changes: list[Change],
    draft: EvidenceDraft,
    observed_at: str,
    input_digest: str | None,
) -> dict[str, Any]:
    cited = {f["source_ref"] for f in draft.facts.values()} | {
        c["source_ref"] for c in draft.claims.values()
    }
    cited |= {c["source_ref"] for c in draft.stale.values() if "source_ref" in c}
    for conflict in draft.conflicts.values():
        cited |= set(conflict["source_refs"])
    change_refs = {c.change_ref for c in changes}
    semantic = bool(body and body.get("semantic_no_change"))
    uncited = 0 if mode == "baseline" or semantic else len(change_refs - cited)
    if not change_refs or semantic:
        status = "no_material_change"
    elif uncited or mode == "none":
        status = "incomplete"
    else:
        status = "material_change"
    return {
        "observed_at": observed_at,
        "mode": mode,
        "status": status,
        "semantic_no_change": semantic,
        "changed_item_count": len(change_refs),
        "cited_change_refs": sorted(change_refs & cited),
        "uncited_change_count": uncited,
        "changed_fact_count": len(draft.facts),
        "recalled_claim_count": len(draft.claims),
        "stale_or_rejected_claim_count": len([c for c in draft.stale if c not in draft.claims]),
        "conflict_count": len(draft.conflicts),
        "demoted_claim_count": draft.demoted,
        "input_digest": input_digest,
    }
