"""Leak canaries through the whole cycle (SPEC §3.3, §3.4, §5.2, §6.2): no private value goes public.

Distinct canaries are planted in: the goal root's path, a file name, a folder
name, file contents, the recall query (flag and file), the recall scope (the
query summary's neighbour), the provider's content and resource refs (an
extension), the extension's stderr, dcx's environment (a variable and HOME)
and the exception text of a source plugin. The cycle then runs twice —
bm25 recall with a ``--rebase`` file citing ``{source_id, path}``, and the
extension provider with ``--auto-rebase`` and a ``codex://`` scope:

init → status → sources → index → scan → recall → prepare (preview,
--show-content, --rebase / --auto-rebase) → propose → outcome → writeback →
commit → feedback, then log, show (every packet), diff, verify, audit.

Asserted: no canary in any public file (everything under .decision-context/
except private/, profile.toml, sources.toml), in events.jsonl, or in any
``--format json`` output or its stderr — except ``dcx recall`` and
``dcx prepare --show-content``, which must carry the content canaries (so the
search is proven able to find them), as must the private ref map.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import run_dcx
from tests.support.cycle import OUTCOME, PROPOSAL, verified_outcome
from tests.support.extensions import make_extension
from tests.support.figures import record
from tests.support.reliability import canaries_in, public_files

CANARIES = {
    "root_path": "cnryrootpath5e1a",
    "file_name": "CNRYFNAME7c1d",
    "folder_name": "CNRYDIR42b9",
    "file_content": "CNRYCONTENT93fe",
    "query": "CNRYQUERY0d17",
    "query_file": "CNRYQFILE6a20",
    "scope": "cnryscope8b3c",
    "provider_content": "CNRYPROVCONTENT1f44",
    "provider_resource": "CNRYPROVREF2c55",
    "extension_stderr": "CNRYSTDERR3d66",
    "env_value": "CNRYENVVALUE4e77",
    "home_path": "cnryhome5f88",
    "plugin_exception": "CANARY-PLUGIN-EXCEPTION",  # fixed in fixtures/plugins/dcx-example-source
}
TRANSIENT = ("recall", "prepare --show-content")
ADR = f"""# ADR 7: catalog TTL

Rollback rule {CANARIES["file_content"]}: when origin p99 stays above 400 ms for ten minutes at peak we roll the catalog TTL back to 900 seconds.

The partner rate limit is 600 requests per second.
"""
PROFILE = """\
schema_version = "decision_context_profile_v0"
goal_id = "goal-leak"
enabled = true
enabled_agents = ["agent-a"]

[context_provider]
provider = "{provider}"
max_results = 4
timeout_seconds = 10
{config}"""
SOURCES = """\
schema_version = "decision_source_registry_v0"

[[bindings]]
provider_id = "files"
adapter = "local-file"

[[bindings]]
provider_id = "inbox"
adapter = "example-notes"
config = { mode = "raise" }

[[sources]]
source_id = "source:docs"
provider_id = "files"
source_kind = "document"
priority = "p0"
evidence_level = "s1"
objectives = ["origin-latency"]
scan_mode = "incremental"
exact_read_policy = "always"
freshness_seconds = 86400
locator = { path = "docs", include = ["**/*.md"] }

