"""``dcx sync [--push]``: take in what the goal's other hosts pushed, check it, say what it means here
(SPEC §16).

In order, stopping at the first refusal (exit 1, nothing of the later steps done):

1. every precondition, **before anything is committed** (SPEC §16 v4): the
   workspace lies in a git work tree; no merge, rebase, cherry-pick or revert
   is in progress (``sync_merge_in_progress``: resolve or abort it first); HEAD
   is a branch (``sync_detached_head``); every uncommitted change is inside
   ``.decision-context/`` (``sync_dirty_worktree``; dcx never commits or
   stashes a person's other work); the branch has an upstream, or its remote
   does not have it yet (a first publish);
2. the public half of the workspace, when it changed, is committed
   (``git add -- .decision-context`` and one commit; private files are
   ignored by its ``.gitignore``);
3. ``git pull --no-rebase --no-edit`` — a merge, never a rebase of others'
   packets; ``*.jsonl`` merge by union (``.gitattributes``). A failed pull
   (a conflict, no network) is ``sync_pull_failed``, and git's
   state is left as git left it;
4. ``dcx verify`` of the merged workspace;
5. a rescan of the enabled sources against this agent's cursors (nothing is
   stored: a count of changes per source);
6. this host's pending work (assemblies whose companion is here) and the
   decisions others moved (index or event lines the pull brought);
7. with ``--push``, ``git push`` — only after a verify without problems
   (``sync_verify_failed``), else ``sync_push_failed`` when git refuses.

Every git call goes through dcx's one subprocess boundary
(``dcx.core.process.run_bounded``): argv without a shell, an
allow-listed environment, its own process group, capped output, a deadline.
Git runs without system config, hooks (``core.hooksPath=/dev/null``), pager,
terminal prompts or editor, in the C locale; the user's own global config
(identity, credential helpers) still applies, and ``SSH_AUTH_SOCK`` /
``GIT_SSH_COMMAND`` pass through for ssh remotes.
"""

from __future__ import annotations

import json
import os
from typing import Any

from dcx.core.clock import Clock
from dcx.core.errors import Refused
from dcx.core.result import Result
from dcx.core.workspace import DC_DIR, Workspace
from dcx.state import decisions, pending

GIT_TIMEOUT = 120.0  # seconds per git call (a pull or push over a network)
GIT_ALLOW = (
    "SSH_AUTH_SOCK",
    "GIT_SSH_COMMAND",
    "GIT_SSH",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_COMMITTER_DATE",
    "GIT_CONFIG_GLOBAL",
    "XDG_CONFIG_HOME",
    "USER",
)
GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_EDITOR": "true",
    "GIT_PAGER": "cat",
    "GIT_MERGE_AUTOEDIT": "no",
    "LC_ALL": "C",
    "LANG": "C",
}
GIT_FLAGS = ("-c", "core.hooksPath=/dev/null", "-c", "core.pager=cat", "--no-pager")


def _refuse(code: str, message: str, hint: str | None = None) -> Refused:
    return Refused(f"sync refused ({code}): {message}", code=code, hint=hint)


def git(ws: Workspace, *args: str, timeout: float = GIT_TIMEOUT) -> tuple[int | None, str]:
    """One git call in the workspace's root through the subprocess boundary: (exit status, stdout)."""
    from dcx.core.process import run_bounded

    outcome = run_bounded(
        ["git", *GIT_FLAGS, *args],
        timeout=timeout,
        env_allow=GIT_ALLOW,
        extra_env=GIT_ENV,
        cwd=str(ws.root),
    )
    if outcome.status == "spawn_failed":
        raise _refuse("sync_git_missing", "git could not be run", hint="install git")
    if outcome.status != "exited":
        return None, ""
    return outcome.returncode, outcome.stdout.decode("utf-8", "replace")


def _first_publish(ws: Workspace) -> tuple[str, str] | None:
    """(remote, branch) when the current branch has no upstream and its remote holds no such branch yet.

    A goal repository's first host: there is nothing to pull, and ``--push``
    publishes the branch with ``-u``. A branch with no upstream whose remote
    already has it, no remote at all, or a detached HEAD is refused: which
    history to merge is the user's choice, not sync's.
    """
    code, _ = git(ws, "rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}")
    if code == 0:
        return None
    branch = _branch(ws)
    remotes = git(ws, "remote")[1].split()
    if not remotes:
        raise _refuse(
            "sync_pull_failed",
            "the goal repository has no remote to pull from",
            hint="git remote add origin URL, then dcx sync --push",
        )
    remote = "origin" if "origin" in remotes else remotes[0]
    code, heads = git(ws, "ls-remote", "--heads", remote, branch)
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


def _in_progress(ws: Workspace) -> str | None:
    """What half-done operation the repository is in (a merge, a rebase, ...), or None."""
    args = [a for name, _ in IN_PROGRESS for a in ("--git-path", name)]
    code, out = git(ws, "rev-parse", *args)
    if code != 0:
        return None
    for (_, what), path in zip(IN_PROGRESS, out.splitlines(), strict=False):
        if os.path.lexists(os.path.join(ws.root, path)):
            return what
    return None


def _branch(ws: Workspace) -> str:
    code, branch = git(ws, "symbolic-ref", "--quiet", "--short", "HEAD")
    if code != 0:
        raise _refuse(
            "sync_detached_head",
            "HEAD is detached: there is no branch to commit on or pull into (nothing was committed)",
            hint="git switch BRANCH, then sync again",
        )
    return branch.strip()


