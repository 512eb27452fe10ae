"""A scan after a change in ONE git process (issue 20): ``first_parent_delta`` and ``ref_hint``.

Oracles are git itself, asked other questions: ``git diff-tree`` of the two
commits (the tree-to-tree difference the composed per-commit changes must
equal, entry for entry, counts included) and ``git rev-parse`` (what the
in-process ref hint may predict: that object, or the commit it peels to, or
nothing). The histories are seeded random walks with edits, deletions,
renames, mode changes, file↔directory and file↔symlink swaps, reverts to an
earlier blob, and merges (first parent kept).
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from dcx.core.clock import FixedClock
from dcx.sources.gitlocate import ref_hint
from dcx.sources.gitrepo import Repo
from dcx.sources.plane import scan_source
from tests.support import git as gitkit
from tests.support.sources import binding_block, configure, plane, source_block

CLOCK = FixedClock("2026-11-29T18:00:00Z")
FAR = 1e18


def _history(repo: Path, rng: random.Random, steps: int) -> list[str]:
    """Commit a random walk on main; return the first-parent chain, oldest first."""
    names = [f"docs/{d}f{i}.md" for d in ("", "x/", "y/z/") for i in range(3)] + [
        "docs/x",
        "other/o.md",
    ]
    chain = [gitkit.commit(repo, {n: f"start {n}\n" for n in names[:5]}, "start")]
    for step in range(steps):
        action = rng.choice(["edit", "edit", "revert", "mode", "swap", "merge", "outside"])
        if action == "merge":
            gitkit.git(repo, "checkout", "-q", "-b", f"side{step}")
            gitkit.commit(repo, {rng.choice(names[:9]): f"side {step}\n"}, "side")
            gitkit.git(repo, "checkout", "-q", "main")
            gitkit.commit(repo, {rng.choice(names[:9]): f"main {step}\n"}, "main")
            gitkit.git(repo, "merge", "-q", "--no-edit", "-X", "theirs", f"side{step}")
            chain.append(gitkit.head(repo))
            continue
        files: dict = {}
        if action == "edit":
            files = {
                rng.choice(names[:9]): rng.choice([None, f"v{step}\n"])
                for _ in range(rng.randint(1, 4))
            }
        elif action == "revert":
            files = {rng.choice(names[:9]): f"start {names[0]}\n"}  # back to a blob seen before
        elif action == "mode":
            present = [n for n in names[:9] if (repo / n).is_file() and not (repo / n).is_symlink()]
            if present:
                path = repo / rng.choice(present)
                path.chmod(path.stat().st_mode ^ 0o111)
            files = {names[0]: f"mode {step}\n"}
        elif action == "swap":
            target = rng.choice([names[1], "docs/x"])
            if (repo / target).is_symlink() or (repo / target).is_dir():
                files = (
                    {target: f"file again {step}\n"}
                    if not (repo / target).is_dir()
                    else {"docs/x/in.md": None}
                )
            else:
                files = (
                    {target: ("link", "f0.md")}
                    if target == names[1]
                    else {"docs/x": None, "docs/x/in.md": "d\n"}
                )
        else:
            files = {"other/o.md": f"outside {step}\n"}
        for rel, content in list(files.items()):
            if content is None and not (repo / rel).exists() and not (repo / rel).is_symlink():
                files.pop(rel)
        if (repo / "docs/x").is_dir() and "docs/x" in files and files["docs/x"] not in (None,):
            files.pop("docs/x")
        try:
            chain.append(
                gitkit.commit(repo, files or {names[2]: f"touch {step}\n"}, f"step {step}")
            )
        except Exception:  # nothing to commit (e.g. a revert to the same bytes)
            chain.append(gitkit.commit(repo, {names[2]: f"touch {step} again\n"}, f"step {step}"))
    return chain


@pytest.mark.parametrize("seed,prefix,include", [(1, "", None), (2, "docs", ["*.md"])])
def test_composed_first_parent_changes_equal_the_tree_diff(
    fresh_ws: Path, seed: int, prefix: str, include
) -> None:
    from dcx.sources.gitrepo import locator_filter

    repo = gitkit.init(fresh_ws / "auth")
    chain = _history(repo, random.Random(seed), 10)
    git_repo = Repo(repo / ".git")
    _, match = locator_filter({"path": prefix, "include": include or []})
    tip = chain[-1]
    compared = 0
    for base in chain[:-1]:
        got = git_repo.first_parent_delta("main", base, prefix, match, FAR)
        if len(chain) - 1 - chain.index(base) > 32:
            assert got is None  # past the window: the caller asks the usual questions
            continue
        assert got is not None, base
        target, entries, counts = got
        assert target == tip
        assert (entries, counts) == git_repo.diff_trees(base, tip, prefix, match, FAR), base
        compared += 1
    assert compared >= 10
    # the ref at the cursor, or behind it, or a base off the first-parent chain: no answer from the log
    assert git_repo.first_parent_delta("main", tip, prefix, match, FAR) is None
    assert git_repo.first_parent_delta("main~2", chain[-1], prefix, match, FAR) is None
    side = (
        gitkit.git(repo, "rev-parse", "HEAD^2").strip()
        if len(gitkit.git(repo, "rev-list", "--parents", "-n1", "HEAD").split()) > 2
        else None
    )
    if side is not None:
        assert git_repo.first_parent_delta("main", side, prefix, match, FAR) is None


def test_a_scan_after_a_change_runs_one_git_process(
    fresh_ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dcx.sources import gitrepo

    repo = gitkit.init(fresh_ws / "auth")
    first = gitkit.commit(repo, {"docs/a.md": "a\n", "docs/b.md": "b\n"}, "first")
    configure(
        fresh_ws,
        binding_block("repo", "git")
        + source_block("source:git", gitkit.git_source("source:git", "auth"), provider_id="repo"),
    )
    _ws, _profile, registry, providers = plane(fresh_ws)
    source = registry.source("source:git")
    base = scan_source(providers, source, cursor_before=None, clock=CLOCK).cursor_after
    gitkit.commit(repo, {"docs/a.md": "a2\n"}, "second")
    gitkit.commit(repo, {"docs/c.md": "c\n", "docs/b.md": None}, "third")
    runs: list[str] = []
    real = gitrepo.Repo._run

    def counting(self, args, deadline, **kw):
        runs.append(next(a for a in args if not a.startswith("-") and "=" not in a))
        return real(self, args, deadline, **kw)

    monkeypatch.setattr(gitrepo.Repo, "_run", counting)
    moved = scan_source(providers, source, cursor_before=base, clock=CLOCK)
    assert [(i.resource_ref, i.change) for i in moved.items] == [
        ("docs/a.md", "modified"),
        ("docs/b.md", "deleted"),
        ("docs/c.md", "added"),
    ]
    assert moved.reason_code is None and runs == ["log"], runs
    runs.clear()
    assert (
        scan_source(providers, source, cursor_before=moved.cursor_after, clock=CLOCK).status
        == "no_change"
    )
    assert runs == ["rev-list"], runs  # no change: one ref lookup, as before
    gitkit.git(
        repo, "reset", "-q", "--hard", first
    )  # force-push back: the log cannot answer; noted rewound
    gitkit.commit(repo, {"docs/d.md": "d\n"}, "rewritten")
    runs.clear()
    rewound = scan_source(providers, source, cursor_before=moved.cursor_after, clock=CLOCK)
    assert rewound.reason_code == "cursor_rewound" and runs[0] == "log" and "diff-tree" in runs


def test_ref_hint_predicts_what_git_resolves(tmp_path: Path) -> None:
    repo = gitkit.init(tmp_path / "r")
    one = gitkit.commit(repo, {"a": "1\n"}, "one")
    two = gitkit.commit(repo, {"a": "2\n"}, "two")
    gitkit.git(repo, "branch", "loose", one)
    gitkit.git(repo, "tag", "-a", "-m", "annotated", "v1", one)
    gitkit.git(repo, "tag", "light", two)
    gitkit.git(repo, "branch", "packed", two)
    gitkit.git(repo, "tag", "-a", "-m", "packed annotated", "v2", two)
    gitkit.git(repo, "pack-refs", "--all")  # every ref so far only in packed-refs
    gitkit.git(repo, "branch", "-f", "loose", one)  # loose again, over its packed entry
    gitkit.git(repo, "update-ref", "refs/heads/loose", two)
    gitkit.git(repo, "branch", "v1")  # a branch and a tag of the same name: git takes the tag
    gitkit.git(repo, "symbolic-ref", "refs/heads/sym", "refs/heads/main")
    git_dir = repo / ".git"
    names = [
        "main",
        "loose",
        "packed",
        "v1",
        "v2",
        "light",
        "refs/heads/main",
        "refs/tags/v1",
        "heads/main",
        "sym",
        "HEAD",
        "nope",
        "main~1",
        "main^{commit}",
        one,
        "refs/heads/nope",
    ]
    predicted = 0
    for name in names:
        hint = ref_hint(git_dir, name)
        exact = (
            gitkit.git(repo, "rev-parse", "--verify", "--quiet", name).strip()
            if name != "nope" and "nope" not in name
            else ""
        )
        peeled = (
            gitkit.git(repo, "rev-parse", "--verify", "--quiet", f"{name}^{{commit}}").strip()
            if exact
            else ""
        )
        assert hint in (None, exact, peeled), name
        predicted += hint is not None
    assert ref_hint(git_dir, "v2") == two  # packed and annotated: the peeled commit
    assert ref_hint(git_dir, "loose") == two and ref_hint(git_dir, "v1") is not None
    assert predicted >= 8
