"""``exact_read_many`` (one call for many exact reads, issue 20) against ``exact_read`` one by one.

The oracle is the port's one-item call, which the rest of the suite judges
against independent models: for a git source and a folder source, over a
scan holding text, binary, oversize and deleted items plus items the scan did
not report (a stale revision, a path the scan never saw, a deletion that is
not one), the batch must give the same answers in the same order, and the
plane's ``exact_read_scan`` (which uses the batch) the same map as
``exact_read_item`` per item. The git batch must cost one ``cat-file``
process however many items it reads; an adapter breaking the contract in a
batch answer is refused per item as for one read.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dcx.core.clock import FixedClock
from dcx.sources.base import DELETED, ReadResult
from dcx.sources.plane import exact_read_item, exact_read_scan, scan_source
from tests.support import git as gitkit
from tests.support.sources import binding_block, configure, docs_registry, plane, source_block

CLOCK = FixedClock("2026-11-29T18:00:00Z")
NOW = CLOCK.now()


def _extra_items(scan, first_ref: str):
    """Items no scan of this run reported as such: exact_read's slow paths."""
    sample = scan.items[0]
    return [
        sample._replace(
            revision="0" * len(sample.revision) if len(sample.revision) in (40, 64) else "0" * 64
        ),
        sample._replace(resource_ref="never/scanned.md"),
        sample._replace(
            resource_ref=first_ref, revision=DELETED, change="deleted", content_kind="deleted"
        ),
        sample._replace(resource_ref="../escape.md"),
    ]


def _compare(providers, scan, items, max_bytes: int) -> list[ReadResult]:
    provider = providers.get(scan.provider_id)
    deadline = 1e18
    many = provider.exact_read_many(scan.source, items, max_bytes, deadline, NOW)
    one = [provider.exact_read(scan.source, item, max_bytes, deadline, NOW) for item in items]
    assert many == one
    reads = exact_read_scan(providers, scan, clock=CLOCK)
    assert reads == {
        item.resource_ref: exact_read_item(providers, scan, item, clock=CLOCK)
        for item in scan.items
    }
    return many


@pytest.mark.parametrize(
    ("one_pass_cap", "per_pass"),
    [(None, None), (64, None), (None, 5)],
    ids=["one-pass", "sizes-first", "overlapping-passes"],
)
def test_git_batch_reads_answer_as_single_reads(
    fresh_ws: Path, one_pass_cap, per_pass, monkeypatch
) -> None:
    from dcx.sources import git as git_module
    from dcx.sources import gitblobs, gitrepo

    if one_pass_cap is not None:
        monkeypatch.setattr(gitblobs, "ONE_PASS_CAP", one_pass_cap)
    if per_pass is not None:  # 33 blobs in 7 passes, each started before the previous is checked
        monkeypatch.setattr(git_module, "READ_MANY_ITEMS", per_pass)
    repo = gitkit.init(fresh_ws / "auth")
    files = {f"docs/n{i:02d}.md": f"note {i}\n" * (i + 1) for i in range(30)}
    files.update(
        {
            "docs/bin.dat": b"\x00\xff\xfe binary",
            "docs/big.md": "x" * 3000,
            "docs/gone.md": "soon gone\n",
        }
    )
    first = gitkit.commit(repo, files, "first")
    gitkit.commit(
        repo, {"docs/gone.md": None, "docs/n03.md": "edited\n", "docs/new.md": "new\n"}, "second"
    )
    configure(
        fresh_ws,
        binding_block("repo", "git")
        + source_block("source:git", gitkit.git_source("source:git", "auth"), provider_id="repo"),
        max_read_bytes=2048,
    )
    _ws, _profile, registry, providers = plane(fresh_ws)
    source = registry.source("source:git")
    full = scan_source(providers, source, cursor_before=None, clock=CLOCK)
    cursor = full.cursor_after.replace(gitkit.head(repo), first)
    scan = scan_source(
        providers, source, cursor_before=cursor, clock=CLOCK
    )  # deletion, edit, addition
    assert {i.change for i in scan.items} == {"added", "modified", "deleted"}
    full = scan_source(
        providers, source, cursor_before=None, clock=CLOCK
    )  # the provider now holds this scan
    runs = []
    real_run, real_start = gitrepo.Repo._run, gitrepo.Repo.start

    def counting(self, args, deadline, **kw):
        runs.append(args[0])
        return real_run(self, args, deadline, **kw)

    def counting_start(self, args, deadline, **kw):  # a git process started to run unattended
        runs.append(args[0])
        return real_start(self, args, deadline, **kw)

    monkeypatch.setattr(gitrepo.Repo, "_run", counting)
    monkeypatch.setattr(gitrepo.Repo, "start", counting_start)
    items = list(full.items)
    got = _compare(providers, full, items + _extra_items(full, "docs/n00.md"), 2048)
    statuses = {r.resource_ref: r.status for r in got[: len(items)]}
    assert statuses["docs/bin.dat"] == "binary" and statuses["docs/big.md"] == "oversize"
    texts = {r.resource_ref: r.content for r in got[: len(items)]}
    assert statuses["docs/n29.md"] == "verified" and texts["docs/n29.md"] == "note 29\n" * 30
    assert [r.status for r in got[len(items) :]] == ["failed", "failed", "failed", "failed"]
    runs.clear()
    provider = providers.get("repo")
    provider.exact_read_many(full.source, items, 2048, 1e18, NOW)
    if per_pass is not None:
        assert runs == ["cat-file"] * 7, runs
    elif one_pass_cap is None:
        assert runs == ["cat-file"], runs  # 33 reads, one git process
    else:
        assert set(runs) == {"cat-file"} and len(runs) >= 2, runs  # sizes first, then the bytes


