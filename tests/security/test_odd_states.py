"""Keys and odd states (SPEC §3.5 v4, §3.3, §6): the key's mode and pin, a full disk, a forged
decision index, a query holding a NUL byte.

Real processes throughout. The full disk is a real tmpfs of 1 MiB (mounted when
the tests may mount; skipped otherwise) and, always, a real file-size limit
(``RLIMIT_FSIZE``, which makes the kernel answer ``EFBIG`` to a write past it).
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import stat
import subprocess
from pathlib import Path

import blake3
import pytest

from tests.support.cli import DCX_EXE, run_dcx
from tests.support.cycle import D
from tests.support.recall import enable
from tests.support.workspace import FIXED_KEY, FIXED_NOW

DC = ".decision-context"


def _dcx(root: Path, *args: str, **popen) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DCX_NOW": FIXED_NOW, "DCX_AGENT_ID": "agent-a"}
    return subprocess.run(
        [DCX_EXE, "-C", str(root), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        **popen,
    )


# -- the key ------------------------------------------------------------------------


def test_a_loose_key_is_made_0600_and_said(cycled: Path) -> None:
    key = cycled / DC / "private" / "key"
    key.chmod(0o644)
    done = _dcx(
        cycled,
        "writeback",
        "--decision-id",
        D,
        "--kind",
        "validation",
        "--summary",
        "again",
        "--format",
        "json",
    )
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    warnings = json.loads(done.stdout)["warnings"]
    assert any("private/key" in w and "0644" in w and "0600" in w for w in warnings), warnings
    again = _dcx(cycled, "status", "--format", "json")
    assert not any("private/key" in w for w in json.loads(again.stdout)["warnings"]), "said once"


def test_a_key_that_is_not_the_pinned_one_never_mints(cycled: Path) -> None:
    """The only key on this host, but not the goal's (workspace.toml pins its id)."""
    key = cycled / DC / "private" / "key"
    pinned = blake3.blake3(b"dcx-key-id", key=FIXED_KEY).hexdigest()[:8]
    assert f'key_id = "{pinned}"' in (cycled / DC / "workspace.toml").read_text()
    key.write_bytes(bytes(reversed(FIXED_KEY)))
    refs = cycled / DC / "private" / "refs.sqlite"
    before = refs.read_bytes()
    for args in (
        ("scan",),
        ("prepare", "--decision-id", "second-look", "--auto-rebase"),
        ("propose", "--decision-id", D, "--from", str(cycled / "proposal.json")),
    ):
        done = _dcx(cycled, *args, "--format", "json")
        assert done.returncode == 3, (args, done.stdout, done.stderr)
        assert json.loads(done.stdout)["error"]["code"] == "key_mismatch", done.stdout
    assert refs.read_bytes() == before
    assert not (cycled / DC / "decisions" / "second-look.jsonl").exists()


# -- a full disk --------------------------------------------------------------------


def _temps(root: Path) -> list[str]:
    return [p.name for p in root.rglob("*.tmp")]


@pytest.fixture
def tiny_disk(tmp_path: Path):
    mount = tmp_path / "disk"
    mount.mkdir()
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)], capture_output=True
    )
    if made.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (the RLIMIT_FSIZE test still runs)")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_disk_is_disk_full_naming_the_file(
    cycled: Path, tiny_disk: Path, tmp_path: Path
) -> None:
    root = tiny_disk / "goal"
    shutil.copytree(cycled, root, symlinks=True, ignore=shutil.ignore_patterns("index", "cache"))
    body = json.loads((root / "proposal.json").read_text())
    body["recommended_decision"]["summary"] = "Keep the 90 second catalog TTL, looked at again"
    proposal = tmp_path / "p.json"  # the input lives on another disk
    proposal.write_text(json.dumps(body))
    with (tiny_disk / "filler").open(
        "wb", buffering=0
    ) as filler:  # unbuffered: close has nothing left
        try:
            while True:
                filler.write(b"\0" * 4096)
        except OSError:
            pass  # the disk is full
    before = (root / DC / "decisions" / f"{D}.jsonl").read_bytes()
    done = _dcx(root, "propose", "--decision-id", D, "--from", str(proposal), "--format", "json")
    assert done.returncode == 3, (done.stdout, done.stderr)
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "disk_full", error
    assert f"{DC}/packets/proposal/" in error["message"], error
    assert _temps(root) == []
    assert (root / DC / "decisions" / f"{D}.jsonl").read_bytes() == before