def _changed_paths(ws: Workspace) -> list[str]:
    code, out = git(ws, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", ".")
    if code != 0:
        raise _refuse(
            "sync_not_git",
            "the workspace is not in a git work tree git can read",
            hint="clone the goal repository, or `git init` it",
        )
    paths, fields = [], out.split("\0")
    i = 0
    while i < len(fields):
        entry = fields[i]
        if len(entry) > 3:
            paths.append(entry[3:])
            if entry[0] in "RC":  # a rename's source follows as its own field
                i += 1
        i += 1
    return paths


def _inside_workspace(ws: Workspace, top: str, path: str) -> bool:
    full = os.path.realpath(os.path.join(top, path))
    return full == os.path.realpath(ws.dc) or full.startswith(os.path.realpath(ws.dc) + os.sep)


def _moved_by_pull(ws: Workspace, top: str, before: str, after: str) -> list[dict[str, Any]]:
    """Decisions whose index gained lines in the pull, with the agents of the new packets."""
    if before == after:
        return []
    rel = os.path.relpath(ws.decisions, top)
    code, out = git(
        ws, "diff", "--no-ext-diff", "--unified=0", "--no-color", before, after, "--", rel
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
    out = []
    for decision_id in decisions.decision_ids(ws):
        for ref in decisions.refs_of(ws, decision_id, "assembly"):
            if pending.path_for(ws, ref).exists():
                out.append({"decision_id": decision_id, "assembly_ref": ref})
    return out


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


def _pin_of(text: str) -> str | None:
    import tomllib

    try:
        value = tomllib.loads(text).get("key_id")
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def _check_pin(ws: Workspace, top: str) -> None:
    """A changed key pin is never committed silently (SPEC §16 v4): ``key import --force`` replaced
    the goal's key here, and every other host's refs would stop comparing."""
    rel = os.path.relpath(ws.workspace_toml, top).replace(os.sep, "/")
    code, committed = git(ws, "show", f"HEAD:{rel}")
    if code != 0:
        return  # not committed yet: a first pin is no change
    before = _pin_of(committed)
    try:
        now = _pin_of(ws.workspace_toml.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return  # a damaged workspace.toml is verify's to report
    if before is not None and now != before:
        raise _refuse(
            "sync_key_changed",
            f"workspace.toml pins key {now or '(none)'} where the goal's history pins {before} "
            "(nothing was committed)",
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

    code, top = git(ws, "rev-parse", "--show-toplevel")
    if code != 0 or not top.strip():
        raise _refuse(
            "sync_not_git",
            "the workspace is not in a git work tree",
            hint="clone the goal repository, or `git init` it",
        )
    top = top.strip()
    # every precondition before anything is committed (SPEC §16 v4)
    half_done = _in_progress(ws)
    if half_done is not None:
        raise _refuse(
            "sync_merge_in_progress",
            f"{half_done} is in progress in the goal repository (nothing was committed)",
            hint=f"resolve or abort {half_done} (see `git status`), then sync again",
        )
    _branch(ws)
    changed = _changed_paths(ws)
    unrelated = [p for p in changed if not _inside_workspace(ws, top, p)]
    if unrelated:
        raise _refuse(
            "sync_dirty_worktree",
            f"{len(unrelated)} uncommitted change(s) outside {DC_DIR}/",
            hint="commit or stash them first: sync commits only the workspace's public half",
        )
    if not accept_key_change:
        _check_pin(ws, top)
    publish = _first_publish(ws)  # (remote, branch) when this branch has no upstream yet
    committed_public = False
    if changed:
        rel = os.path.relpath(ws.dc, top)
        if git(ws, "add", "-A", "--", rel)[0] != 0:
            raise _refuse("sync_commit_failed", f"git add of {DC_DIR}/ failed")
        who = f" ({agent_id})" if agent_id else ""
        if (
            git(
                ws,
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
    before = git(ws, "rev-parse", "HEAD")[1].strip()
    if publish is None:
        code, _ = git(ws, "pull", "--no-rebase", "--no-edit", "-q")
        if code != 0:
            raise _refuse(
                "sync_pull_failed",
                "git pull --no-rebase did not complete (a conflict, or the remote is unreachable)",
                hint="see `git status`; resolve, then sync again",
            )
    after = git(ws, "rev-parse", "HEAD")[1].strip()
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
        "moved_by_others": _moved_by_pull(ws, top, before, after),
        "pushed": False,
    }
    if push:
        if problems:
            raise _refuse(
                "sync_verify_failed",
                f"verify found {len(problems)} problem(s): nothing was pushed",
                hint="dcx verify",
            )
        upstream = ("-u", *publish) if publish else ()
        if git(ws, "push", "-q", *upstream)[0] != 0:
            raise _refuse(
                "sync_push_failed",
                "git push did not complete (rejected, no upstream, or unreachable)",
                hint="sync again: a push that races another host's is rejected, then merged",
            )
        data["pushed"] = True
    warnings = list(checked.warnings)
    data["upstream"] = None if publish else "tracked"
    if publish and not push:
        warnings.append(
            f"branch {publish[1]} is not on {publish[0]} yet: nothing to pull; "
            "dcx sync --push publishes it"
        )
    if problems:
        warnings.append(f"verify found {len(problems)} problem(s) after the pull: dcx verify")
    return Result("sync", data, warnings=warnings)
