"""Hostile sources and providers (SPEC §5.2, §6.5): each fails open within its deadline + 1 s.

Hostile sources, beside two healthy local-file sources:
- plugin adapters (fixtures/plugins/dcx-example-source, in the worker
  subprocess): one that hangs in scan, one that returns 1,000,000 items, one
  that raises with a canary message, one that hangs in every exact read;
- local-file: a locator that is a symlink loop, a tree with symlink loops
  inside, a file that keeps growing while it is scanned and exact-read, and a
  2 GB sparse file (skipped under the default max_scan_bytes; under a raised
  one, hashing it runs into the deadline);
- advisory extensions (fixtures/extensions): one that hangs with a grandchild,
  one that floods stdout.

Each is measured on its own through the functions ``prepare`` calls
(``scan_source``, ``exact_read_scan``, the extension provider): it must end
in its fail-open result, cut short by its deadline (each hostile one would run
for an hour or forever; the bound asserted has the slack of
``tests.support.bounds``, which load cannot break). How far past its deadline
each one ended — the claim is deadline + 1 s (TERM, 1 s grace, KILL) — is a
figure: recorded here, checked against its goal by bench/reliability.py.
Then one ``dcx prepare`` over all of them must leave the rest of the decision
intact (healthy sources scanned, read and ready; evidence and checkpoint
stored), and that decision commits, advancing only the healthy sources.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from dcx.core.clock import FixedClock
from dcx.sources.plane import exact_read_scan, scan_source
from tests.support.bounds import cut_short, gone, soon
from tests.support.cycle import OUTCOME, PROPOSAL
from tests.support.extensions import install, make_extension, retrieve
from tests.support.figures import record
from tests.support.sources import plane

DEADLINE = 1.5  # [bounds] timeout_seconds of the hostile workspace
SPARSE_BYTES = 2 << 30
CLOCK = FixedClock("2026-11-29T18:00:00Z")
FIGURES: dict[str, dict[str, Any]] = {}

PROFILE = """\
schema_version = "decision_context_profile_v0"
goal_id = "goal-test"
enabled = true
enabled_agents = ["agent-a"]

[bounds]
timeout_seconds = {deadline}
{extra}
"""


def _source(source_id: str, provider_id: str, locator: str, priority: str = "p1") -> str:
    return f"""
