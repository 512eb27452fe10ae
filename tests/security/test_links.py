"""Links committed inside `.decision-context/` are never followed (SPEC §3.5 v4).

The attack: a goal repository, cloned with real git, that commits symbolic links
where dcx reads and writes — a decision index pointing at a file outside the
goal, a packet folder pointing at a folder outside, a dangling event log, a
chain of two links, and a log pointing at the workspace key. Every writing
command run on the clone must stop with exit 3 ``workspace_symlink`` naming the
link by its workspace-relative path, and nothing may change: not in the clone,
not where the links point (the oracle is a snapshot of both trees taken without
following links). A control run on a clone without links proves each command
would have written. Readers never show what a link points at; ``verify`` and
``audit`` name every link in the public tree as ``public_symlink``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import run_dcx
from tests.support.cycle import OWNER, D
from tests.support.links import DC, hostile_clone, snapshot
from tests.support.workspace import FIXED_KEY

INDEX = f"{DC}/decisions/{D}.jsonl"

# (name, argv after `-C ROOT`): every command that writes, each with input it accepts
WRITERS: list[tuple[str, tuple[str, ...]]] = [
    ("init", ("init",)),
    ("index", ("index",)),
    ("scan", ("scan",)),
    ("prepare", ("prepare", "--decision-id", "second-look", "--auto-rebase")),
    ("propose", ("propose", "--decision-id", D, "--from", "proposal.json")),
    ("outcome", ("outcome", "--decision-id", D, "--from", "outcome.json")),
    (
        "writeback",
        ("writeback", "--decision-id", D, "--kind", "validation", "--summary", "Looked again"),
    ),
    ("gate", ("gate", "--decision-id", D, "--approve", "--by", OWNER, "--summary", "Keep it")),
    ("feedback", ("feedback", "--decision-id", D)),
    ("abandon", ("abandon", "--decision-id", D, "--summary", "Superseded")),
    ("gc", ("gc",)),
    ("enable", ("enable", "--agent", "agent-b")),
    ("disable", ("disable",)),
    ("key import", ("key", "import", "KEYFILE", "--force")),
    ("verify --repair", ("verify", "--repair")),
    ("redact", ("redact", "decision-proposal", "--reason", "leaked_credential")),
]


# commands that find nothing to do on this clone (init: nothing missing; gc: nothing stale)
IDLE = {"init", "gc"}


def _run(root: Path, argv: tuple[str, ...], keyfile: Path, *flags: str):
    args = [str(keyfile) if a == "KEYFILE" else a for a in argv]
    return run_dcx(
        *flags,
        "-C",
        str(root),
        *args,
        "--format",
        "json",
        cwd=root,
        env={"DCX_AGENT_ID": "agent-a"},
    )


@pytest.fixture
def keyfile(tmp_path: Path) -> Path:
    path = tmp_path / "goal.key"
    path.write_text(bytes(reversed(FIXED_KEY)).hex())
    return path


def _refused(result, rel: str) -> None:
    assert result.exit_code == 3, (result.stdout, result.stderr)
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "workspace_symlink", error
    assert rel in error["message"], error
    assert "/tmp" not in error["message"] and str(Path.home()) not in error["message"]


@pytest.mark.parametrize("name,argv", WRITERS, ids=[n for n, _ in WRITERS])
def test_every_writer_runs_on_a_clean_clone(
    cycled: Path, tmp_path: Path, keyfile: Path, name, argv
) -> None:
    """The control: without links each command succeeds (so the refusal below is the link's)."""
    root, _ = hostile_clone(cycled, tmp_path, {})
    result = _run(root, argv, keyfile)
    assert result.exit_code in (0, 1), (name, result.stdout, result.stderr)
    assert json.loads(result.stdout).get("error", {}).get("code") != "workspace_symlink"


@pytest.mark.parametrize("name,argv", WRITERS, ids=[n for n, _ in WRITERS])
def test_every_writer_refuses_a_committed_link_and_writes_nothing(
    cycled: Path, tmp_path: Path, keyfile: Path, name, argv
) -> None:
    root, outside = hostile_clone(cycled, tmp_path, {INDEX: "../../../outside/victim.jsonl"})
    before = snapshot(root, outside)
    result = _run(root, argv, keyfile)
    if name in IDLE:  # nothing to do here: no write, so no link reached
        assert result.exit_code == 0, (result.stdout, result.stderr)
    else:
        _refused(result, INDEX)
    assert snapshot(root, outside) == before


# (kind, links planted, the one named, a command that writes through that place)
KINDS = [
    ("file", {INDEX: "../../../outside/victim.jsonl"}, INDEX, WRITERS[4][1]),
    (
        "folder",
        {f"{DC}/packets/proposal": "../../../outside/dir"},
        f"{DC}/packets/proposal",
        WRITERS[4][1],
    ),
    (
        "dangling",
        {f"{DC}/events.jsonl": "../../outside/created-by-dcx.jsonl"},
        f"{DC}/events.jsonl",
        WRITERS[6][1],
    ),
    (
        "chained",
        {INDEX: "../hop.jsonl", f"{DC}/hop.jsonl": "../../outside/victim.jsonl"},
        f"{DC}/decisions/{D}.jsonl",
        WRITERS[5][1],
    ),
    ("key", {f"{DC}/events.jsonl": "private/key"}, f"{DC}/events.jsonl", WRITERS[7][1]),
]


@pytest.mark.parametrize("kind,links,named,argv", KINDS, ids=[k[0] for k in KINDS])
def test_each_kind_of_link_is_refused_where_it_is_written(
    cycled: Path, tmp_path: Path, keyfile: Path, kind, links, named, argv
) -> None:
    root, outside = hostile_clone(cycled, tmp_path, links)
    before = snapshot(root, outside)
    result = _run(root, argv, keyfile)
    assert result.exit_code == 3, (result.stdout, result.stderr)
    assert json.loads(result.stdout)["error"]["code"] == "workspace_symlink"
    assert named in json.loads(result.stdout)["error"]["message"] or any(
        rel in json.loads(result.stdout)["error"]["message"] for rel in links
    )
    assert snapshot(root, outside) == before
    assert not (outside / "created-by-dcx.jsonl").exists()


def test_readers_never_show_what_a_link_points_at(
    cycled: Path, tmp_path: Path, keyfile: Path
) -> None:
    """`events.jsonl` -> the key: no reader prints the key's bytes; verify and audit name the link."""
    root, _outside = hostile_clone(
        cycled,
        tmp_path,
        {f"{DC}/events.jsonl": "private/key", f"{DC}/README.md": "../../outside/victim.jsonl"},
    )
    key_hex = FIXED_KEY.hex()
    for argv in (("log",), ("log", "--decision-id", D), ("report",), ("status",)):
        result = _run(root, argv, keyfile)
        assert key_hex not in result.stdout + result.stderr, argv
        assert "victim" not in result.stdout + result.stderr, argv
    for verb in ("verify", "audit"):
        result = _run(root, (verb,), keyfile)
        assert result.exit_code == 1, (verb, result.stdout, result.stderr)
        assert key_hex not in result.stdout
        body = json.loads(result.stdout)
        rows = body["data"]["problems" if verb == "verify" else "findings"]
        named = {r["file"] for r in rows if r["problem"].startswith("public_symlink")}
        assert named == {f"{DC}/events.jsonl", f"{DC}/README.md"}, (verb, rows)


@pytest.mark.parametrize("linked", [DC, f"{DC}/private"])
def test_a_linked_workspace_is_refused_unless_allowed(
    cycled: Path, tmp_path: Path, keyfile: Path, linked: str
) -> None:
    """`.decision-context/` or `private/` kept elsewhere: refused, unless --allow-linked-workspace."""
    import shutil

    root, outside = hostile_clone(cycled, tmp_path, {})
    real = outside / "kept-elsewhere"
    shutil.move(str(root / linked), str(real))
    (root / linked).symlink_to(real)
    writeback = WRITERS[6][1]
    _refused(_run(root, writeback, keyfile), linked)
    allowed = _run(root, writeback, keyfile, "--allow-linked-workspace")
    assert allowed.exit_code == 0, (allowed.stdout, allowed.stderr)
    kept = real / "events.jsonl" if linked == DC else root / DC / "events.jsonl"
    assert "Looked again" in kept.read_text()
