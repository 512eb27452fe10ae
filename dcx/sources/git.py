"""The built-in ``git`` source adapter (SPEC §15).

``locator = {repo, ref, path?, include?, exclude?}`` reads authority from a
repository at a ref, without a work tree (bare repositories work). Revisions
are blob ids, which git has already computed; they reach public packets only
as keyed refs, like local-file revisions.

Cursors (private, ≤ 256 characters) name the state absorbed:

- ``git:<commit>:<filter>`` — the files at ``commit`` under the locator's
  ``path``/``include``/``exclude`` (``filter`` is 16 hex of blake3 over them,
  so a changed filter is seen, never silently diffed under the wrong one);
- ``git:<base>:<filter>:<target>:<n>`` — a capped scan's partial advance:
  the state at ``base`` (``-`` for the empty state) with the first ``n``
  changes (in path order) from ``base`` to ``target`` applied. The next scan
  resumes toward ``target`` before it looks at the ref again.

A scan:

1. resolves the ref to a commit, with its last 32 first-parent ancestors
   (one ``rev-list``: when the ref is at the cursor's commit, that is the
   whole no-change scan);
2. checks ancestry (the cursor among those ancestors, else ``merge-base
   --is-ancestor``): a ref that moved to a
   commit not descending from the cursor's (force-push, rebase) is noted
   ``cursor_rewound``; the comparison is then tree to tree, never through
   history, so deletions are still seen. A cursor commit no longer in the
   repository is a full rescan from the empty state (``cursor_rewound``), or,
   in a shallow repository, ``git_shallow_past_cursor`` (fail open: deepen
   the clone);
3. diffs the two trees (``diff-tree -r -z --no-renames``), or lists the tree
   (``ls-tree -r -z``) on a first scan, keeps regular files that pass the
   filter, and skips (counting) submodules and symlinks: a symlink is never
   followed. Names that would escape ``path`` (only a crafted tree has them)
   are refused and counted as ``skipped_outside_locator``.

Exact read = the blob at the scanned commit: the item must be one the scan of
this run reported (else it is resolved at the ref's current commit), its
bytes are fetched with ``cat-file --batch`` (in batches, prefetching the
scan's next items, so N reads cost a few processes, not N) and re-hashed
with git's object hash before they count as verified. Binary, oversize and a
deletion are terminal outcomes as for local files.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import blake3

from dcx.core.canonical import canonical_bytes
from dcx.core.gcpause import gc_paused
from dcx.core.workspace import Workspace
from dcx.sources.base import (
    COMPLETED,
    DELETED,
    NO_CHANGE,
    PROVIDER_CONFIGURATION_FAILED,
    READ_IO_ERROR,
    READ_MISMATCH,
    READ_NOT_TEXT,
    READ_OVERSIZE,
    READ_TIMEOUT,
    SCAN_TIMEOUT,
    VERIFIED,
    Health,
    ReadResult,
    ScanItem,
    ScanResult,
    ScanTelemetry,
    SourceUnavailable,
    failed_read,
)
from dcx.sources.gitblobs import (
    BINARY,
    MISMATCH,
    MISSING,
    OVERSIZE,
    Blob,
    Pass,
    object_id,
    read_blobs,
    start_pass,
    verified_pass,
)
from dcx.sources.gitlocate import clean_rel, ref_hint
from dcx.sources.gitrepo import (
    GIT_TOO_OLD,
    GIT_UNAVAILABLE,
    MIN_GIT,
    READ_BATCH_BYTES,
    READ_BATCH_ITEMS,
    REF_MISSING,
    SHALLOW_PAST_CURSOR,
    Counts,
    Entry,
    GitError,
    GitTimeout,
    Repo,
    git_version,
    locator_filter,
    resolve_repo,
)
from dcx.state.profile import Source

ADAPTER = "git"
VERSION = "1"
CURSOR_PREFIX = "git:"
EMPTY = "-"
REWOUND = "cursor_rewound"
LOCATOR_CHANGED = "locator_changed"
HEALTH_SECONDS = 5.0
# blobs asked of one cat-file process by exact_read_many; the next pass runs while one is checked
READ_MANY_ITEMS = 1 << 14


class Cursor(NamedTuple):
    base: str | None  # None: the empty state
    filter: str
    target: str | None = None  # set on a partial advance
    applied: int = 0

    def text(self) -> str:
        base = self.base or EMPTY
        if self.target is None:
            return f"{CURSOR_PREFIX}{base}:{self.filter}"
        return f"{CURSOR_PREFIX}{base}:{self.filter}:{self.target}:{self.applied}"


def parse_cursor(value: str) -> Cursor:
    """A cursor this adapter made; ``SourceUnavailable(cursor_invalid)`` otherwise."""
    parts = value[len(CURSOR_PREFIX) :].split(":") if value.startswith(CURSOR_PREFIX) else []

    def oid(text: str) -> bool:
        return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)

    if len(parts) == 2 and oid(parts[0]) and len(parts[1]) == 16:
        return Cursor(parts[0], parts[1])
    if (
        len(parts) == 4
        and (parts[0] == EMPTY or oid(parts[0]))
        and len(parts[1]) == 16
        and oid(parts[2])
        and parts[3].isdigit()
        and int(parts[3]) > 0
    ):
        return Cursor(None if parts[0] == EMPTY else parts[0], parts[1], parts[2], int(parts[3]))
    raise SourceUnavailable("cursor_invalid")


def filter_id(prefix: str, locator: dict[str, Any]) -> str:
    data = canonical_bytes(
        [prefix, sorted(locator.get("include") or ()), sorted(locator.get("exclude") or ())]
    )
    return blake3.blake3(data).hexdigest()[:16]


class Located(NamedTuple):
    repo: Repo
    ref: str
    prefix: str
    match: Callable[[str], bool] | None
    filter: str


class _Scanned(NamedTuple):
    """What this run's scan of one source reported: the commit read and (path -> blob or deleted)."""

    repo: Repo
    commit: str
    items: dict[str, str]
    order: list[str]