def test_folder_batch_reads_answer_as_single_reads(fresh_ws: Path) -> None:
    docs = fresh_ws / "docs"
    docs.mkdir()
    for i in range(12):
        (docs / f"n{i}.md").write_text(f"note {i}\n")
    (docs / "bin.md").write_bytes(b"\xff\xfe")
    docs_registry(fresh_ws)
    _ws, _profile, registry, providers = plane(fresh_ws)
    scan = scan_source(providers, registry.source("source:docs"), cursor_before=None, clock=CLOCK)
    (docs / "n1.md").write_text("changed after the scan\n")
    (docs / "n2.md").unlink()
    got = _compare(providers, scan, list(scan.items) + _extra_items(scan, "n0.md"), 1 << 20)
    assert {r.status for r in got} >= {"verified", "failed", "binary"}


class _Broken:
    """An adapter whose batch answers break the contract in two ways."""

    def __init__(self, real) -> None:
        self.real = real

    def __getattr__(self, name):
        return getattr(self.real, name)

    def exact_read_many(self, source, items, max_bytes, deadline, observed_at):
        answers = self.real.exact_read_many(source, items, max_bytes, deadline, observed_at)
        answers[0] = answers[0]._replace(revision="f" * 64)  # a verified read of another revision
        answers[1] = answers[1]._replace(status="verified", content=None)
        return answers


def test_a_batch_answer_breaking_the_contract_is_refused_per_item(fresh_ws: Path) -> None:
    docs = fresh_ws / "docs"
    docs.mkdir()
    for i in range(4):
        (docs / f"n{i}.md").write_text(f"note {i}\n")
    docs_registry(fresh_ws)
    _ws, _profile, registry, providers = plane(fresh_ws)
    scan = scan_source(providers, registry.source("source:docs"), cursor_before=None, clock=CLOCK)
    providers._made[scan.provider_id] = _Broken(providers.get(scan.provider_id))
    reads = exact_read_scan(providers, scan, clock=CLOCK)
    first, second, *rest = (reads[i.resource_ref] for i in scan.items)
    assert first.status == second.status == "failed"
    assert first.reason_code == second.reason_code == "provider_contract_invalid"
    assert all(r.status == "verified" for r in rest)


def test_a_failing_pass_leaves_no_git_running(fresh_ws: Path, monkeypatch) -> None:
    """The pass started ahead is stopped when the loop fails before reading it."""
    from dcx.sources import git as git_module

    repo = gitkit.init(fresh_ws / "auth")
    gitkit.commit(repo, {f"docs/n{i:02d}.md": f"note {i}\n" for i in range(12)}, "first")
    configure(
        fresh_ws,
        binding_block("repo", "git")
        + source_block("source:git", gitkit.git_source("source:git", "auth"), provider_id="repo"),
    )
    _ws, _profile, registry, providers = plane(fresh_ws)
    full = scan_source(providers, registry.source("source:git"), cursor_before=None, clock=CLOCK)
    monkeypatch.setattr(git_module, "READ_MANY_ITEMS", 4)
    started = []
    real_start = git_module.start_pass
    monkeypatch.setattr(
        git_module,
        "start_pass",
        lambda *a, **kw: started.append(real_start(*a, **kw)) or started[-1],
    )
    real_checked = git_module._read_checked
    calls = []

    def failing(*a, **kw):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("boom")
        return real_checked(*a, **kw)

    monkeypatch.setattr(git_module, "_read_checked", failing)
    with pytest.raises(RuntimeError):
        providers.get("repo").exact_read_many(full.source, list(full.items), 1 << 20, 1e18, NOW)
    assert len(started) == 3  # chunk 2 ahead, chunk 1 (by _read_checked), chunk 3 ahead
    assert all(p.started.proc.poll() is not None for p in started)