[[sources]]
source_id = "source:inbox"
provider_id = "inbox"
source_kind = "conversation"
priority = "p1"
evidence_level = "s3"
objectives = ["origin-latency"]
scan_mode = "incremental"
exact_read_policy = "always"
freshness_seconds = 86400
locator = "notes/inbox.json"
"""


@pytest.fixture(scope="module")
def plugin_site(example_plugin: Path) -> Path:
    return example_plugin


class Cycle:
    """Runs dcx commands and keeps every output for the sweep."""

    def __init__(self, dcx, root: Path, env: dict[str, str]) -> None:
        self.dcx = dcx
        self.root = root
        self.env = env
        self.outputs: list[tuple[str, str, str, bool]] = []  # label, stdout, stderr, transient

    def json(
        self, label: str, *args: str, ok: tuple[int, ...] = (0,), transient: bool = False
    ) -> Any:
        out = self.dcx("-C", str(self.root), *args, "--format", "json", env=self.env)
        self.outputs.append((label, out.stdout, out.stderr, transient))
        assert out.exit_code in ok, (label, out.exit_code, out.stdout[-800:], out.stderr[-400:])
        return json.loads(out.stdout)

    def script(self, label: str, *args: str) -> Any:
        """The installed console script (a real process with the canary environment)."""
        out = run_dcx("-C", str(self.root), *args, "--format", "json", env=self.env)
        self.outputs.append((label, out.stdout, out.stderr, False))
        assert out.exit_code == 0, (label, out.stdout[-800:], out.stderr[-400:])
        return json.loads(out.stdout)


def _decide(cycle: Cycle, decision_id: str, tmp: Path, outcome: dict[str, Any]) -> str:
    (tmp / "proposal.json").write_text(json.dumps(PROPOSAL))
    (tmp / f"outcome-{decision_id}.json").write_text(json.dumps(outcome))
    cycle.json(
        "propose", "propose", "--decision-id", decision_id, "--from", str(tmp / "proposal.json")
    )
    cycle.json(
        "outcome",
        "outcome",
        "--decision-id",
        decision_id,
        "--from",
        str(tmp / f"outcome-{decision_id}.json"),
    )
    event = cycle.json(
        "writeback",
        "writeback",
        "--decision-id",
        decision_id,
        "--kind",
        "validation",
        "--summary",
        f"Decision {decision_id} recorded",
    )["data"]["event"]
    commit = cycle.script(
        "commit", "commit", "--decision-id", decision_id, "--event-id", event["event_id"]
    )
    assert commit["data"]["receipt"]["status"] == "committed"
    cycle.json("feedback", "feedback", "--decision-id", decision_id)
    return event["event_id"]


def test_no_canary_reaches_a_public_file_or_output(
    dcx, tmp_path: Path, monkeypatch, plugin_site: Path
) -> None:
    home = tmp_path / f"home-{CANARIES['home_path']}"
    home.mkdir()
    (home / "canaries.json").write_text(
        json.dumps(
            {
                "stderr": CANARIES["extension_stderr"],
                "resource": CANARIES["provider_resource"],
                "content": CANARIES["provider_content"],
            }
        )
    )
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("LEAK_TEST_API_TOKEN", CANARIES["env_value"])
    monkeypatch.syspath_prepend(
        str(plugin_site)
    )  # the plugin's entry point; the worker inherits sys.path
    env = {"DCX_AGENT_ID": "agent-a", "PYTHONPATH": str(plugin_site)}
    root = tmp_path / f"goal-{CANARIES['root_path']}"
    root.mkdir()
    docs = root / "docs"
    (docs / CANARIES["folder_name"]).mkdir(parents=True)
    (docs / "adr.md").write_text(ADR)
    (docs / f"{CANARIES['file_name']}.md").write_text(
        "# Purge queue\n\nThe purge queue drains within 90 seconds at peak load for the catalog.\n"
    )
    (docs / CANARIES["folder_name"] / "deep.md").write_text(
        "# Deep\n\nOrigin p99 was 212 ms in the load test.\n"
    )
    (root / "notes").mkdir()
    (root / "notes" / "inbox.json").write_text(
        json.dumps({"notes": [{"id": "n1", "text": "a note"}]})
    )
    query = f"when do we roll back the catalog TTL {CANARIES['query']}"
    (tmp_path / "q2.txt").write_text(f"rollback rule for origin p99 {CANARIES['query_file']}")
    cycle = Cycle(dcx, root, env)

    # -- cycle 1: bm25, preview, show-content, an agent rebase citing {source_id, path} ----------
    cycle.json("init", "init", "--goal-id", "goal-leak", "--agent-id", "agent-a")
    dc = root / ".decision-context"
    (dc / "profile.toml").write_text(PROFILE.format(provider="bm25", config=""))
    (dc / "sources.toml").write_text(SOURCES)
    cycle.json("status", "status")
    cycle.json("sources", "sources", "--write")
    cycle.json("index", "index")
    scan = cycle.json("scan", "scan")
    inbox = next(r for r in scan["data"]["receipts"] if r["source_id"] == "source:inbox")
    assert (inbox["status"], inbox["reason_code"]) == (
        "unavailable",
        "provider_scan_failed",
    )  # it did raise
    recall = cycle.json(
        "recall",
        "recall",
        "--scope",
        "",
        "--query",
        query,
        "--query-summary",
        "TTL rollback criteria",
        transient=True,
    )
    recall_q = ("--query", query, "--query-summary", "TTL rollback criteria")
    cycle.json("prepare (preview)", "prepare", "--decision-id", "leak-one", *recall_q)
    shown = cycle.json(
        "prepare --show-content",
        "prepare",
        "--decision-id",
        "leak-one",
        "--show-content",
        *recall_q,
        transient=True,
    )
    content = shown["data"]["content"]
    paths = {item["path"] for item in content["exact_reads"]}
    assert paths == {"adr.md", f"{CANARIES['file_name']}.md", f"{CANARIES['folder_name']}/deep.md"}
    provider_refs = [r["provider_ref"] for r in content["recall_results"]]
    assert provider_refs, "bm25 recalled nothing: the recall path was not exercised"
    cite = [{"source_id": "source:docs", "path": p} for p in sorted(paths)]
    rebase = {
        "changed_facts": [
            {"fact_id": f"fact-{i}", "summary": f"Authority document {i} changed", "change_ref": c}
            for i, c in enumerate(cite)
        ],
        "recalled_claims": [
            {
                "claim_id": "claim-rollback",
                "summary": "Rollback rule recalled",
                "provider_ref": provider_refs[0],
            }
        ],
        "conflicts": [
            {
                "conflict_id": "owners",
                "summary": "Two documents disagree on the drill",
                "change_refs": cite[:2],
                "conflict_rule": "canonical_revision_wins",
                "status": "resolved",
            }
        ],
    }
    (tmp_path / "rebase.json").write_text(json.dumps(rebase))
    prepared = cycle.json(
        "prepare --rebase",
        "prepare",
        "--decision-id",
        "leak-one",
        "--rebase",
        str(tmp_path / "rebase.json"),
        *recall_q,
    )
    rows = {r["source_id"]: r for r in prepared["data"]["assembly"]["checkpoint"]["rows"]}
    assert rows["source:docs"]["disposition"] == "ready_after_writeback"
    assert rows["source:inbox"]["disposition"] == "preserve"  # the raising plugin, failed open
    _decide(cycle, "leak-one", tmp_path, OUTCOME)

    # -- cycle 2: the extension provider, a codex:// scope, --auto-rebase, a verified outcome ------
    manifest = make_extension(tmp_path / "exts", "canary_echo.py")
    cycle.json("ext install", "ext", "install", str(manifest))
    (dc / "profile.toml").write_text(
        PROFILE.format(
            provider="extension",
            config='\n[context_provider.config]\nextension_id = "canary-echo"\n',
        )
    )
    with open(docs / "adr.md", "a") as handle:
        handle.write("\nReviewed again after the December load test.\n")
    scope = ("--scope", f"codex://threads/{CANARIES['scope']}")
    recall_f = ("--query-file", str(tmp_path / "q2.txt"), "--query-summary", "Rollback rule")
    echoed = cycle.json("recall", "recall", *scope, *recall_f, transient=True)
    prepared = cycle.json(
        "prepare --auto-rebase",
        "prepare",
        "--decision-id",
        "leak-two",
        "--auto-rebase",
        *scope,
        *recall_f,
    )
    evidence = prepared["data"]["assembly"]["evidence"]
    assert [c["summary"] for c in evidence["recalled_claims"]] == ["Authority passage on rollback"]
    _decide(cycle, "leak-two", tmp_path, verified_outcome(evidence["packet_ref"]))

    # -- reading what was decided ----------------------------------------------------------------
    cycle.json("ext list", "ext", "list")
    cycle.json("status", "status")
    cycle.json("sources", "sources")
    cycle.json("log", "log")
    cycle.json("log --decision-id", "log", "--decision-id", "leak-two")
    refs = sorted(p.stem for p in (dc / "packets").rglob("*.json"))
    for ref in refs:
        cycle.json(f"show {ref}", "show", ref)
    evidences = sorted(p.stem for p in (dc / "packets" / "evidence").glob("*.json"))
    cycle.json("diff", "diff", evidences[0], evidences[-1])
    cycle.json("verify", "verify")
    audit = cycle.script("audit", "audit")
    cycle.script("verify (script)", "verify")

    # -- the sweep ---------------------------------------------------------------------------------
    public = public_files(root)
    assert dc / "events.jsonl" in public and any("packets" in p.parts for p in public)
    found_files = {
        p.relative_to(root).as_posix(): canaries_in(p.read_bytes(), CANARIES) for p in public
    }
    found_files = {k: v for k, v in found_files.items() if v}
    found_outputs = {}
    for label, stdout, stderr, transient in cycle.outputs:
        if transient:
            continue
        hits = canaries_in(stdout + stderr, CANARIES)
        if hits:
            found_outputs[label] = hits
    # the transient outputs and the private side do hold them: the search can find what it looks for
    in_recall = canaries_in(json.dumps(recall) + json.dumps(echoed), CANARIES)
    in_shown = canaries_in(json.dumps(shown), CANARIES)
    private = b"".join(p.read_bytes() for p in (dc / "private").rglob("*") if p.is_file())
    in_private = canaries_in(private, CANARIES)
    record(
        "leaks",
        "cycle",
        {
            "canaries": len(CANARIES),
            "public_files": len(public),
            "json_outputs": len(cycle.outputs),
            "canaries_in_public_files": sum(len(v) for v in found_files.values()),
            "canaries_in_outputs": sum(len(v) for v in found_outputs.values()),
            "transient_outputs_carrying_canaries": sorted(set(in_recall) | set(in_shown)),
            "audit_findings": len(audit["data"].get("findings", []))
            if isinstance(audit.get("data"), dict)
            else None,
        },
    )
    assert not found_files, found_files
    assert not found_outputs, found_outputs
    assert {"file_content", "provider_content", "query_file", "scope"} <= set(in_recall), in_recall
    assert {"file_content", "file_name", "folder_name"} <= set(in_shown), in_shown
    assert {"file_name", "folder_name"} <= set(in_private), in_private
    assert CANARIES["env_value"] not in json.dumps(cycle.outputs)


def test_the_sweep_finds_a_planted_canary(tmp_path: Path) -> None:
    """The detector of this module is not blind: a canary written into a public file is found."""
    root = tmp_path / "goal"
    (root / ".decision-context" / "packets" / "evidence").mkdir(parents=True)
    (root / ".decision-context" / "private").mkdir()
    (root / ".decision-context" / "private" / "x").write_text(CANARIES["query"])
    (root / ".decision-context" / "events.jsonl").write_text(
        json.dumps({"summary": CANARIES["scope"].upper()})
    )
    (root / ".decision-context" / "profile.toml").write_text(CANARIES["env_value"])
    hits = {p.name: canaries_in(p.read_bytes(), CANARIES) for p in public_files(root)}
    assert hits == {"events.jsonl": ["scope"]}


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
def test_gitignore_keeps_every_private_path_out_of_git(dcx, tmp_path: Path) -> None:
    """What init writes makes git ignore exactly the private side (so a commit of the folder is public-safe)."""
    root = tmp_path / "goal"
    root.mkdir()
    assert dcx("-C", str(root), "init", "--goal-id", "goal-leak", "--format", "json").exit_code == 0
    dc = root / ".decision-context"
    for name in (
        "private/cursors.json",
        "private/pending/a.json",
        "events.jsonl.lock",
        ".x.json.1.tmp",
    ):
        (dc / name).parent.mkdir(parents=True, exist_ok=True)
        (dc / name).write_text("x")
    git = ["git", "-C", str(root)]
    subprocess.run([*git, "init", "-q"], check=True)
    listed = subprocess.run(
        [*git, "status", "--porcelain", "--untracked-files=all"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    tracked = sorted(line[3:] for line in listed.splitlines())
    assert not any(
        p.startswith(".decision-context/private") or p.endswith((".lock", ".tmp")) for p in tracked
    )
    assert (
        ".decision-context/profile.toml" not in tracked
        and ".decision-context/sources.toml" not in tracked
    )
    assert ".decision-context/events.jsonl" in tracked