class GitProvider:
    """One ``git`` binding: every source of it names its own repository and ref."""

    version: str | None = VERSION

    def __init__(self, ws: Workspace, provider_id: str, config: dict[str, Any]) -> None:
        if config:
            raise SourceUnavailable(PROVIDER_CONFIGURATION_FAILED)  # git takes no config keys
        self.ws = ws
        self.provider_id = provider_id
        self._scanned: dict[str, _Scanned] = {}
        self._blobs: dict[str, Blob] = {}

    def health(self) -> Health:
        version = git_version(time.monotonic() + HEALTH_SECONDS)
        if version is None:
            return Health("unavailable", GIT_UNAVAILABLE)
        if version < MIN_GIT:
            return Health("unavailable", GIT_TOO_OLD)
        return Health("healthy")

    def locate(self, source: Source) -> Located:
        """The source's repository and filter, checked (no git process runs)."""
        locator = source.locator
        if "repo" not in locator or "ref" not in locator:
            raise SourceUnavailable(PROVIDER_CONFIGURATION_FAILED)
        ref = str(locator["ref"])
        if ".." in ref or ref.startswith(("-", "^")) or any(c.isspace() for c in ref):
            raise SourceUnavailable(REF_MISSING)  # a range or an option: not one commit
        prefix, match = locator_filter(locator)
        if prefix is None:
            raise SourceUnavailable("locator_outside_root")
        try:
            git_dir = resolve_repo(self.ws, str(locator["repo"]))
        except GitError as exc:
            raise SourceUnavailable(exc.reason_code) from None
        return Located(
            Repo(git_dir), str(locator["ref"]), prefix, match, filter_id(prefix, locator)
        )

    def check(self, source: Source, deadline: float) -> None:
        """``status --check``: the repository opens and the ref resolves (reads no tree)."""
        loc = self.locate(source)
        try:
            loc.repo.resolve(loc.ref, deadline)
        except GitError as exc:
            raise SourceUnavailable(exc.reason_code) from None

    # -- scan ----------------------------------------------------------------
    def scan(
        self,
        source: Source,
        after_cursor: str | None,
        limit: int,
        deadline: float,
        observed_at: str,
    ) -> ScanResult:
        loc = self.locate(source)
        cursor = parse_cursor(after_cursor) if after_cursor is not None else None
        try:
            with gc_paused():  # a first scan makes 100k entries and items (no cycles)
                return self._scan(source, loc, cursor, after_cursor, limit, deadline, observed_at)
        except GitTimeout:
            raise SourceUnavailable(SCAN_TIMEOUT) from None
        except GitError as exc:
            raise SourceUnavailable(exc.reason_code) from None

    def _scan(
        self,
        source: Source,
        loc: Located,
        cursor: Cursor | None,
        after_cursor: str | None,
        limit: int,
        deadline: float,
        observed_at: str,
    ) -> ScanResult:
        repo = loc.repo
        note = None
        if cursor is not None and cursor.filter != loc.filter:
            cursor, note = None, LOCATOR_CHANGED  # absorbed under another filter: read it all again
        if cursor is not None and cursor.target is not None:
            # finish the partial advance toward the commit it was heading for
            base, heading = cursor.base, cursor.target
            if (base is not None and not repo.exists(base, deadline)) or not repo.exists(
                heading, deadline
            ):
                if repo.shallow:
                    raise GitError(SHALLOW_PAST_CURSOR)
                cursor, base, note = None, None, REWOUND
                target = repo.resolve(loc.ref, deadline)
                changes, counts = self._delta(repo, None, target, loc, deadline)
            else:
                target = heading
                changes, counts = self._delta(repo, base, target, loc, deadline)
                changes = changes[cursor.applied :]
            done = cursor.applied if cursor is not None else 0
        else:
            base = cursor.base if cursor is not None else None
            moved = None
            if base is not None and ref_hint(repo.git_dir, loc.ref) not in (None, base):
                # the ref probably moved on: one `git log` may answer where to and what changed
                moved = repo.first_parent_delta(loc.ref, base, loc.prefix, loc.match, deadline)
            if moved is not None:
                target, changes, counts = moved
                return self._report(
                    source,
                    loc,
                    repo,
                    base,
                    target,
                    changes,
                    counts,
                    0,
                    note,
                    limit,
                    observed_at,
                    deadline,
                )
            recent = repo.resolve_with_ancestors(loc.ref, deadline)
            target = recent[0]
            if base is not None and target == base:
                self._scanned[source.source_id] = _Scanned(repo, target, {}, [])
                return ScanResult(NO_CHANGE, (), after_cursor, note, _telemetry(Counts()))
            if base is not None and base not in recent:
                descends = repo.is_ancestor(base, target, deadline)
                if descends is None:  # the cursor's commit is not in this repository
                    if repo.shallow:
                        raise GitError(SHALLOW_PAST_CURSOR)
                    base, note = None, REWOUND
                elif not descends:
                    note = REWOUND
            changes, counts = self._delta(repo, base, target, loc, deadline)
            done = 0
        return self._report(
            source,
            loc,
            repo,
            base,
            target,
            changes,
            counts,
            done,
            note,
            limit,
            observed_at,
            deadline,
        )

    def _report(
        self,
        source: Source,
        loc: Located,
        repo: Repo,
        base: str | None,
        target: str,
        changes: list[Entry],
        counts: Counts,
        done: int,
        note: str | None,
        limit: int,
        observed_at: str,
        deadline: float,
    ) -> ScanResult:
        """The scan's answer for ``changes`` from ``base`` toward ``target`` (``done`` already applied)."""
        if time.monotonic() > deadline:
            raise GitTimeout()
        reported = changes[:limit]
        capped = len(changes) > limit
        if capped:
            after = Cursor(base, loc.filter, target, done + len(reported)).text()
        else:
            after = Cursor(target, loc.filter).text()
        items = _items(source.source_id, reported, observed_at)
        order = [e.rel for e in reported]
        self._scanned[source.source_id] = _Scanned(
            repo, target, {i.resource_ref: i.revision for i in items}, order
        )
        status = COMPLETED if items else NO_CHANGE
        return ScanResult(status, items, after, note, _telemetry(counts, capped))

    @staticmethod
    def _delta(
        repo: Repo, base: str | None, target: str, loc: Located, deadline: float
    ) -> tuple[list[Entry], Counts]:
        if base is None:
            return repo.list_tree(target, loc.prefix, loc.match, deadline)
        return repo.diff_trees(base, target, loc.prefix, loc.match, deadline)

    # -- exact read ----------------------------------------------------------
    def exact_read(
        self, source: Source, item: ScanItem, max_bytes: int, deadline: float, observed_at: str
    ) -> ReadResult:
        if not clean_rel(item.resource_ref):
            return failed_read(item, observed_at, "locator_outside_root")
        if time.monotonic() > deadline:
            return failed_read(item, observed_at, READ_TIMEOUT)
        try:
            scanned = self._scanned.get(source.source_id)
            if scanned is None or item.resource_ref not in scanned.items:
                scanned = self._current(source, item, deadline)
            if scanned.items.get(item.resource_ref) != item.revision:
                return failed_read(item, observed_at, READ_MISMATCH)
            if item.revision == DELETED:
                return ReadResult("deleted", item.resource_ref, item.revision, observed_at)
            blob = self._blob(scanned, item, max_bytes, deadline)
        except SourceUnavailable as exc:
            return failed_read(item, observed_at, exc.reason_code)
        except GitTimeout:
            return failed_read(item, observed_at, READ_TIMEOUT)
        except GitError:
            return failed_read(item, observed_at, READ_IO_ERROR)
        if blob is None or blob.missing:
            return failed_read(item, observed_at, READ_IO_ERROR)
        if blob.size > max_bytes:
            return ReadResult(
                "oversize", item.resource_ref, item.revision, observed_at, None, READ_OVERSIZE
            )
        if blob.data is None or object_id(blob.data, len(item.revision)) != item.revision:
            return failed_read(
                item, observed_at, READ_MISMATCH
            )  # the object store gave other bytes
        try:
            text = blob.data.decode("utf-8")
        except UnicodeDecodeError:
            return ReadResult(
                "binary", item.resource_ref, item.revision, observed_at, None, READ_NOT_TEXT
            )
        return ReadResult(VERIFIED, item.resource_ref, item.revision, observed_at, text)

    def exact_read_many(
        self,
        source: Source,
        items: Sequence[ScanItem],
        max_bytes: int,
        deadline: float,
        observed_at: str,
    ) -> list[ReadResult]:
        """``exact_read`` of every item, in order: the items this run scanned through ``cat-file --batch``.

        Items the scan of this run did not report take ``exact_read``'s
        path; the rest are checked against the scan and their blobs fetched
        together, ``READ_MANY_ITEMS`` per ``cat-file --batch`` pass (sizes
        first only when a pass's output would pass ``ONE_PASS_CAP``), each
        blob re-hashed once. The passes overlap: the next one is started
        before this one is checked, so git reads while this process hashes.
        """
        with gc_paused():  # 100k texts and results (no cycles)
            return self._read_many(source, items, max_bytes, deadline, observed_at)

    def _read_many(
        self,
        source: Source,
        items: Sequence[ScanItem],
        max_bytes: int,
        deadline: float,
        observed_at: str,
    ) -> list[ReadResult]:
        scanned = self._scanned.get(source.source_id)
        known = scanned.items if scanned is not None else {}
        out: list[ReadResult | None] = [None] * len(items)
        pending: list[int] = []
        for i, item in enumerate(items):
            revision = known.get(item.resource_ref)
            if (
                revision is None
            ):  # (a path this scan reported is clean: it is read by blob id anyway)
                out[i] = self.exact_read(source, item, max_bytes, deadline, observed_at)
            elif revision != item.revision:
                out[i] = failed_read(item, observed_at, READ_MISMATCH)
            elif revision == DELETED:
                out[i] = ReadResult("deleted", item.resource_ref, item.revision, observed_at)
            else:
                pending.append(i)
        make = tuple.__new__  # ReadResult(...) without the keyword machinery: 100k of them
        chunks = [
            pending[start : start + READ_MANY_ITEMS]
            for start in range(0, len(pending), READ_MANY_ITEMS)
        ]
        ahead: Pass | None = None
        started: Pass | None = None
        try:
            for k, chunk in enumerate(chunks):
                assert scanned is not None
                oids = [items[i].revision for i in chunk]
                started, ahead = ahead, None
                if k + 1 < len(chunks):  # the next pass runs while this one is checked
                    ahead = _start_pass(
                        scanned.repo, [items[i].revision for i in chunks[k + 1]], deadline
                    )
                answers, reason = _read_checked(
                    scanned.repo, oids, max_bytes, deadline, started=started
                )
                for i in chunk:
                    item = items[i]
                    answer = answers.get(item.revision)
                    if answer is None:
                        out[i] = failed_read(item, observed_at, reason or READ_IO_ERROR)
                    else:
                        out[i] = make(
                            ReadResult,
                            (
                                answer[1],
                                item.resource_ref,
                                item.revision,
                                observed_at,
                                answer[0],
                                answer[2],
                            ),
                        )
        finally:  # passes left unread when the loop failed: never left running
            for left in (started, ahead):
                if left is not None and left.started is not None:
                    left.started.cancel()  # (a no-op once answered)
        return out  # type: ignore[return-value]

    def _current(self, source: Source, item: ScanItem, deadline: float) -> _Scanned:
        """An item this run did not scan: what its path holds at the ref's current commit."""
        loc = self.locate(source)
        commit = loc.repo.resolve(loc.ref, deadline)
        full = f"{loc.prefix}/{item.resource_ref}" if loc.prefix else item.resource_ref
        found = loc.repo.entry_at(commit, full, deadline)
        revision = found[1] if found is not None and found[0] in (b"100644", b"100755") else DELETED
        return _Scanned(loc.repo, commit, {item.resource_ref: revision}, [item.resource_ref])

    def _blob(
        self, scanned: _Scanned, item: ScanItem, max_bytes: int, deadline: float
    ) -> Blob | None:
        """The item's blob; a miss fetches it with the scan's next unread items (bounded batch)."""
        oid = item.revision
        if oid not in self._blobs:
            batch = [oid]
            at = (
                scanned.order.index(item.resource_ref)
                if item.resource_ref in scanned.order
                else len(scanned.order)
            )
            for rel in scanned.order[at + 1 :]:
                if len(batch) >= READ_BATCH_ITEMS:
                    break
                revision = scanned.items[rel]
                if revision != DELETED and revision not in self._blobs:
                    batch.append(revision)
            self._blobs = {}  # one batch held at a time: memory stays bounded
            fetched = read_blobs(
                scanned.repo, batch, max_bytes, deadline, byte_budget=READ_BATCH_BYTES
            )
            self._blobs.update(fetched)
        return self._blobs.get(oid)


