"""``dcx sync [--push]``: take in what the goal's other hosts pushed, check it, say what it means here
(SPEC §16).

In order, stopping at the first refusal (exit 1, nothing of the later steps done):

1. every precondition, **before anything is committed** (SPEC §16 v4): the
   workspace lies in a git work tree; no merge, rebase, cherry-pick or revert
   is in progress (``sync_merge_in_progress``: resolve or abort it first); HEAD
   is a branch (``sync_detached_head``); every uncommitted change is inside
   ``.decision-context/`` (``sync_dirty_worktree``; dcx never commits or
   stashes a person's other work); the branch has an upstream, or its remote
   does not have it yet (a first publish); nothing under ``.decision-context/``
   that dcx does not write (``sync_foreign_file``); the key pin unchanged
   against this branch and its upstream (``sync_key_changed``, unless
   ``--accept-key-change``);
2. the public half of the workspace, when it changed, is committed (only the
   changed paths, each named literally; private files are ignored by its
   ``.gitignore``);
3. ``git fetch`` of the upstream branch and ``git merge`` of it — a merge,
   never a rebase of others' packets, with dcx's own message (never the
   remote's URL); ``*.jsonl`` merge by union (``.gitattributes``). A fetch
   or merge that fails (a conflict, no network) is ``sync_pull_failed``, and
   git's state is left as git left it;
4. ``dcx verify`` of the merged workspace; a key pin the merge brought that
   this host's key does not match is a warning (``key_mismatch``);
5. a rescan of the enabled sources against this agent's cursors (nothing is
   stored: a count of changes per source);
6. this host's pending work (assemblies whose companion is here) and the
   decisions others moved (index or event lines the merge brought);
7. with ``--push``, ``git push`` — only after a verify without problems
   (``sync_verify_failed``), else ``sync_push_failed`` when git refuses.

Every git call goes through ``dcx.ops.goalgit`` (SPEC §3.7): dcx's one
subprocess boundary, with every setting that could start another program
(hooks, monitor, signing, drivers, ssh command, askpass, credential helpers)
switched off on the command line; a git too old to honour them is refused
(``sync_git_too_old``).
"""

from __future__ import annotations

import json
import os
from typing import Any

from dcx.core.clock import Clock
from dcx.core.errors import Refused
from dcx.core.result import Result
from dcx.core.workspace import DC_DIR, Workspace
from dcx.ops.goalgit import GoalGit
from dcx.ops.status import key_ids, key_warning


def _refuse(code: str, message: str, hint: str | None = None) -> Refused:
    return Refused(f"sync refused ({code}): {message}", code=code, hint=hint)


def _first_publish(g: GoalGit, ws: Workspace) -> tuple[str, str] | None:
    """(remote, branch) when the current branch has no upstream and its remote holds no such branch yet.

    A goal repository's first host: there is nothing to pull, and ``--push``
    publishes the branch with ``-u``. A branch with no upstream whose remote
    already has it, no remote at all, or a detached HEAD is refused: which
    history to merge is the user's choice, not sync's.
    """
    code, _ = g("rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}")
    if code == 0:
        return None
    branch = _branch(g, ws)
    remotes = g("remote")[1].split()
    if not remotes:
        raise _refuse(
            "sync_pull_failed",
            "the goal repository has no remote to pull from",
            hint="git remote add origin URL, then dcx sync --push",
        )
    remote = "origin" if "origin" in remotes else remotes[0]
    code, heads = g("ls-remote", "--heads", "--end-of-options", remote, branch, network=True)
    if code != 0:
        raise _refuse(
            "sync_pull_failed",
            f"remote {remote} is unreachable",
            hint="check the remote, then sync again",
        )
    if heads.strip():
        raise _refuse(
            "sync_pull_failed",
            f"branch {branch} has no upstream, but {remote} already has it",
            hint=f"git branch --set-upstream-to={remote}/{branch}, then sync again",
        )
    return remote, branch


IN_PROGRESS = (  # git's own markers of a half-done operation (git-path names, what it means)
    ("MERGE_HEAD", "a merge"),
    ("rebase-merge", "a rebase"),
    ("rebase-apply", "a rebase"),
    ("CHERRY_PICK_HEAD", "a cherry-pick"),
    ("REVERT_HEAD", "a revert"),
)


