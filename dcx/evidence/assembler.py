"""The evidence assembler: scans, exact reads and recall → evidence records (SPEC §8.1, §8.2).

Authority wins. A recalled item becomes an accepted claim only when the
*current* exact-read authority text confirms it (``dcx.evidence.authority.confirms``);
otherwise it is stale (the authority moved away from it), rejected (nothing
could confirm it) or — when the agent says so — a conflict. Never silently
accepted, never a crash.

Where a recalled item's authority is:

- a ``bm25`` item names its source, file and the revision it was indexed at;
- any other provider's item is matched by content: candidates come from the
  bm25 index (at most 8 files, read within ``max_read_bytes``), the first
  that confirms it wins, in (priority, source id, path) order; when none
  does but one is the item's own document (``authority.same_document``: its
  name ends the item's reference, or half the claim's lines are still in
  it), the item is stale — its authority was edited since — not unverifiable;
- items that name a conversation (``obelisk:``/``host-session:`` resource
  refs) are never accepted: a conversation is not authority.

Authority is read from the built-in adapters' sources only: a local-file
source's file as it is now, a git source's blob at its ref's current commit
(a plugin source's items can be changed facts, but cannot confirm recall in
v0) — read fresh, even when the file did not change, and recorded in
``source_revisions`` with ``changed: false``. The reads, the index look-up
and the parsing of a provider's resource refs are handed in by the caller
(``dcx.ops.prepare``): this module imports no plane.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple, Protocol

from dcx.core.errors import InvalidInput, Refused
from dcx.core.vocab import policy_reads
from dcx.evidence.authority import confirms, same_document, too_short
from dcx.state.profile import Registry, Source
from dcx.state.refmap import RefMinter

CONVERSATION_PREFIXES = ("obelisk:", "host-session:")
MAX_CONTENT_CANDIDATES = 8
PRIORITY_ORDER = {"p0": 0, "p1": 1, "p2": 2}

STALE = "stale_authority_revision"
UNVERIFIABLE = "unverifiable_recall"
NOT_REPRODUCED = "recall_not_reproduced"
CONVERSATION = "conversation_not_authority"


class Change(NamedTuple):
    """One changed item of this run, private (path, revision) and public (refs)."""

    source_id: str
    path: str
    revision: str
    change: str  # added | modified | deleted
    content_kind: str  # text | binary | oversize | deleted (after the read, when there was one)
    change_ref: str
    revision_ref: str
    read_status: str | None  # verified | binary | oversize | deleted | failed | None (not read)
    content: str | None
    observed_at: str


class Authority(NamedTuple):
    source_id: str
    path: str
    revision: str
    text: str
    change_ref: str
    revision_ref: str


class Verdict(NamedTuple):
    accepted: bool
    reason_code: str | None
    authority: Authority | None


class Chunk(Protocol):
    """What a provider's resource ref says of its authority: the file and the revision it was read at."""

    @property
    def source_id(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def revision(self) -> str: ...


class FileText(Protocol):
    """A file's current text and its revision (blake3 of the bytes, or a git blob id)."""

    @property
    def revision(self) -> str: ...
    @property
    def text(self) -> str: ...


# handed in by ops (the planes stay below this module):
ReadFile = Callable[
    [Source, str], FileText | None
]  # a built-in source's file as it is now, UTF-8, bounded
FindByContent = Callable[
    [str], list[tuple[str, str]]
]  # (source_id, path) that an index finds for a text
ChunkOf = Callable[
    [str], Chunk | None
]  # the chunk a recalled item's resource ref names, if it names one


class AuthorityReader:
    """The current authority text of a file of a built-in source, read once per run.

    What is read and how comes from the caller: ``read_file`` (the source
    plane's exact read of a file as it is now), ``find_by_content`` (content
    candidates, from the bm25 index) and ``chunk_of`` (the chunk a resource ref
    names). The rules of which sources may confirm recall live here.
    """

    def __init__(
        self,
        registry: Registry,
        minter: RefMinter,
        changes: Sequence[Change],
        *,
        read_file: ReadFile,
        find_by_content: FindByContent,
        chunk_of: ChunkOf,
    ) -> None:
        self.registry = registry
        self.minter = minter
        self.read_file = read_file
        self.find_by_content = find_by_content
        self.chunk_of = chunk_of
        self._cache: dict[tuple[str, str], Authority | None] = {}
        for change in changes:  # this run's verified reads are authority already
            if change.read_status == "verified" and change.content is not None:
                self._cache[(change.source_id, change.path)] = Authority(
                    change.source_id,
                    change.path,
                    change.revision,
                    change.content,
                    change.change_ref,
                    change.revision_ref,
                )

    def source(self, source_id: str) -> Source | None:
        source = self.registry.source(source_id)
        if source is None or not source.enabled:
            return None
        binding = next(
            (b for b in self.registry.bindings if b.provider_id == source.provider_id), None
        )
        return source if binding is not None and binding.builtin else None

    def read(self, source_id: str, path: str) -> Authority | None:
        key = (source_id, path)
        if key not in self._cache:
            self._cache[key] = self._read(source_id, path)
        return self._cache[key]

    def _read(self, source_id: str, path: str) -> Authority | None:
        source = self.source(source_id)
        if source is None or source.exact_read_policy == "never":
            return None
        found = self.read_file(source, path)
        if found is None:
            return None
        return Authority(
            source_id,
            path,
            found.revision,
            found.text,
            self.minter.change_ref(source_id, path),
            self.minter.revision_ref(source_id, path, found.revision),
        )

    def candidates_by_content(self, content: str) -> list[tuple[str, str]]:
        """(source_id, path) of files the index finds for ``content``, in authority order."""
        found: list[tuple[str, str]] = []
        for pair in self.find_by_content(content):
            if pair not in found:
                found.append(pair)

        def order(pair: tuple[str, str]) -> tuple[int, str, str]:
            source = self.registry.source(pair[0])
            return (PRIORITY_ORDER.get(source.priority if source else "p2", 3), pair[0], pair[1])

        return sorted(found, key=order)[:MAX_CONTENT_CANDIDATES]


def judge_recall(reader: AuthorityReader, resource_ref: str, content: str) -> Verdict:
    """Accepted only if current authority confirms the item (see the module doc)."""
    if resource_ref.startswith(CONVERSATION_PREFIXES):
        return Verdict(False, CONVERSATION, None)
    if too_short(content):
        return Verdict(False, UNVERIFIABLE, None)
    chunk = reader.chunk_of(resource_ref)
    if chunk is not None:
        authority = reader.read(chunk.source_id, chunk.path)
        if authority is None:
            return Verdict(False, UNVERIFIABLE, None)
        if confirms(content, authority.text):
            return Verdict(True, None, authority)
        if authority.revision != chunk.revision:
            return Verdict(False, STALE, authority)
        return Verdict(False, UNVERIFIABLE, authority)
    moved_from: Authority | None = None  # the item's own document, which no longer confirms it
    for source_id, path in reader.candidates_by_content(content):
        authority = reader.read(source_id, path)
        if authority is None:
            continue
        if confirms(content, authority.text):
            return Verdict(True, None, authority)
        if moved_from is None and same_document(resource_ref, path, content, authority.text):
            moved_from = authority
    if moved_from is not None:
        return Verdict(False, STALE, moved_from)
    return Verdict(False, UNVERIFIABLE, None)


def claim_id_for(provider_ref: str) -> str:
    return "claim-" + provider_ref.rsplit("-", 1)[1][:12]


def fact_id_for(change_ref: str) -> str:
    return "fact-" + change_ref.rsplit("-", 1)[1][:12]


GENERIC_SUMMARY = {
    "added": "Added file in {source}",
    "modified": "Modified file in {source}",
    "deleted": "Deleted file in {source}",
    "binary": "Changed binary file in {source}",
    "oversize": "Changed file over the read limit in {source}",
}


def generic_summary(change: Change) -> str:
    key = change.content_kind if change.content_kind in ("binary", "oversize") else change.change
    return GENERIC_SUMMARY[key].format(source=change.source_id)


def absorbable(change: Change, policy: str) -> bool:
    """Read and verified, or a terminal outcome (binary, oversize, deleted)."""
    if change.content_kind == "deleted" or change.read_status in (
        "verified",
        "binary",
        "oversize",
        "deleted",
    ):
        return True
    return not policy_reads(policy, deleted=False)  # never: nothing to read


class EvidenceDraft:
    """Evidence records under construction; every cited ref also lands in source_revisions."""

    def __init__(self, observed_at: str, freshness: Mapping[str, str]) -> None:
        self.observed_at = observed_at
        self.freshness = freshness  # source_id -> current | stale
        self.facts: dict[str, dict[str, Any]] = {}
        self.claims: dict[str, dict[str, Any]] = {}
        self.stale: dict[str, dict[str, Any]] = {}
        self.conflicts: dict[str, dict[str, Any]] = {}
        self.revisions: dict[str, dict[str, Any]] = {}
        self.demoted = 0

    def cite(self, source_id: str, change_ref: str, revision_ref: str, *, changed: bool) -> None:
        row = self.revisions.get(change_ref)
        if row is None or (changed and not row["changed"]):
            self.revisions[change_ref] = {
                "source_ref": change_ref,
                "revision": revision_ref,
                "observed_at": self.observed_at,
                "freshness": self.freshness.get(source_id, "current"),
                "changed": changed,
            }

    def fact(self, fact_id: str, summary: str, change: Change, *, generic: bool) -> None:
        self.facts[fact_id] = {
            "fact_id": fact_id,
            "summary": summary,
            "source_ref": change.change_ref,
            "source_revision": change.revision_ref,
            "observed_at": change.observed_at,
            "freshness": self.freshness.get(change.source_id, "current"),
            "generic": generic or None,
        }
        self.cite(change.source_id, change.change_ref, change.revision_ref, changed=True)

    def accept(
        self, claim_id: str, summary: str, provider_ref: str, authority: Authority, changed: bool
    ) -> None:
        self.claims[claim_id] = {
            "claim_id": claim_id,
            "summary": summary,
            "provider_ref": provider_ref,
            "source_ref": authority.change_ref,
            "source_revision": authority.revision_ref,
            "observed_at": self.observed_at,
            "exact_read_verified": True,
        }
        self.cite(
            authority.source_id, authority.change_ref, authority.revision_ref, changed=changed
        )

    def reject(
        self,
        claim_id: str,
        summary: str,
        reason_code: str,
        *,
        provider_ref: str | None = None,
        authority: Authority | None = None,
        changed: bool = False,
        source_ref: str | None = None,
        source_revision: str | None = None,
    ) -> None:
        row = {
            "claim_id": claim_id,
            "summary": summary,
            "provider_ref": provider_ref,
            "observed_at": self.observed_at,
            "reason_code": reason_code,
            "source_ref": source_ref,
            "source_revision": source_revision,
        }
        if authority is not None:
            row["source_ref"], row["source_revision"] = authority.change_ref, authority.revision_ref
            self.cite(
                authority.source_id, authority.change_ref, authority.revision_ref, changed=changed
            )
        self.stale[claim_id] = {k: v for k, v in row.items() if v is not None}

    def records(self) -> dict[str, list[dict[str, Any]]]:
        # every ref a record cites appears in source_revisions (SPEC §8.1); a claim demoted
        # because its file can no longer be read keeps its old revision, listed as stale
        for claim in self.stale.values():
            ref, revision = claim.get("source_ref"), claim.get("source_revision")
            if ref and revision and ref not in self.revisions:
                self.revisions[ref] = {
                    "source_ref": ref,
                    "revision": revision,
                    "observed_at": self.observed_at,
                    "freshness": "stale",
                    "changed": False,
                }
        clean = [{k: v for k, v in f.items() if v is not None} for f in self.facts.values()]
        return {
            "changed_facts": clean,
            "recalled_claims": list(self.claims.values()),
            "stale_or_rejected_claims": [
                c for cid, c in self.stale.items() if cid not in self.claims
            ],
            "conflicts": list(self.conflicts.values()),
            "source_revisions": list(self.revisions.values()),
        }


def check_unique_ids(draft: EvidenceDraft) -> None:
    ids = list(draft.claims) + [c for c in draft.stale if c not in draft.claims]
    if len(ids) != len(set(ids)):
        raise InvalidInput(
            "rebase: a claim id appears twice across recalled and stale claims",
            field="recalled_claims",
            code="duplicate_id",
        )


def previous_claims(previous: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The accepted claims of a decision's earlier evidence packets, latest first wins."""
    out: dict[str, dict[str, Any]] = {}
    for packet in previous:
        for claim in packet.get("recalled_claims", []):
            out[claim["claim_id"]] = claim
    return out


def refuse_stale_refs(what: str) -> Refused:
    return Refused(
        f"rebase refused (rebase_refs_stale): it cites {what} that this run did not see",
        code="rebase_refs_stale",
        hint="prepare again and cite the refs of this run (see `dcx prepare --show-content`)",
    )
