"""No git setting starts a program when dcx runs git (SPEC §3.7): an attack test with real git.

Every setting git has that can start another program is planted — in the goal's
own repository (where `dcx sync` runs git) and in a git source repository (which
scan, index, prepare and `status --check` read) — each pointing at a script that
leaves a marker file named after the setting. Then dcx does its work: index,
scan, prepare, `status --check`, and a `sync --push` that commits the public
half, merges another host's push and pushes. Oracle: the marker folder stays
empty (and the commands still do their job). The remote URLs that start a
program by themselves (``ext::``), or through ssh and a credential prompt, get
tests of their own: sync is refused, and still nothing runs.
"""

from __future__ import annotations

import shutil
import stat
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from tests.support.hosts import DC, Goal, Host, git
from tests.support.workspace import EXAMPLE

HOOKS = (
    "pre-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "pre-merge-commit",
    "post-merge",
    "post-checkout",
    "pre-push",
    "reference-transaction",
    "post-rewrite",
    "pre-auto-gc",
    "post-index-change",
    "fsmonitor-watchman",
)


def _script(folder: Path, markers: Path, name: str) -> Path:
    """An executable that leaves ``markers/<name>`` and exits at once (it never waits on its stdin)."""
    path = folder / name
    path.write_text(f'#!/bin/sh\ntouch "{markers}/{name}"\nexec </dev/null\nexit 0\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def _plant(repo: Path, markers: Path, tag: str) -> None:
    """Every program-starting setting in ``repo``'s own config, each with its own marker."""
    bin_dir = repo.parent / f"evil-{tag}"
    bin_dir.mkdir()
    hooks = bin_dir / "hooks"
    hooks.mkdir()
    for hook in HOOKS:
        _script(hooks, markers, f"{tag}-hook-{hook}")
    run = lambda name: str(_script(bin_dir, markers, f"{tag}-{name}"))  # noqa: E731
    settings = {
        "core.fsmonitor": run("fsmonitor"),
        "core.hooksPath": str(hooks),
        "filter.evil.clean": run("filter-clean"),
        "filter.evil.smudge": run("filter-smudge"),
        "filter.evil.process": run("filter-process"),
        "filter.evil.required": "true",
        "commit.gpgSign": "true",
        "tag.gpgSign": "true",
        "merge.verifySignatures": "true",
        "log.showSignature": "true",
        "gpg.program": run("gpg"),
        "gpg.ssh.program": run("gpg-ssh"),
        "diff.external": run("diff-external"),
        "diff.evil.textconv": run("textconv"),
        "diff.evil.command": run("diff-command"),
        "merge.evil.driver": run("merge-driver"),
        "core.sshCommand": run("ssh"),
        "core.askPass": run("askpass"),
        "credential.helper": run("credential"),
        "core.alternateRefsCommand": run("alternate-refs"),
        "core.pager": run("pager"),
        "core.editor": run("editor"),
        "sequence.editor": run("sequence-editor"),
        "core.gitProxy": run("git-proxy"),
        "remote.origin.uploadpack": run("upload-pack"),
        "remote.origin.receivepack": run("receive-pack"),
        "uploadpack.packObjectsHook": run("pack-objects-hook"),
    }
    for key, value in settings.items():
        git(repo, "config", key, value)


def _attributes(repo: Path) -> None:
    (repo / ".gitattributes").write_text("* filter=evil diff=evil merge=evil\n")


def _source_repo(base: Path) -> Path:
    """A non-bare git repository holding the example's authority docs (the goal reads it as a source)."""
    repo = base / "authority"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "author")
    git(repo, "config", "user.email", "author@example.invalid")
    shutil.copytree(EXAMPLE / "docs", repo / "docs")
    _attributes(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "authority")
    return repo


def _read_from(host: Host, repo: Path) -> None:
    registry = host.dc / "sources.toml"
    text = registry.read_text().replace('adapter = "local-file"', 'adapter = "git"')
    text = text.replace(
        'locator = { path = "docs", include = ["**/*.md"] }',
        f'locator = {{ repo = "{repo}", ref = "main", path = "docs", include = ["**/*.md"] }}',
    )
    registry.write_text(text)