def _in_progress(g: GoalGit, ws: Workspace) -> str | None:
    """What half-done operation the repository is in (a merge, a rebase, ...), or None."""
    args = [a for name, _ in IN_PROGRESS for a in ("--git-path", name)]
    code, out = g("rev-parse", *args)
    if code != 0:
        return None
    for (_, what), path in zip(IN_PROGRESS, out.splitlines(), strict=False):
        if os.path.lexists(os.path.join(ws.root, path)):
            return what
    return None


def _branch(g: GoalGit, ws: Workspace) -> str:
    code, branch = g("symbolic-ref", "--quiet", "--short", "HEAD")
    if code != 0:
        raise _refuse(
            "sync_detached_head",
            "HEAD is detached: there is no branch to commit on or pull into (nothing was committed)",
            hint="git switch BRANCH, then sync again",
        )
    return branch.strip()


def _changed_paths(g: GoalGit, ws: Workspace) -> list[tuple[str, str]]:
    """(status, path relative to the top) of every uncommitted change git lists; a rename or copy
    also lists its source, as a deletion."""
    code, out = g("status", "--porcelain=v1", "-z", "--untracked-files=all", "--", ".")
    if code != 0:
        raise _refuse(
            "sync_not_git",
            "the workspace is not in a git work tree git can read",
            hint="clone the goal repository, or `git init` it",
        )
    entries, fields = [], out.split("\0")
    i = 0
    while i < len(fields):
        entry = fields[i]
        if len(entry) > 3:
            entries.append((entry[:2], entry[3:]))
            if entry[0] in "RC" and i + 1 < len(
                fields
            ):  # a rename's source follows as its own field
                i += 1
                if entry[0] == "R":
                    entries.append(("D ", fields[i]))
        i += 1
    return entries


# what dcx writes under .decision-context/ (SPEC §2, §3.7): sync stages these and nothing else
_TOKEN = r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}"
_OWN_FILES = frozenset(
    (
        "README.md",
        ".gitignore",
        ".gitattributes",
        "workspace.toml",
        "events.jsonl",
        "statements.jsonl",
    )
)


def _own_pattern():
    import re

    from dcx.packets import KINDS

    kinds = "|".join(
        f"{re.escape(kind.folder)}/{re.escape(kind.prefix)}" for kind in KINDS.values()
    )
    return re.compile(
        rf"(?:packets/(?:{kinds})-[0-9a-f]{{32}}\.json"
        r"|decisions/[a-z0-9][a-z0-9._-]{0,127}\.jsonl"
        rf"|signers/{_TOKEN}/{_TOKEN}\.pub)"
    )


def _foreign(ws: Workspace, top: str, entries: list[tuple[str, str]]) -> list[str]:
    """Workspace-relative names of the changes under .decision-context/ that dcx does not write: any
    other file, and any deletion (dcx never deletes a public file)."""
    own = _own_pattern()
    dc = os.path.realpath(ws.dc)
    out = []
    for status, path in entries:
        rel = os.path.relpath(os.path.realpath(os.path.join(top, path)), dc).replace(os.sep, "/")
        written = rel in _OWN_FILES or own.fullmatch(rel) is not None
        if "D" in status or not written:
            out.append(f"{DC_DIR}/{rel}")
    return sorted(out)


def _inside_workspace(ws: Workspace, top: str, path: str) -> bool:
    full = os.path.realpath(os.path.join(top, path))
    return full == os.path.realpath(ws.dc) or full.startswith(os.path.realpath(ws.dc) + os.sep)


def _moved_by_pull(
    g: GoalGit, ws: Workspace, top: str, before: str, after: str
) -> list[dict[str, Any]]:
    """Decisions whose index gained lines in the pull, with the agents of the new packets."""
    if before == after:
        return []
    rel = os.path.relpath(ws.decisions, top)
    code, out = g(
        "diff",
        "--no-ext-diff",
        "--no-textconv",
        "--unified=0",
        "--no-color",
        before,
        after,
        "--",
        rel,
    )
    if code != 0:
        return []
    moved: dict[str, dict[str, Any]] = {}
    current = None
    for line in out.splitlines():
        if line.startswith("+++ "):
            name = line[4:].strip()
            current = (
                os.path.splitext(os.path.basename(name))[0] if name.endswith(".jsonl") else None
            )
        elif line.startswith("+") and current is not None:
            try:
                entry = json.loads(line[1:])
            except ValueError:
                continue
            row = moved.setdefault(
                current, {"decision_id": current, "new_lines": 0, "kinds": set()}
            )
            row["new_lines"] += 1
            if isinstance(entry, dict) and isinstance(entry.get("kind"), str):
                row["kinds"].add(entry["kind"])
    return [{**row, "kinds": sorted(row["kinds"])} for _, row in sorted(moved.items())]


