"""The assembler's judgement of recall against current authority (SPEC §8.1, §8.2).

The reader is handed plain functions for the file reads, the content look-up and the
resource-ref parsing, as ``ops.prepare`` hands it the planes'. Each case's expected verdict
comes from the rules of SPEC §8.2 written out here: the authority text of each file is fixed
in the test, so nothing but the assembler decides.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import pytest

from dcx.core.workspace import Workspace
from dcx.evidence.assembler import (
    CONVERSATION,
    MAX_CONTENT_CANDIDATES,
    STALE,
    UNVERIFIABLE,
    AuthorityReader,
    Change,
    judge_recall,
)
from dcx.state.keys import load_key
from dcx.state.profile import Binding, Registry, Source
from dcx.state.refmap import RefMinter

CLAIM = (
    "Roll the catalog cache TTL back to 90 s\nwhen origin p99 stays above 400 ms for 10 minutes."
)
MOVED = "Roll the catalog cache TTL back to 60 s\nwhen origin p99 stays above 250 ms for 5 minutes."
REV_A = "a" * 64
REV_B = "b" * 64


class Chunk(NamedTuple):
    source_id: str
    path: str
    revision: str


class Text(NamedTuple):
    revision: str
    text: str


def source(
    source_id: str,
    *,
    priority: str = "p0",
    provider: str = "files",
    policy: str = "always",
    enabled: bool = True,
) -> Source:
    return Source(
        source_id=source_id,
        provider_id=provider,
        source_kind="document",
        priority=priority,
        evidence_level="s1",
        objectives=("o",),
        scan_mode="incremental",
        exact_read_policy=policy,
        freshness_seconds=3600,
        locator={"path": "docs"},
        enabled=enabled,
    )


REGISTRY = Registry(
    bindings=(Binding("files", "local-file", {}), Binding("plugin", "some-plugin", {})),
    sources=(
        source("source:p0"),
        source("source:p1", priority="p1"),
        source("source:off", enabled=False),
        source("source:plugin", provider="plugin"),
        source("source:never", policy="never"),
    ),
    raw={},
)


def chunk_ref(source_id: str, path: str, revision: str) -> str:
    return f"chunk:{source_id}|{path}|{revision}"


def chunk_of(resource_ref: str) -> Chunk | None:
    if not resource_ref.startswith("chunk:"):
        return None
    return Chunk(*resource_ref[len("chunk:") :].split("|"))


class World:
    """Files as they are now, and what an index would find for a text; every call is counted."""

    def __init__(
        self, files: dict[tuple[str, str], Text], found: list[tuple[str, str]] | None = None
    ) -> None:
        self.files = files
        self.found = found or []
        self.reads: list[tuple[str, str]] = []

    def read_file(self, src: Source, path: str) -> Text | None:
        self.reads.append((src.source_id, path))
        return self.files.get((src.source_id, path))

    def find(self, _content: str) -> list[tuple[str, str]]:
        return list(self.found)


@pytest.fixture
def minter(fresh_ws: Path):
    ws = Workspace(fresh_ws)
    with RefMinter(ws, load_key(ws), record=False) as m:
        yield m


def reader(minter: RefMinter, world: World, changes: list[Change] = ()) -> AuthorityReader:  # type: ignore[assignment]
    return AuthorityReader(
        REGISTRY,
        minter,
        list(changes),
        read_file=world.read_file,
        find_by_content=world.find,
        chunk_of=chunk_of,
    )


def test_a_chunk_whose_current_file_confirms_it_is_accepted(minter) -> None:
    world = World({("source:p0", "runbook.md"): Text(REV_B, f"# Runbook\n\n{CLAIM}\n")})
    verdict = judge_recall(
        reader(minter, world), chunk_ref("source:p0", "runbook.md", REV_A), CLAIM
    )
    assert (verdict.accepted, verdict.reason_code) == (True, None)
    assert (
        verdict.authority is not None and verdict.authority.revision == REV_B
    )  # the current revision is cited
    assert verdict.authority.revision_ref == minter.revision_ref("source:p0", "runbook.md", REV_B)


def test_a_chunk_whose_file_moved_away_is_stale_and_one_never_said_is_unverifiable(minter) -> None:
    world = World({("source:p0", "runbook.md"): Text(REV_B, MOVED)})
    moved = judge_recall(reader(minter, world), chunk_ref("source:p0", "runbook.md", REV_A), CLAIM)
    assert (moved.accepted, moved.reason_code) == (False, STALE)
    same_rev = judge_recall(
        reader(minter, world), chunk_ref("source:p0", "runbook.md", REV_B), CLAIM
    )
    assert (same_rev.accepted, same_rev.reason_code) == (False, UNVERIFIABLE)


def test_an_unreadable_file_cannot_confirm(minter) -> None:
    verdict = judge_recall(
        reader(minter, World({})), chunk_ref("source:p0", "gone.md", REV_A), CLAIM
    )
    assert (verdict.accepted, verdict.reason_code, verdict.authority) == (False, UNVERIFIABLE, None)


def test_conversations_and_short_items_are_never_accepted(minter) -> None:
    world = World({("source:p0", "runbook.md"): Text(REV_A, CLAIM)}, [("source:p0", "runbook.md")])
    talk = judge_recall(reader(minter, world), "host-session:codex:abc", CLAIM)
    assert (talk.accepted, talk.reason_code) == (False, CONVERSATION)
    short = judge_recall(
        reader(minter, world), chunk_ref("source:p0", "runbook.md", REV_A), "TTL is 90 s"
    )
    assert (short.accepted, short.reason_code) == (False, UNVERIFIABLE)
    assert world.reads == []  # neither needed a read


@pytest.mark.parametrize(
    "source_id", ["source:off", "source:plugin", "source:never", "source:unknown"]
)
def test_only_enabled_builtin_sources_that_may_be_read_are_authority(
    minter, source_id: str
) -> None:
    world = World({(source_id, "runbook.md"): Text(REV_A, CLAIM)})
    verdict = judge_recall(reader(minter, world), chunk_ref(source_id, "runbook.md", REV_A), CLAIM)
    assert (verdict.accepted, verdict.reason_code) == (False, UNVERIFIABLE)
    assert world.reads == []  # the rule decides before any read


def test_this_runs_verified_reads_are_authority_without_reading_again(minter) -> None:
    change = Change(
        "source:p0",
        "runbook.md",
        REV_A,
        "modified",
        "text",
        minter.change_ref("source:p0", "runbook.md"),
        minter.revision_ref("source:p0", "runbook.md", REV_A),
        "verified",
        CLAIM,
        "2026-11-29T18:00:00Z",
    )
    world = World({})
    verdict = judge_recall(
        reader(minter, world, [change]), chunk_ref("source:p0", "runbook.md", REV_A), CLAIM
    )
    assert verdict.accepted and world.reads == []


def test_content_candidates_are_tried_in_authority_order(minter) -> None:
    # the index ranks the p1 file first; authority order (priority, source id, path) tries p0 first
    world = World(
        {("source:p1", "a.md"): Text(REV_A, CLAIM), ("source:p0", "z.md"): Text(REV_B, CLAIM)},
        [("source:p1", "a.md"), ("source:p0", "z.md")],
    )
    verdict = judge_recall(reader(minter, world), "viking://notes/ttl", CLAIM)
    assert verdict.accepted and verdict.authority is not None
    assert (verdict.authority.source_id, verdict.authority.path) == ("source:p0", "z.md")
    assert world.reads == [("source:p0", "z.md")]  # the first that confirms wins


def test_a_candidate_that_is_the_items_own_document_but_moved_makes_it_stale(minter) -> None:
    world = World({("source:p0", "runbook.md"): Text(REV_A, MOVED)}, [("source:p0", "runbook.md")])
    own = judge_recall(reader(minter, world), "viking://docs/runbook.md", CLAIM)
    assert (own.accepted, own.reason_code) == (False, STALE)
    other = judge_recall(reader(minter, world), "viking://docs/other.md", CLAIM)
    assert (other.accepted, other.reason_code) == (False, UNVERIFIABLE)


def test_candidates_are_unique_and_bounded(minter) -> None:
    found = [("source:p0", f"f{i % 20}.md") for i in range(40)]
    cands = reader(minter, World({}, found)).candidates_by_content(CLAIM)
    assert len(cands) == MAX_CONTENT_CANDIDATES == len(set(cands))
    assert cands == sorted(cands)  # one priority and source: path order


def test_the_reader_reads_each_file_once_per_run(minter) -> None:
    world = World({("source:p0", "runbook.md"): Text(REV_A, CLAIM)})
    r = reader(minter, world)
    for _ in range(3):
        judge_recall(r, chunk_ref("source:p0", "runbook.md", REV_A), CLAIM)
    assert world.reads == [("source:p0", "runbook.md")]
