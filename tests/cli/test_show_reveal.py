from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

from dcx.core.workspace import Workspace
from dcx.state.keys import load_key
from dcx.state.refmap import RefMinter


def _with_minted_ref(root: Path) -> tuple[str, str]:
    """A packet that cites a keyed change ref recorded in the private ref map."""
    from tests.support.cycle import seed_evidence

    ws = Workspace(root)
    with RefMinter(ws, load_key(ws)) as minter:
        change = minter.change_ref("source:authority:docs", "runbook-ttl-rollback.md")
        revision = minter.revision_ref(
            "source:authority:docs", "runbook-ttl-rollback.md", "ab" * 32
        )
    ref = seed_evidence(
        root,
        "d1",
        source_revisions=[
            {
                "source_ref": change,
                "revision": revision,
                "observed_at": "2026-11-29T18:00:00Z",
                "freshness": "current",
                "changed": True,
            }
        ],
    )
    return ref, change


def test_reveal_refuses_pipes_and_json(dcx, example: Path) -> None:
    ref, _ = _with_minted_ref(example)
    piped = dcx("-C", str(example), "show", ref, "--reveal")
    assert piped.exit_code == 2 and "terminal" in piped.stderr
    assert "runbook-ttl-rollback.md" not in piped.stdout
    as_json = dcx("-C", str(example), "show", ref, "--reveal", "--format", "json")
    assert as_json.exit_code == 2 and "runbook-ttl-rollback.md" not in as_json.stdout


def test_reveal_resolves_on_a_terminal(example: Path) -> None:
    ref, change = _with_minted_ref(example)
    exe = str(Path(sys.executable).parent / "dcx")
    leader, follower = pty.openpty()
    env = {**os.environ, "COLUMNS": "200"}
    proc = subprocess.Popen(
        [exe, "-C", str(example), "show", ref, "--reveal"],
        stdout=follower,
        stderr=subprocess.PIPE,
        env=env,
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=30)
    out = b"".join(chunks).decode(errors="replace")
    assert proc.returncode == 0, proc.stderr.read()
    assert change in out and "runbook-ttl-rollback.md" in out