def _pending_here(ws: Workspace) -> list[dict[str, Any]]:
    """This host's live pending work: companions a commit can still use (``dcx gc`` removes the rest)."""
    from dcx.ops.gc import live_pending

    return live_pending(ws)


def _rescan(ws: Workspace, agent_id: str | None, clock: Clock) -> dict[str, Any]:
    """Each enabled source scanned against this agent's cursors; nothing stored, no cursor moved."""
    from dcx.sources.plane import scan_sources, select_sources
    from dcx.sources.registry import Providers
    from dcx.state.activation import activation
    from dcx.state.cursors import agent_cursors

    state = activation(ws, agent_id)
    if (
        not state.usable
        or state.profile is None
        or state.registry is None
        or state.agent_id is None
    ):
        return {"performed": False, "reason_code": state.reason_code or state.status, "sources": []}
    selected = select_sources(state.registry)
    committed = agent_cursors(ws, state.agent_id, state.profile.enabled_agents)
    scans = scan_sources(
        Providers(ws, state.profile, state.registry), selected, committed=committed, clock=clock
    )
    rows = [
        {"source_id": s.source.source_id, "status": s.status, "changed_count": len(s.items)}
        for s in scans
    ]
    return {"performed": True, "reason_code": None, "sources": rows}


def _merge_upstream(g: GoalGit, branch: str) -> None:
    """``git fetch`` of the upstream branch, then ``git merge`` of it — never a rebase of others'
    packets — with dcx's own message (``git pull`` would write the remote's URL into history).
    A remote or ref read from config is an operand after ``--end-of-options``, never an option
    (``--upload-pack=PROGRAM`` as a remote's name starts nothing, SPEC §3.7)."""
    upstream = g("rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}")[1].strip()
    remote = g("config", f"branch.{branch}.remote")[1].strip()
    ref = g("config", f"branch.{branch}.merge")[1].strip()
    fetched = g(
        "fetch", "-q", "--no-recurse-submodules", "--end-of-options", remote, ref, network=True
    )[0]
    if fetched != 0:
        raise _refuse(
            "sync_pull_failed",
            f"git fetch of {upstream} did not complete (the remote is unreachable or refused)",
            hint="check the remote (`git remote -v`), then sync again",
        )
    message = f"dcx sync: merge {upstream} into {branch}"
    if g("merge", "-q", "--no-edit", "--no-verify", "-m", message, "FETCH_HEAD")[0] != 0:
        raise _refuse(
            "sync_pull_failed",
            f"git merge of {upstream} did not complete (a conflict)",
            hint="see `git status`; resolve or abort the merge, then sync again",
        )


def _pin_of(text: str) -> str | None:
    import tomllib

    try:
        value = tomllib.loads(text).get("key_id")
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def _pin_at(g: GoalGit, rev: str, rel: str) -> str | None:
    code, text = g("cat-file", "blob", f"{rev}:{rel}")
    return _pin_of(text) if code == 0 else None


