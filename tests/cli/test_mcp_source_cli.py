"""An mcp source on the command line (SPEC §15.1): ``source add --mcp``, the whole decision
cycle, fail-open scans and what never reaches a public file — against real MCP servers."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.support.cli import CliResult, Runner, run_dcx
from tests.support.cycle import QUERY, QUERY_SUMMARY, D
from tests.support.mcpsource import PREFIX, SERVER, command
from tests.support.workspace import copy_example, write_tree

SID = "source:notes"


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    folder = tmp_path / "notes"
    write_tree(folder, {"ttl.md": "TTL stays at 90 s.\n", "owner.md": "Owner: storefront.\n"})
    return folder


@pytest.fixture
def goal(tmp_path: Path) -> Path:
    return copy_example(tmp_path / "goal")


def add(goal: Path, notes: Path, *flags: str, prefix: str = PREFIX) -> CliResult:
    return run_dcx(
        "-C", str(goal), "source", "add", SID, "--mcp", "--path", prefix, "--include", "*.md",
        "--", *command(notes, *flags),
    )  # fmt: skip


def receipt(scan_json: dict, source_id: str = SID) -> dict:
    return next(r for r in scan_json["data"]["receipts"] if r["source_id"] == source_id)


def test_source_add_mcp_lists_then_writes_the_entry(goal, notes):
    result = add(goal, notes)
    assert result.exit_code == 0, result.stderr
    assert "2 resource(s) listed" in result.stdout
    registry = tomllib.loads((goal / ".decision-context" / "sources.toml").read_text())
    entry = next(s for s in registry["sources"] if s["source_id"] == SID)
    assert entry["locator"] == {
        "command": command(notes),
        "uri_prefix": PREFIX,
        "include": ["*.md"],
    }
    binding = next(b for b in registry["bindings"] if b["provider_id"] == entry["provider_id"])
    assert binding["adapter"] == "mcp"
    # the output names the change, never the command or the prefix
    assert str(SERVER) not in result.stdout + result.stderr and PREFIX not in result.stdout


@pytest.mark.parametrize(
    ("flags", "code"),
    [(("--malformed",), "mcp_protocol_error"), (("--crash-after", "1"), "mcp_server_exited")],
)
def test_source_add_mcp_refuses_a_server_that_does_not_list(goal, notes, flags, code):
    before = (goal / ".decision-context" / "sources.toml").read_bytes()
    result = add(goal, notes, *flags)
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert lines[0] == f"error: --mcp: the server did not start and list its resources ({code})"
    assert lines[1].startswith("hint: ") and len(lines) == 2
    assert (goal / ".decision-context" / "sources.toml").read_bytes() == before


def test_source_add_mcp_usage_errors(goal, notes):
    no_command = run_dcx("-C", str(goal), "source", "add", SID, "--mcp")
    assert no_command.exit_code == 2 and no_command.stderr.startswith("error: --mcp:")
    stray = run_dcx("-C", str(goal), "source", "add", SID, "--path", "docs", "--", "x")
    assert stray.exit_code == 2 and stray.stderr.startswith("error: CMD:")
    missing = run_dcx("-C", str(goal), "source", "add", SID, "--mcp", "--", str(notes / "nope"))
    assert missing.exit_code == 2 and "(mcp_start_failed)" in missing.stderr


def _public_text(goal: Path) -> str:
    dc = goal / ".decision-context"
    files = [p for p in dc.rglob("*") if p.is_file() and "private" not in p.relative_to(dc).parts]
    return "\n".join(
        p.read_text(errors="replace")
        for p in files
        if p.name not in ("profile.toml", "sources.toml")
    )


def test_the_decision_cycle_with_an_mcp_source(goal, notes):
    assert add(goal, notes).exit_code == 0
    dcx = Runner(goal)
    first = receipt(dcx.json("scan"))
    assert (first["status"], first["changed_count"]) == ("completed", 2)

    dcx("index")
    prepared = dcx.json(
        "prepare", "--decision-id", D, "--auto-rebase", "--query", QUERY,
        "--query-summary", QUERY_SUMMARY,
    )["data"]  # fmt: skip
    scans = {r["source_id"]: r for r in prepared["assembly"]["scan_receipts"]}
    mine = scans[SID]
    assert (mine["status"], mine["changed_count"], mine["exact_read_count"]) == ("completed", 2, 2)
    assert all(c["exact_read_verified"] for c in mine["changes"])

    dcx("propose", "--decision-id", D, "--from", str(goal / "proposal.json"))
    dcx("outcome", "--decision-id", D, "--from", str(goal / "outcome.json"))
    event = dcx.json(
        "writeback", "--decision-id", D, "--kind", "validation", "--summary", "TTL kept at 90 s"
    )["data"]["event"]
    commit = dcx.json("commit", "--decision-id", D, "--event-id", event["event_id"])
    assert commit["ok"] is True

    # absorbed: nothing changed since the commit
    assert receipt(dcx.json("scan"))["status"] == "no_change"
    # a changed resource is a change next time, and only that one
    (notes / "ttl.md").write_text("TTL goes to 60 s.\n")
    again = receipt(dcx.json("scan"))
    assert (again["status"], again["changed_count"]) == ("completed", 1)

    public = _public_text(goal)
    for private in (PREFIX, str(notes), str(SERVER), "ttl.md", "TTL goes to 60 s"):
        assert private not in public
    audit = dcx("audit", "--format", "json", ok=False)
    assert audit.exit_code == 0, audit.stdout


def test_a_failing_server_fails_open_and_prints_nothing_it_sent(goal, notes, tmp_path):
    assert add(goal, notes).exit_code == 0
    sources = goal / ".decision-context" / "sources.toml"
    sources.write_text(
        sources.read_text().replace(
            json.dumps(str(notes)), json.dumps(str(notes)) + ', "--malformed"'
        )
    )
    result = run_dcx("-C", str(goal), "scan")
    assert result.exit_code == 0, result.stderr
    assert "this is not json-rpc" not in result.stdout + result.stderr
    data = json.loads(run_dcx("-C", str(goal), "scan", "--format", "json").stdout)
    mine = receipt(data)
    assert (mine["status"], mine["reason_code"]) == ("unavailable", "mcp_protocol_error")
    assert "cursor_after_ref" not in mine and mine["changes"] == []
    other = receipt(data, "source:authority:docs")
    assert other["status"] == "completed"  # the other sources go on


SDK = ("mcp", "mcp_types", "pydantic", "anyio")


@pytest.mark.parametrize("args", [["status", "--format", "json"], ["sources"], ["--help"]])
def test_commands_that_start_no_server_import_no_sdk(goal, notes, args):
    assert add(goal, notes).exit_code == 0
    code = (
        "import sys\n"
        "from dcx.cli import main\n"
        "try:\n"
        f"    main({['-C', str(goal), *args]!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        f"sdk = sorted(m for m in sys.modules if m.split('.')[0] in {SDK!r})\n"
        "print('SDK', sdk, file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert "SDK []" in proc.stderr, proc.stderr


def test_status_check_starts_the_server_and_lists(goal, notes, tmp_path):
    assert add(goal, notes).exit_code == 0
    control = tmp_path / "control"
    sources = goal / ".decision-context" / "sources.toml"
    sources.write_text(
        sources.read_text().replace(
            json.dumps(str(notes)),
            json.dumps(str(notes)) + f', "--control", {json.dumps(str(control))}',
        )
    )

    def row() -> dict:
        result = run_dcx("-C", str(goal), "status", "--check", "--format", "json")
        assert result.exit_code == 0, result.stderr
        return next(r for r in result.json()["data"]["checks"]["sources"] if r["source_id"] == SID)

    first = row()
    assert (first["status"], first["reason_code"]) == ("ok", None)
    control.write_text("crash")
    second = row()
    assert (second["status"], second["reason_code"]) == ("unavailable", "mcp_server_exited")
