"""`dcx scan` end to end (SPEC §5, §3.6): activation, selection, receipts, fail-open, public safety."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from dcx.core.clock import FixedClock
from dcx.core.envelope import PacketContext
from dcx.core.workspace import Workspace
from dcx.evidence.builders import scan_receipt_values
from dcx.packets import scan as scan_packet
from dcx.sources.plane import exact_read_scan, scan_sources, select_sources
from dcx.state.keys import load_key
from dcx.state.refmap import RefMinter
from dcx.state.store import Store
from tests.support.cli import run_dcx
from tests.support.sources import binding_block, configure, source_block

AGENT = ("--agent-id", "agent-a")


def _public_files(root: Path) -> list[Path]:
    dc = root / ".decision-context"
    private = {dc / "private", dc / "profile.toml", dc / "sources.toml"}
    return [
        p
        for p in dc.rglob("*")
        if p.is_file() and not any(p == x or x in p.parents for x in private)
    ]


def _scan(dcx, root: Path, *args: str):
    return dcx("-C", str(root), "scan", *AGENT, *args)


@pytest.fixture
def goal(fresh_ws: Path, tree) -> Path:
    tree(fresh_ws, {"docs": {"a.md": "alpha", "b.md": "beta"}, "later": {"x.md": "on demand"}})
    configure(
        fresh_ws,
        binding_block()
        + source_block("source:docs", '{ path = "docs", include = ["*.md"] }')
        + source_block("source:later", '"later"', scan_mode="on_demand", priority="p1")
        + source_block("source:off", '"docs"', extra="enabled = false\n"),
    )
    return fresh_ws


def test_scan_needs_activation(dcx, fresh_ws: Path) -> None:
    result = _scan(dcx, fresh_ws)
    assert result.exit_code == 3 and "not active" in result.stderr
    assert not (fresh_ws / ".decision-context" / "packets" / "scan").exists()


@pytest.mark.parametrize(
    ("source", "code"), [("source:nope", "unknown_source"), ("source:off", "source_disabled")]
)
def test_unknown_or_disabled_source_is_exit_2_and_writes_nothing(
    dcx, goal: Path, source: str, code: str
) -> None:
    result = _scan(dcx, goal, "--source", source, "--format", "json")
    assert result.exit_code == 2 and result.json()["error"]["code"] == code
    assert not (goal / ".decision-context" / "packets" / "scan").exists()


def test_on_demand_source_is_scanned_only_when_named(dcx, goal: Path) -> None:
    default = _scan(dcx, goal, "--format", "json").json()["data"]["receipts"]
    assert [r["source_id"] for r in default] == ["source:docs"]
    named = _scan(dcx, goal, "--source", "source:later", "--format", "json").json()["data"][
        "receipts"
    ]
    assert [(r["source_id"], r["status"]) for r in named] == [("source:later", "completed")]


def test_scan_stores_goal_level_receipts_and_never_moves_cursors(dcx, goal: Path) -> None:
    out = _scan(dcx, goal, "--format", "json")
    assert out.exit_code == 0 and out.json()["status"] == "ok"
    receipt = out.json()["data"]["receipts"][0]
    stored = goal / ".decision-context" / "packets" / "scan" / f"{receipt['receipt_ref']}.json"
    assert json.loads(stored.read_bytes()) == receipt and "decision_id" not in receipt
    assert not (goal / ".decision-context" / "private" / "cursors.json").exists()
    assert list((goal / ".decision-context" / "decisions").iterdir()) == []
    again = _scan(dcx, goal, "--format", "json").json()["data"]["receipts"][0]
    assert (
        again["status"] == "completed" and again["changed_count"] == 2
    )  # still relative to no cursor
    assert dcx("-C", str(goal), "show", receipt["receipt_ref"]).exit_code == 0
    assert dcx("-C", str(goal), "verify").exit_code == 0


def test_scan_json_snapshot(dcx, example: Path, snapshot_json) -> None:
    out = dcx("-C", str(example), "scan", *AGENT, "--format", "json")
    assert out.exit_code == 0 and out.stderr == ""
    assert out.json() == snapshot_json


def test_scan_table_snapshot(dcx, goal: Path, snapshot) -> None:
    (goal / ".decision-context" / "sources.toml").write_text(
        (goal / ".decision-context" / "sources.toml").read_text()
        + source_block("source:gone", '"../elsewhere"', priority="p2")
    )
    out = _scan(
        dcx, goal, "--source", "source:docs", "--source", "source:gone", "--source", "source:later"
    )
    assert out.exit_code == 0
    assert out.stdout == snapshot


def test_failing_source_makes_the_run_partial_but_exit_0(dcx, goal: Path) -> None:
    (goal / "docs").rename(goal / "moved")
    out = _scan(dcx, goal, "--format", "json")
    assert out.exit_code == 0 and out.json()["status"] == "partial"
    receipt = out.json()["data"]["receipts"][0]
    assert (receipt["status"], receipt["reason_code"]) == ("unavailable", "locator_missing")


CANARY_NAME = "canaryname-7f3a9c"
CANARY_TEXT = "CANARYCONTENT-91bd4e"
CANARY_DIR = "canarydir-52ea10"


def test_canaries_never_reach_public_files_or_json(dcx, fresh_ws: Path, tree) -> None:
    tree(
        fresh_ws,
        {
            CANARY_DIR: {
                f"{CANARY_NAME}.md": f"secret {CANARY_TEXT}",
                "sub": {"plain.md": CANARY_TEXT},
                "bin.dat": b"\xff" + CANARY_TEXT.encode(),
            }
        },
    )
    configure(fresh_ws, binding_block() + source_block("source:docs", f'"{CANARY_DIR}"'))
    out = _scan(dcx, fresh_ws, "--format", "json")
    assert out.exit_code == 0 and out.json()["data"]["receipts"][0]["changed_count"] == 3
    # and a receipt after exact reads (what prepare stores), so verified reads are covered too
    ws = Workspace(fresh_ws)
    from tests.support.sources import plane

    _, _profile, registry, providers = plane(fresh_ws)
    scans = scan_sources(
        providers, select_sources(registry), committed={}, clock=FixedClock("2026-11-29T18:00:00Z")
    )
    reads = exact_read_scan(providers, scans[0], clock=FixedClock("2026-11-29T18:00:00Z"))
    assert reads[f"{CANARY_NAME}.md"].content == f"secret {CANARY_TEXT}"
    key = load_key(ws)
    with RefMinter(ws, key) as minter:
        Store(ws).put(
            scan_packet.SPEC,
            PacketContext("goal-test", key.key_id),
            scan_receipt_values(scans[0], reads, minter),
        )
    secrets = [
        CANARY_NAME,
        CANARY_TEXT,
        CANARY_DIR,
        scans[0].cursor_after,
        *(i.revision for i in scans[0].items),
    ]
    public = [out.stdout, out.stderr] + [p.read_text() for p in _public_files(fresh_ws)]
    assert len(_public_files(fresh_ws)) >= 2
    for text in public:
        for secret in secrets:
            assert secret not in text


def test_installed_script_scans_with_no_progress_when_piped(example: Path) -> None:
    out = run_dcx("-C", str(example), "scan", *AGENT, "--format", "json")
    assert out.exit_code == 0 and out.stderr == ""
    assert out.json()["data"]["receipts"][0]["changed_count"] >= 1
    text = run_dcx("-C", str(example), "scan", *AGENT)
    assert (
        text.exit_code == 0
        and "source:authority:docs" in text.stdout
        and "hashing" not in text.stderr
    )


def test_progress_bar_on_a_terminal_goes_to_stderr(example: Path) -> None:
    docs = example / "docs"
    for i in range(600):
        (docs / f"extra-{i:03d}.md").write_text(f"extra document {i}\n" * 20)
    main, child = pty.openpty()
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "100"}
    env.pop("NO_COLOR", None)
    exe = str(Path(sys.executable).parent / "dcx")
    proc = subprocess.run(
        [exe, "-C", str(example), "scan", *AGENT],
        stdout=subprocess.PIPE,
        stderr=child,
        env=env,
        timeout=60,
    )
    os.close(child)
    chunks = []
    try:
        while True:
            data = os.read(main, 65536)
            if not data:
                break
            chunks.append(data)
    except OSError:
        pass
    os.close(main)
    assert proc.returncode == 0 and b"source:authority:docs" in proc.stdout
    assert b"hashing source:authority:docs" in b"".join(chunks)
    assert b"hashing" not in proc.stdout