def _alternates(host: Host, goal: Goal) -> None:
    """The goal clone borrows objects from the origin: fetch negotiation reads its alternate refs."""
    info = host.root / ".git" / "objects" / "info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "alternates").write_text(f"{goal.origin / 'objects'}\n")


def _fired(markers: Path) -> list[str]:
    return sorted(p.name for p in markers.iterdir())


def test_no_planted_setting_starts_a_program(tmp_path: Path) -> None:
    goal = Goal(tmp_path)
    a = goal.host("host-a")
    b = goal.host("host-b", agent="agent-b")
    markers = tmp_path / "markers"
    markers.mkdir()
    source = _source_repo(tmp_path)
    for host in (a, b):
        _read_from(host, source)
    # another host's push, so a's sync has something to merge
    b.run("index")
    b.json("prepare", "--decision-id", "purge-retry", "--auto-rebase")
    b.run("sync", "--push")
    # the attack: a's goal repository and the source repository
    _attributes(a.root)
    a.git("add", ".gitattributes")
    a.git("commit", "-q", "-m", "a teammate's attributes")
    _plant(a.root, markers, "goal")
    _plant(source, markers, "source")
    _alternates(a, goal)

    runs = [
        a.run("index", ok=False),
        a.run("scan", ok=False),
        a.run("prepare", "--decision-id", "ttl-2026-12", "--auto-rebase", ok=False),
        a.run("status", "--check", ok=False),
        a.run("sync", "--push", ok=False),
    ]
    assert _fired(markers) == []
    for done in runs:
        assert done.code == 0, done
    checks = a.json("status", "--check")["data"]["checks"]["sources"]
    assert [row["status"] for row in checks] == ["ok"]
    # sync did its work: committed, merged b's push, pushed
    assert (a.dc / "decisions" / "purge-retry.jsonl").exists()
    assert a.git("rev-parse", "HEAD").stdout == git(goal.origin, "rev-parse", "main").stdout
    calm = ("-c", "core.fsmonitor=false", "-c", "filter.evil.process=", "-c", "filter.evil.clean=")
    assert (
        a.git(*calm, "-c", "filter.evil.required=false", "status", "--porcelain", "--", DC).stdout
        == ""
    )


def _planted_clone(tmp_path: Path, url: str) -> tuple[Host, Path]:
    goal = Goal(tmp_path)
    a = goal.host("host-a")
    markers = tmp_path / "markers"
    markers.mkdir()
    _plant(a.root, markers, "goal")
    a.git("remote", "set-url", "origin", url)
    return a, markers


def test_an_ext_remote_url_is_refused_and_runs_nothing(tmp_path: Path) -> None:
    """``ext::`` runs its URL as a command: protocol.ext.allow=never (every protocol named)."""
    a, markers = _planted_clone(tmp_path, f"ext::sh -c touch% {tmp_path / 'markers' / 'ext-url'}")
    refused = a.json("sync", "--push", ok=False)
    assert refused["error"]["code"] == "sync_pull_failed", refused
    assert _fired(markers) == []


def test_an_ssh_remote_never_runs_the_repositorys_ssh_command(tmp_path: Path) -> None:
    a, markers = _planted_clone(tmp_path, "ssh://dcx-test.invalid/origin.git")
    refused = a.json("sync", ok=False)
    assert refused["error"]["code"] == "sync_pull_failed", refused
    assert _fired(markers) == []