def _items(source_id: str, entries: list[Entry], observed_at: str) -> tuple[ScanItem, ...]:
    """Scan items of ``entries``; a blob's kind (text, binary) and size are known once it is read."""
    make = (
        tuple.__new__
    )  # ScanItem(...) without the keyword machinery: a first scan makes 100k of them
    return tuple(
        make(ScanItem, (source_id, rel, DELETED, observed_at, "deleted", "deleted"))
        if new is None
        else make(
            ScanItem,
            (source_id, rel, new, observed_at, "text", "added" if old is None else "modified"),
        )
        for rel, old, new in entries
    )


_OUTCOMES: dict[int, tuple[str | None, str, str | None]] = {
    OVERSIZE: (None, "oversize", READ_OVERSIZE),
    MISMATCH: (None, "failed", READ_MISMATCH),  # the object store gave other bytes
    BINARY: (None, "binary", READ_NOT_TEXT),
}


def _start_pass(repo: Repo, oids: list[str], deadline: float) -> Pass | None:
    """A started ``cat-file --batch`` over ``oids``, or None (``_read_checked`` then meets the
    error itself and says which)."""
    try:
        return start_pass(repo, oids, deadline)
    except GitError:
        return None


def _read_checked(
    repo: Repo, oids: list[str], max_bytes: int, deadline: float, started: Pass | None = None
) -> tuple[dict[str, tuple[str | None, str, str | None]], str | None]:
    """Read outcomes by blob id — (text, "verified", None), or (None, status, reason code) — as
    ``exact_read`` decides them, each blob re-hashed before it counts; plus the reason the rest
    (missing from the answer) were not read: a timeout or an I/O error, else None (git had no such blob).

    One pass (``started`` already, or started here) answers them all unless its output would pass
    its cap; then batches of at most ``READ_BATCH_BYTES`` of blob bytes, sizes first.
    """
    out: dict[str, tuple[str | None, str, str | None]] = {}
    pending = list(dict.fromkeys(oids))
    if not pending:
        return out, None
    try:
        if time.monotonic() > deadline:
            raise GitTimeout()
        one = started if started is not None else start_pass(repo, pending, deadline)
        verified = verified_pass(repo, one, max_bytes)
    except GitTimeout:
        return out, READ_TIMEOUT
    except GitError:
        return out, READ_IO_ERROR
    if verified is not None:
        outcomes = _OUTCOMES
        for oid, answer in verified.items():
            if type(answer) is str:
                out[oid] = (answer, VERIFIED, None)
            elif answer != MISSING:
                out[oid] = outcomes[answer]  # type: ignore[index]
        return out, None
    while pending:  # one pass would be too large: sizes first, in batches
        if time.monotonic() > deadline:
            return out, READ_TIMEOUT
        try:
            got = read_blobs(
                repo, pending, max_bytes, deadline, byte_budget=READ_BATCH_BYTES, one_pass=False
            )
        except GitTimeout:
            return out, READ_TIMEOUT
        except GitError:
            return out, READ_IO_ERROR
        for oid, blob in got.items():
            if blob.missing:
                continue  # no such blob: an I/O error for the read
            if blob.size > max_bytes:
                out[oid] = _OUTCOMES[OVERSIZE]
            elif blob.data is None or object_id(blob.data, len(oid)) != oid:
                out[oid] = _OUTCOMES[MISMATCH]
            else:
                try:
                    out[oid] = (blob.data.decode("utf-8"), VERIFIED, None)
                except UnicodeDecodeError:
                    out[oid] = _OUTCOMES[BINARY]
        if not got:
            break  # git answered nothing for the batch: never loop on it
        pending = [o for o in pending if o not in got]
    return out, None