def _limit(size: int):
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

    return apply


def test_a_file_size_limit_is_disk_full_naming_the_file(cycled: Path) -> None:
    body = json.loads((cycled / "proposal.json").read_text())
    body["recommended_decision"]["summary"] = "Keep the 90 second catalog TTL, looked at again"
    (cycled / "p.json").write_text(json.dumps(body))
    before = (cycled / DC / "decisions" / f"{D}.jsonl").read_bytes()
    done = _dcx(
        cycled,
        "propose",
        "--decision-id",
        D,
        "--from",
        str(cycled / "p.json"),
        "--format",
        "json",
        preexec_fn=_limit(1024),
    )
    assert done.returncode == 3, (done.stdout, done.stderr)
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "disk_full", error
    assert f"{DC}/packets/proposal/" in error["message"], error
    assert "internal error" not in done.stdout + done.stderr
    assert _temps(cycled) == []
    assert (cycled / DC / "decisions" / f"{D}.jsonl").read_bytes() == before


# -- a forged decision index --------------------------------------------------------


@pytest.mark.parametrize("edit", ["observed_at", "kind"])
def test_verify_checks_each_index_line_against_its_packet(cycled: Path, edit: str) -> None:
    index = cycled / DC / "decisions" / f"{D}.jsonl"
    lines = [json.loads(line) for line in index.read_text().splitlines()]
    target = next(n for n, e in enumerate(lines) if e["kind"] == "proposal")
    if edit == "observed_at":
        lines[target]["observed_at"] = "2027-01-01T00:00:00Z"  # makes an old proposal look latest
    else:
        lines[target]["kind"] = "outcome"
    index.write_text("".join(json.dumps(e, sort_keys=True) + "\n" for e in lines))
    done = run_dcx("-C", str(cycled), "verify", "--format", "json")
    assert done.exit_code == 1, done.stdout
    problems = json.loads(done.stdout)["data"]["problems"]
    assert [
        p
        for p in problems
        if p["file"].endswith(f"{D}.jsonl") and p.get("field") == f"line {target + 1}"
    ], problems


def test_an_honest_index_verifies(cycled: Path) -> None:
    done = run_dcx("-C", str(cycled), "verify", "--format", "json")
    assert done.exit_code == 0 and json.loads(done.stdout)["data"]["problems"] == []


# -- a NUL byte in a query -----------------------------------------------------------

MARKER = '#!/bin/sh\ntouch "$(dirname "$0")/RAN"\necho \'ov 0.5.2\'\n'


@pytest.mark.parametrize("provider", ["bm25", "openviking", "extension", "none"])
def test_a_query_with_a_nul_byte_is_invalid_input_for_every_provider(
    fresh_ws: Path, tmp_path: Path, provider: str
) -> None:
    ov = tmp_path / "ov"
    ov.write_text(MARKER)
    ov.chmod(ov.stat().st_mode | stat.S_IXUSR)
    config = (
        {"binary": str(ov)}
        if provider == "openviking"
        else ({"extension_id": "no-such-extension"} if provider == "extension" else None)
    )
    (fresh_ws / "docs").mkdir()
    (fresh_ws / "docs" / "a.md").write_text("# notes\n\nthe rollback drill\n")
    enable(fresh_ws, provider=provider, config=config)
    query = tmp_path / "query.txt"
    query.write_bytes(b"rollback\x00drill")
    done = _dcx(
        fresh_ws,
        "recall",
        "--scope",
        "",
        "--query-file",
        str(query),
        "--query-summary",
        "drill",
        "--format",
        "json",
    )
    assert done.returncode == 2, (done.stdout, done.stderr)
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "invalid_input" and error["field"] == "--query-file", error
    assert not (tmp_path / "RAN").exists(), "the provider was called"