def _check_pin(g: GoalGit, ws: Workspace, top: str) -> None:
    """A changed key pin is never committed or pushed silently (SPEC §16 v4): ``key import --force``
    replaced the goal's key here, and every other host's refs would stop comparing. Changed means
    against HEAD (not committed yet), or against the history this branch shares with its upstream
    while the upstream does not pin it either (committed by hand, not pushed yet)."""
    rel = os.path.relpath(ws.workspace_toml, top).replace(os.sep, "/")
    try:
        now = _pin_of(ws.workspace_toml.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return  # a damaged workspace.toml is verify's to report
    before = _pin_at(g, "HEAD", rel)  # None: not committed yet, and a first pin is no change
    if before is None or now == before:
        code, base = g("merge-base", "HEAD", "@{upstream}")
        if code != 0 or not base.strip():
            return  # no upstream yet: nothing shared to differ from
        shared, upstream = _pin_at(g, base.strip(), rel), _pin_at(g, "@{upstream}", rel)
        if shared is None or now in (shared, upstream):
            return
        before = shared
    raise _refuse(
        "sync_key_changed",
        f"workspace.toml pins key {now or '(none)'} where the goal's history pins {before} "
        "(nothing was committed or pushed)",
        hint="every host must then import the new key: if that is meant, dcx sync --accept-key-change; "
        f"else restore the pin (git checkout -- {rel}) and import the goal's key (dcx key import FILE)",
    )


def sync(
    *,
    ws: Workspace,
    push: bool,
    agent_id: str | None,
    clock: Clock,
    wait: float,
    accept_key_change: bool = False,
) -> Result:
    from dcx.ops.verify import verify

    g = GoalGit(ws)
    g.check_version()
    code, top = g("rev-parse", "--show-toplevel")
    if code != 0 or not top.strip():
        raise _refuse(
            "sync_not_git",
            "the workspace is not in a git work tree",
            hint="clone the goal repository, or `git init` it",
        )
    top = top.strip()
    # every precondition before anything is committed (SPEC §16 v4)
    half_done = _in_progress(g, ws)
    if half_done is not None:
        raise _refuse(
            "sync_merge_in_progress",
            f"{half_done} is in progress in the goal repository (nothing was committed)",
            hint=f"resolve or abort {half_done} (see `git status`), then sync again",
        )
    branch = _branch(g, ws)
    changed = _changed_paths(g, ws)
    unrelated = [p for _, p in changed if not _inside_workspace(ws, top, p)]
    if unrelated:
        raise _refuse(
            "sync_dirty_worktree",
            f"{len(unrelated)} uncommitted change(s) outside {DC_DIR}/",
            hint="commit or stash them first: sync commits only the workspace's public half",
        )
    foreign = _foreign(ws, top, changed)
    if foreign:
        more = f" and {len(foreign) - 1} more" if len(foreign) > 1 else ""
        raise _refuse(
            "sync_foreign_file",
            f"{foreign[0]}{more}: not a file dcx writes (nothing was committed)",
            hint=f"sync commits only what dcx writes under {DC_DIR}/: move it out, or commit "
            "it yourself if it is meant to be there",
        )
    if not accept_key_change:
        _check_pin(g, ws, top)
    publish = _first_publish(g, ws)  # (remote, branch) when this branch has no upstream yet
    committed_public = False
    if changed:
        pathspecs = "".join(f":(top,literal){path}\0" for _, path in changed).encode()
        if g("add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul", stdin=pathspecs)[0] != 0:
            raise _refuse("sync_commit_failed", f"git add of {DC_DIR}/ failed")
        who = f" ({agent_id})" if agent_id else ""
        if (
            g(
                "commit",
                "-q",
                "--no-verify",
                "-m",
                f"dcx sync: decisions of goal {ws.goal_id}{who}",
            )[0]
            != 0
        ):
            raise _refuse(
                "sync_commit_failed",
                f"git commit of {DC_DIR}/ failed",
                hint="set user.name and user.email for git",
            )
        committed_public = True
    before = g("rev-parse", "HEAD")[1].strip()
    if publish is None:
        _merge_upstream(g, branch)
    after = g("rev-parse", "HEAD")[1].strip()
    checked = verify(ws=ws, repair=False, wait=wait)
    problems = checked.data["problems"]
    data: dict[str, Any] = {
        "committed_public_changes": committed_public,
        "pulled": before != after,
        "head": after,
        "verify": {
            "problems": len(problems),
            "unbacked_cursors": checked.data["unbacked_cursors"],
            "foreign_key_ids": checked.data["foreign_key_ids"],
        },
        "rescan": _rescan(ws, agent_id, clock),
        "pending_here": _pending_here(ws),
        "moved_by_others": _moved_by_pull(g, ws, top, before, after),
        "pushed": False,
    }
    if push:
        if problems:
            raise _refuse(
                "sync_verify_failed",
                f"verify found {len(problems)} problem(s): nothing was pushed",
                hint="dcx verify",
            )
        upstream = ("-u", "--end-of-options", *publish) if publish else ()
        if g("push", "-q", "--no-verify", *upstream, network=True)[0] != 0:
            raise _refuse(
                "sync_push_failed",
                "git push did not complete (rejected, no upstream, or unreachable)",
                hint="sync again: a push that races another host's is rejected, then merged",
            )
        data["pushed"] = True
    warnings = list(checked.warnings)
    warnings.extend(
        key_warning(key_ids(ws))
    )  # a pin the merge brought that this key does not match
    data["upstream"] = None if publish else "tracked"
    if publish and not push:
        warnings.append(
            f"branch {publish[1]} is not on {publish[0]} yet: nothing to pull; "
            "dcx sync --push publishes it"
        )
    if problems:
        warnings.append(f"verify found {len(problems)} problem(s) after the pull: dcx verify")
    return Result("sync", data, warnings=warnings)