def _telemetry(counts: Counts, capped: bool = False) -> ScanTelemetry:
    return ScanTelemetry(
        result_cap_applied=capped,
        skipped_outside_locator=counts.outside,
        skipped_submodules=counts.submodules,
        skipped_symlinks=counts.symlinks,
    )


def current_files(
    ws: Workspace, source: Source, deadline: float
) -> tuple[Located, str, list[Entry]]:
    """The regular files a git source holds at its ref's current commit (for the indexer and audit).

    Raises ``SourceUnavailable`` with the scan's reason codes.
    """
    loc = GitProvider(ws, source.provider_id, {}).locate(source)
    try:
        commit = loc.repo.resolve(loc.ref, deadline)
        entries, _ = loc.repo.list_tree(commit, loc.prefix, loc.match, deadline)
    except GitTimeout:
        raise SourceUnavailable(SCAN_TIMEOUT) from None
    except GitError as exc:
        raise SourceUnavailable(exc.reason_code) from None
    return loc, commit, entries


def read_texts(loc: Located, oids: list[str], max_bytes: int, deadline: float) -> dict[str, Blob]:
    """Every blob of ``oids`` (sizes, and bytes of those within ``max_bytes``), batch by batch.

    A blob whose bytes do not re-hash to its id is left out (never trusted).
    """
    out: dict[str, Blob] = {}
    pending = list(dict.fromkeys(oids))
    while pending:
        batch = pending[:READ_BATCH_ITEMS]
        try:
            got = read_blobs(loc.repo, batch, max_bytes, deadline, byte_budget=READ_BATCH_BYTES)
        except GitTimeout:
            raise SourceUnavailable(SCAN_TIMEOUT) from None
        except GitError as exc:
            raise SourceUnavailable(exc.reason_code) from None
        for oid, blob in got.items():
            if blob.data is None or object_id(blob.data, len(oid)) == oid:
                out[oid] = blob
        if not got:
            break  # git answered nothing for the batch: never loop on it
        pending = [o for o in pending if o not in got]
    return out