[[sources]]
source_id = "{source_id}"
provider_id = "{provider_id}"
source_kind = "document"
priority = "{priority}"
evidence_level = "s2"
objectives = ["latency"]
scan_mode = "incremental"
exact_read_policy = "always"
freshness_seconds = 3600
locator = {locator}
"""


PLUGIN_MODES = {
    "source:hang": "hang",
    "source:million": "million",
    "source:raise": "raise",
    "source:hang-read": "hang_read",
}
LOCAL = {
    "source:docs": ('{ path = "docs", include = ["**/*.md"] }', "p0"),
    "source:notes": ('"notes"', "p1"),
    "source:loop": ('"loop"', "p2"),
    "source:loops-inside": ('"tangle"', "p2"),
    "source:growing": ('"growing"', "p2"),
    "source:sparse": ('"sparse"', "p2"),
}


def _registry() -> str:
    text = 'schema_version = "decision_source_registry_v0"\n\n[[bindings]]\nprovider_id = "files"\nadapter = "local-file"\n'
    for source_id, mode in PLUGIN_MODES.items():
        pid = source_id.split(":")[1]
        text += f'\n[[bindings]]\nprovider_id = "{pid}"\nadapter = "example-notes"\nconfig = {{ mode = "{mode}" }}\n'
    for source_id, (locator, priority) in LOCAL.items():
        text += _source(source_id, "files", locator, priority)
    for source_id in PLUGIN_MODES:
        text += _source(source_id, source_id.split(":")[1], '"notes/inbox.json"', "p2")
    return text


@pytest.fixture
def plugin_site(example_plugin: Path) -> Path:
    return example_plugin


@pytest.fixture
def hostile(fresh_ws: Path, plugin_site: Path, monkeypatch) -> Path:
    monkeypatch.syspath_prepend(str(plugin_site))
    root = fresh_ws
    (root / "docs").mkdir()
    (root / "docs" / "adr.md").write_text("# ADR\n\nThe catalog TTL is 90 seconds.\n")
    (root / "notes").mkdir()
    (root / "notes" / "inbox.json").write_text(
        json.dumps({"notes": [{"id": "n1", "text": "first note"}]})
    )
    (root / "notes" / "origin.md").write_text("Origin serves 600 rps.\n")
    os.symlink("loop", root / "loop")  # a locator that points at itself
    tangle = root / "tangle" / "a"
    tangle.mkdir(parents=True)
    (tangle / "file.md").write_text("inside the tangle\n")
    os.symlink("..", tangle / "up")  # a directory cycle
    os.symlink("self", tangle / "self")  # a link to itself
    os.symlink(str(root / "tangle"), tangle / "back")  # absolute, back to the tree's top
    (root / "growing").mkdir()
    (root / "growing" / "log.md").write_text("start\n")
    (root / "sparse").mkdir()
    (root / "sparse" / "small.md").write_text("a small file beside a large one\n")
    with open(root / "sparse" / "huge.bin", "wb") as handle:
        handle.truncate(SPARSE_BYTES)  # 2 GB of holes: no disk used
    (root / ".decision-context" / "profile.toml").write_text(
        PROFILE.format(deadline=DEADLINE, extra="")
    )
    (root / ".decision-context" / "sources.toml").write_text(_registry())
    return root


@pytest.fixture
def grower(hostile: Path):
    """A separate process appending to growing/log.md every half millisecond while the test runs."""
    code = (
        "import sys, time\n"
        "path = sys.argv[1]\n"
        "while True:\n"
        "    with open(path, 'a') as f:\n"
        "        f.write('x' * 1023 + '\\n')\n"
        "    time.sleep(0.0005)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code, str(hostile / "growing" / "log.md")])
    time.sleep(0.2)
    yield proc
    proc.kill()
    proc.wait()


def _measure(name: str, deadline: float, run) -> Any:
    started = time.monotonic()
    result = run()
    elapsed = time.monotonic() - started
    FIGURES[name] = {
        "deadline_s": deadline,
        "elapsed_s": round(elapsed, 3),
        "overrun_s": round(max(0.0, elapsed - deadline), 3),
    }
    return result, elapsed


def test_each_hostile_source_fails_open_within_its_deadline(hostile: Path, grower) -> None:
    _ws, _profile, registry, providers = plane(hostile)
    results: dict[str, tuple[str, str | None]] = {}
    for source in registry.sources:
        if source.source_id in ("source:docs", "source:notes"):
            continue
        scan, elapsed = _measure(
            f"scan {source.source_id}",
            DEADLINE,
            lambda s=source: scan_source(providers, s, cursor_before=None, clock=CLOCK),
        )
        FIGURES[f"scan {source.source_id}"].update(status=scan.status, reason=scan.reason_code)
        results[source.source_id] = (scan.status, scan.reason_code)
        assert cut_short(elapsed, DEADLINE), (source.source_id, elapsed)
        if scan.ok:
            reads, elapsed = _measure(
                f"read {source.source_id}",
                DEADLINE,
                lambda s=scan: exact_read_scan(providers, s, clock=CLOCK),
            )
            failed = sorted({r.reason_code for r in reads.values() if not r.absorbed})
            FIGURES[f"read {source.source_id}"].update(items=len(reads), failed=failed)
            results[f"read {source.source_id}"] = (
                "failed" if failed else "ok",
                ",".join(failed) or None,
            )
            assert cut_short(elapsed, DEADLINE), (source.source_id, elapsed)
    record(
        "hostile",
        "sources",
        {"figures": FIGURES, "max_overrun_s": max(f["overrun_s"] for f in FIGURES.values())},
    )
    assert results["source:hang"] == ("unavailable", "scan_timeout")
    assert results["source:million"][0] == "unavailable"
    assert results["source:million"][1] in ("scan_timeout", "provider_contract_invalid")
    assert results["source:raise"] == ("unavailable", "provider_scan_failed")
    assert results["read source:hang-read"] == ("failed", "exact_read_timeout")
    assert results["source:loop"] == ("unavailable", "locator_missing")
    assert results["source:loops-inside"][0] == "completed"
    assert results["read source:growing"][0] == "failed"
    assert results["read source:growing"][1] in (
        "exact_read_revision_mismatch",
        "exact_read_timeout",
    )
    assert (
        results["source:sparse"][0] == "completed"
    )  # the 2 GB file is skipped, the small one scanned


def test_a_raised_scan_limit_still_stops_hashing_at_the_deadline(hostile: Path) -> None:
    """max_scan_bytes above 2 GB: the sparse file is hashed, and the deadline cuts it (~6 s of hashing)."""
    profile = hostile / ".decision-context" / "profile.toml"
    profile.write_text(PROFILE.format(deadline=1, extra=f"max_scan_bytes = {4 << 30}"))
    _ws, _profile, registry, providers = plane(hostile)
    sparse = registry.source("source:sparse")
    scan, elapsed = _measure(
        "scan source:sparse (max_scan_bytes 4 GiB)",
        1.0,
        lambda: scan_source(providers, sparse, cursor_before=None, clock=CLOCK),
    )
    FIGURES["scan source:sparse (max_scan_bytes 4 GiB)"].update(
        status=scan.status, reason=scan.reason_code
    )
    record("hostile", "sparse_hashing", FIGURES["scan source:sparse (max_scan_bytes 4 GiB)"])
    assert (scan.status, scan.reason_code) == ("unavailable", "scan_timeout")
    assert cut_short(elapsed, 1.0), elapsed


@pytest.mark.parametrize(
    ("script", "reason"), [("hang.py", "extension_timeout"), ("flood.py", "response_too_large")]
)
def test_hostile_extensions_are_stopped_within_their_deadline(
    fresh_ws: Path, tmp_path: Path, script: str, reason: str
) -> None:
    install(fresh_ws, make_extension(tmp_path / "exts", script, timeout=1))
    (_provider, result), elapsed = _measure(f"extension {script}", 1.0, lambda: retrieve(fresh_ws))
    FIGURES[f"extension {script}"].update(status=result.status, reason=result.reason_code)
    record("hostile", f"extension {script}", FIGURES[f"extension {script}"])
    assert (result.status, result.reason_code) == ("unavailable", reason)
    assert cut_short(elapsed, 1.0), elapsed
    if (
        script == "hang.py"
    ):  # the grandchild went down with it (dead, or a zombie no reaper collected)
        pid = int((Path.home() / "hang-grandchild.pid").read_text())
        assert soon(lambda: gone(pid))


def test_the_rest_of_the_decision_is_intact_and_commits(
    dcx, hostile: Path, grower, tmp_path: Path
) -> None:
    ws = ["-C", str(hostile)]
    env = {"DCX_AGENT_ID": "agent-a"}
    started = time.monotonic()
    out = dcx(
        *ws, "prepare", "--decision-id", "hostile", "--auto-rebase", "--format", "json", env=env
    )
    elapsed = time.monotonic() - started
    assert out.exit_code == 0, out.stdout[-800:]
    doc = out.json()
    assert doc["status"] == "partial"
    asm = doc["data"]["assembly"]
    rows = {r["source_id"]: (r["disposition"], r["reason_code"]) for r in asm["checkpoint"]["rows"]}
    receipts = {r["source_id"]: r for r in asm["scan_receipts"]}
    ready = {
        sid for sid, (disposition, _) in rows.items() if disposition == "ready_after_writeback"
    }
    record(
        "hostile",
        "prepare",
        {
            "elapsed_s": round(elapsed, 3),
            "sources": len(rows),
            "ready": sorted(ready),
            "preserved": {sid: r for sid, r in rows.items() if sid not in ready},
        },
    )
    # the healthy sources: scanned, read, cited, ready; coverage of the p0 source complete
    assert {"source:docs", "source:notes", "source:loops-inside", "source:sparse"} <= ready
    assert (
        receipts["source:docs"]["exact_read_count"] == 1
        and receipts["source:notes"]["exact_read_count"] == 2
    )
    assert asm["coverage"]["incomplete_required_source_ids"] == []
    assert receipts["source:sparse"]["telemetry"]["skipped_oversize"] == 1
    # each hostile one preserved, with its reason
    for sid in ("source:hang", "source:million", "source:raise", "source:loop"):
        assert rows[sid] == ("preserve", "cursor_after_missing"), (sid, rows[sid])
        assert (
            receipts[sid]["status"] == "unavailable" and receipts[sid]["provider_fail_open"] is True
        )
    assert rows["source:hang-read"] == ("preserve", "exact_read_incomplete")
    assert rows["source:growing"] == ("preserve", "exact_read_incomplete")
    assert "CANARY-PLUGIN-EXCEPTION" not in out.stdout + out.stderr
    evidence = asm["evidence"]
    assert len(evidence["changed_facts"]) >= 4
    health = {h["provider"]: h["status"] for h in evidence["provider_health"]}
    assert health["hang"] == health["million"] == health["raise"] == "unavailable"

    # and the decision goes all the way: only the ready sources advance
    (tmp_path / "proposal.json").write_text(json.dumps(PROPOSAL))
    (tmp_path / "outcome.json").write_text(json.dumps(OUTCOME))
    for step, flag in (
        ("propose", str(tmp_path / "proposal.json")),
        ("outcome", str(tmp_path / "outcome.json")),
    ):
        assert dcx(*ws, step, "--decision-id", "hostile", "--from", flag, env=env).exit_code == 0
    event = dcx(
        *ws,
        "writeback",
        "--decision-id",
        "hostile",
        "--kind",
        "validation",
        "--summary",
        "Hostile sources absorbed what they could",
        "--format",
        "json",
        env=env,
    ).json()["data"]["event"]
    commit = dcx(
        *ws,
        "commit",
        "--decision-id",
        "hostile",
        "--event-id",
        event["event_id"],
        "--format",
        "json",
        env=env,
    )
    assert commit.exit_code == 0, commit.stdout
    cursors = json.loads((hostile / ".decision-context/private/cursors/agent-a.json").read_text())[
        "cursors"
    ]
    assert set(cursors) == ready
    assert dcx(*ws, "verify", env=env).exit_code == 0


def test_a_file_that_grew_past_the_read_bound_is_a_mismatch_not_an_oversize(fresh_ws: Path) -> None:
    """Terminal "oversize" is for a file whose scanned revision really is too large to read. A file
    scanned small that grew past max_read_bytes before its exact read is a transient mismatch."""
    root = fresh_ws
    (root / "docs").mkdir()
    (root / "docs" / "small.md").write_text("small at scan time\n")
    (root / "docs" / "large.md").write_text("y" * 4096)
    (root / ".decision-context" / "profile.toml").write_text(
        PROFILE.format(deadline=5, extra="max_read_bytes = 1024")
    )
    (root / ".decision-context" / "sources.toml").write_text(
        'schema_version = "decision_source_registry_v0"\n\n[[bindings]]\nprovider_id = "files"\n'
        'adapter = "local-file"\n' + _source("source:docs", "files", '"docs"', "p0")
    )
    _ws, _profile, registry, providers = plane(root)
    scan = scan_source(providers, registry.source("source:docs"), cursor_before=None, clock=CLOCK)
    with open(root / "docs" / "small.md", "a") as handle:
        handle.write("z" * 4096)  # grows past the 1024-byte read bound after the scan
    reads = exact_read_scan(providers, scan, clock=CLOCK)
    assert (reads["small.md"].status, reads["small.md"].reason_code) == (
        "failed",
        "exact_read_revision_mismatch",
    )
    assert reads["large.md"].status == "oversize" and reads["large.md"].absorbed