class _AskForCredentials(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="dcx-test"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def asks_for_credentials():
    server = HTTPServer(("127.0.0.1", 0), _AskForCredentials)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/origin.git"
    server.shutdown()


def test_a_remote_asking_for_credentials_runs_no_helper_or_askpass(
    tmp_path: Path, asks_for_credentials: str
) -> None:
    """A 401 makes git ask its credential helpers, then askpass: the repository's are never run."""
    a, markers = _planted_clone(tmp_path, asks_for_credentials)
    refused = a.json("sync", ok=False, env={"GIT_ASKPASS": "", "SSH_ASKPASS": ""})
    assert refused["error"]["code"] == "sync_pull_failed", refused
    assert _fired(markers) == []


def test_a_git_too_old_to_honour_the_settings_is_refused_naming_its_version(tmp_path: Path) -> None:
    """A git older than gitcmd.MIN_GIT would read `core.fsmonitor=false` as a hook program to run."""
    import os

    goal = Goal(tmp_path)
    a = goal.host("host-a")
    source = _source_repo(tmp_path)
    _read_from(a, source)
    old = tmp_path / "old-git"
    old.mkdir()
    real = shutil.which("git")
    (old / "git").write_text(  # answers --version (wherever it is in argv) as an old git would
        f'#!/bin/sh\ncase " $* " in *" --version "*) echo "git version 2.30.9"; exit 0;; esac\n'
        f'exec {real} "$@"\n'
    )
    (old / "git").chmod(0o755)
    env = {"PATH": f"{old}{os.pathsep}{os.environ['PATH']}"}
    refused = a.json("sync", ok=False, env=env)
    assert refused["error"]["code"] == "sync_git_too_old", refused
    assert "2.30" in refused["error"]["message"] and "2.36" in refused["error"]["hint"]
    receipts = a.json("scan", env=env)["data"]["receipts"]
    assert [(r["status"], r.get("reason_code")) for r in receipts] == [
        ("unavailable", "git_version_unsupported")
    ]


def test_the_documented_list_is_the_one_the_code_uses() -> None:
    """docs/safety.md lists the settings from dcx.core.gitcmd itself (scripts/git_settings.py)."""
    from scripts import git_settings

    assert git_settings.main(["--check"]) == 0, "run: python scripts/git_settings.py"
    page = git_settings.PAGE.read_text()
    for setting in ("core.fsmonitor", "core.hooksPath", "protocol.ext.allow", "GIT_NO_LAZY_FETCH"):
        assert f"`{setting}`" in page


@pytest.mark.parametrize("where", ["branch_remote", "remote_name"])
def test_a_remote_or_upstream_named_like_an_option_runs_nothing(tmp_path: Path, where: str) -> None:
    """Seen: a remote named ``--upload-pack=PROGRAM`` in the goal's config (as ``branch.main.remote``,
    or the only remote) ran PROGRAM in sync's fetch and ls-remote. A name read from config is an
    operand after ``--end-of-options``, never an option: nothing runs."""
    goal = Goal(tmp_path)
    a = goal.host("host-a")
    markers = tmp_path / "markers"
    markers.mkdir()
    option = f"--upload-pack={_script(tmp_path, markers, 'upload-pack-option')}"
    if where == "branch_remote":  # the upstream's remote: `fetch REMOTE REF`
        a.git("config", f"remote.{option}.url", str(goal.origin))
        a.git("config", f"remote.{option}.fetch", "+refs/heads/*:refs/remotes/evil/*")
        a.git("config", "branch.main.remote", option)
        a.git("update-ref", "refs/remotes/evil/main", "HEAD")
    else:  # no upstream: the first remote `git remote` lists is asked with `ls-remote REMOTE`
        a.git("config", "--unset", "branch.main.remote")
        a.git("config", "--unset", "branch.main.merge")
        a.git("config", "--rename-section", "remote.origin", f"remote.{option}")
    done = a.run("sync", "--push", "--format", "json", ok=False)
    assert _fired(markers) == []
    if where == "branch_remote":  # an odd name is still the remote's name: sync does its work
        assert done.code == 0 and done.json()["data"]["pushed"] is True, done
    else:  # the remote was asked (with its own name) and already has the branch
        assert done.json()["error"]["code"] == "sync_pull_failed", done
        assert "already has it" in done.json()["error"]["message"]
