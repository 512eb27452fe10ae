"""A git source end to end through the CLI (SPEC §15): real repositories, the whole cycle.

The main oracle is differential: the bundled example goal is run once with its
authority in a local directory (local-file) and once with the same files in a
bare git repository (git), and every decision dcx draws from them — which
facts changed, which recalled claims authority accepted or found stale, the
rebase and checkpoint verdicts, coverage — must agree. Only the refs differ,
since revisions are blake3 hashes in one and blob ids in the other.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.support import git as gitkit
from tests.support.cycle import QUERY, RUNBOOK, D, stale_runbook, through_writeback
from tests.support.sources import binding_block, configure, source_block
from tests.support.workspace import cursor_bytes, packets

SID = "source:authority:docs"


def _git_registry(root: Path, repo: str, ref: str = "main", path: str = "docs") -> None:
    text = (root / ".decision-context" / "sources.toml").read_text()
    text = text.replace('adapter = "local-file"', 'adapter = "git"')
    text = text.replace(
        'locator = { path = "docs", include = ["**/*.md"] }',
        f'locator = {{ repo = "{repo}", ref = "{ref}", path = "{path}", include = ["**/*.md"] }}',
    )
    (root / ".decision-context" / "sources.toml").write_text(text)


@pytest.fixture
def authoring(example: Path, tmp_path: Path) -> Path:
    """A work clone where authority is edited; the goal reads a bare repository it pushes to."""
    work = gitkit.init(tmp_path / "authoring")
    shutil.copytree(example / "docs", work / "docs")
    gitkit.commit(work, message="authority docs")
    gitkit.init(example / "authority.git", bare=True)
    gitkit.git(work, "remote", "add", "origin", str(example / "authority.git"))
    gitkit.git(work, "push", "-q", "origin", "main")
    shutil.rmtree(example / "docs")  # the goal has no work tree of its authority at all
    _git_registry(example, "authority.git")
    return work


def _push(work: Path, *, force: bool = False) -> None:
    gitkit.git(work, "push", "-q", *(["--force"] if force else []), "origin", "main")


def _prepare(dcx, root: Path) -> dict[str, Any]:
    result = dcx(
        "-C",
        str(root),
        "prepare",
        "--decision-id",
        D,
        "--auto-rebase",
        "--format",
        "json",
        "--query",
        QUERY,
        "--query-summary",
        "TTL rollback criteria",
    )
    assert result.exit_code == 0, result.stdout + result.stderr
    return result.json()["data"]


def _verdicts(data: dict[str, Any]) -> dict[str, Any]:
    """What dcx concluded, without refs: the part both adapters must agree on."""
    data = data["assembly"]
    evidence = data["evidence"]
    return {
        "coverage": data["coverage"]["status"],
        "facts": sorted(f["summary"] for f in evidence["changed_facts"]),
        "accepted": len(evidence["recalled_claims"]),
        "rejected": sorted(c["reason_code"] for c in evidence["stale_or_rejected_claims"]),
        "rebase": (data["rebase"]["status"], data["rebase"]["changed_item_count"]),
        "checkpoint": [(r["disposition"], r["reason_code"]) for r in data["checkpoint"]["rows"]],
        "scan": [
            (r["status"], r["changed_count"], r["exact_read_count"]) for r in data["scan_receipts"]
        ],
    }


def test_git_and_local_file_authority_reach_the_same_decision(
    dcx, example: Path, authoring: Path, tmp_path: Path
) -> None:
    twin = tmp_path / "twin"
    shutil.copytree(example, twin)
    shutil.rmtree(twin / "authority.git")
    shutil.copytree(authoring / "docs", twin / "docs")
    (twin / ".decision-context" / "sources.toml").write_text(
        (
            Path(__file__).resolve().parents[2]
            / ".dcx-example"
            / ".decision-context"
            / "sources.toml"
        ).read_text()
    )

    assert dcx("-C", str(twin), "index").exit_code == 0
    stale_runbook(twin)
    local = _prepare(dcx, twin)

    index = dcx("-C", str(example), "index", "--format", "json")
    assert index.exit_code == 0, index.stdout + index.stderr
    report = index.json()["data"]
    assert [(s["source_id"], s["status"], s["files"]) for s in report["sources"]] == [
        (SID, "indexed", 5)
    ]
    stale_runbook(authoring)
    gitkit.commit(authoring, message="rollback threshold moves")
    _push(authoring)
    git = _prepare(dcx, example)

    assert _verdicts(git) == _verdicts(local)
    assert (
        "stale_authority_revision" in _verdicts(git)["rejected"] and _verdicts(git)["accepted"] >= 1
    )
    assert (
        git["assembly"]["evidence"]["changed_facts"]
        and git["assembly"]["coverage"]["status"] == "complete"
    )


def test_cycle_commit_then_no_change_then_force_push(
    dcx, example: Path, authoring: Path, snapshot_json
) -> None:
    root = example
    _prepare(dcx, root)
    event_id = through_writeback(dcx, root)
    commit = dcx(
        "-C", str(root), "commit", "--decision-id", D, "--event-id", event_id, "--format", "json"
    )
    assert commit.exit_code == 0, commit.stdout + commit.stderr
    assert [s["result"] for s in commit.json()["data"]["receipt"]["sources"]] == ["advanced"]
    tip = gitkit.head(authoring)
    cursor = json.loads(cursor_bytes(root))["cursors"][SID]
    assert cursor.startswith(f"git:{tip}:")

    again = dcx("-C", str(root), "scan", "--format", "json").json()["data"]["receipts"][0]
    assert again["status"] == "no_change" and "reason_code" not in again

    (authoring / RUNBOOK).write_text("# Rollback\n\nA rewritten runbook that history will lose.\n")
    gitkit.commit(authoring, {"docs/extra.md": "pushed, then force-pushed away\n"}, "moved on")
    _push(authoring)
    moved = dcx("-C", str(root), "scan", "--format", "json").json()["data"]["receipts"][0]
    assert (moved["status"], moved["changed_count"]) == (
        "completed",
        2,
    ) and "reason_code" not in moved

    gitkit.git(
        authoring, "reset", "-q", "--hard", tip
    )  # history rewritten: the cursor's commit amended away
    gitkit.write(authoring, {"docs/origin-rate-limits.md": "The partner limit is now 800 rps.\n"})
    gitkit.git(authoring, "commit", "-q", "-a", "--amend", "-m", "authority docs, rewritten")
    _push(authoring, force=True)
    rewound = dcx("-C", str(root), "scan", "--format", "json").json()["data"]["receipts"][0]
    assert (rewound["status"], rewound["reason_code"], rewound["changed_count"]) == (
        "completed",
        "cursor_rewound",
        1,
    )
    assert (
        rewound["telemetry"]["skipped_submodules"] == 0
        and rewound["telemetry"]["skipped_symlinks"] == 0
    )
    assert {"receipt": rewound} == snapshot_json
    text = dcx("-C", str(root), "show", rewound["receipt_ref"])
    assert "note: cursor_rewound" in text.stdout and "failed open" not in text.stdout

    audit = dcx("-C", str(root), "audit", "--format", "json")
    assert audit.exit_code == 0, audit.stdout
    public = "".join(
        p.read_text() for p in (root / ".decision-context" / "packets").rglob("*.json")
    )
    for private in (tip, gitkit.head(authoring), "authority.git", "refs/heads"):
        assert private not in public
    assert all(r["status"] != "unavailable" for r in packets(root, "scan"))


def test_submodule_in_the_authority_repository_is_counted(
    dcx, fresh_ws: Path, tmp_path: Path
) -> None:
    vendored = gitkit.init(tmp_path / "vendored")
    gitkit.commit(vendored, {"guide.md": "text that belongs to another repository\n"})
    repo = gitkit.init(fresh_ws / "handbook")
    gitkit.commit(repo, {"runbooks/a.md": "alpha\n"})
    gitkit.git(
        repo,
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "add",
        "-q",
        str(vendored),
        "runbooks/vendor",
    )
    gitkit.commit(repo, {"runbooks/latest.md": ("link", "a.md")}, "vendor and a link")
    configure(
        fresh_ws,
        binding_block("repos", "git")
        + source_block(
            "source:handbook",
            gitkit.git_source("x", "handbook", path="runbooks"),
            provider_id="repos",
        ),
    )
    receipt = dcx("-C", str(fresh_ws), "scan", "--agent-id", "agent-a", "--format", "json").json()[
        "data"
    ]["receipts"][0]
    assert (receipt["status"], receipt["changed_count"]) == ("completed", 1)
    assert (
        receipt["telemetry"]["skipped_submodules"],
        receipt["telemetry"]["skipped_symlinks"],
    ) == (1, 1)
    shown = dcx("-C", str(fresh_ws), "show", receipt["receipt_ref"]).stdout
    assert "1 submodule(s) · 1 symlink(s) not followed" in shown


def test_a_broken_git_source_fails_open_beside_a_working_one(dcx, fresh_ws: Path, tree) -> None:
    tree(
        fresh_ws,
        {
            "notes": {"n.md": "local authority still scans"},
            "notgit": {"x.md": "no repository here"},
        },
    )
    configure(
        fresh_ws,
        binding_block("repos", "git")
        + binding_block()
        + source_block("source:broken", gitkit.git_source("x", "notgit"), provider_id="repos")
        + source_block("source:notes", '"notes"'),
    )
    out = dcx("-C", str(fresh_ws), "scan", "--agent-id", "agent-a", "--format", "json")
    assert out.exit_code == 0 and out.json()["status"] == "partial"
    rows = [
        (r["source_id"], r["status"], r.get("reason_code")) for r in out.json()["data"]["receipts"]
    ]
    assert rows == [
        ("source:broken", "unavailable", "git_repository_missing"),
        ("source:notes", "completed", None),
    ]
    check = dcx(
        "-C", str(fresh_ws), "status", "--check", "--agent-id", "agent-a", "--format", "json"
    ).json()
    by_id = {c["source_id"]: c for c in check["data"]["checks"]["sources"]}
    assert (by_id["source:broken"]["status"], by_id["source:broken"]["reason_code"]) == (
        "unavailable",
        "git_repository_missing",
    )
    assert by_id["source:notes"]["status"] == "ok"


@pytest.mark.parametrize(
    ("adapter", "locator", "message"),
    [
        (
            "local-file",
            '{ repo = "r", ref = "main" }',
            "adapter 'local-file' takes a path or { path, include, exclude }",
        ),
        ("git", '"docs"', "adapter 'git' takes { repo, ref, path?, include?, exclude? }"),
        ("git", '{ repo = "r" }', "sources[0].locator.ref, line 17: expected a non-empty ref name"),
        ("git", '{ repo = "r", ref = "main", depth = 1 }', "unknown field(s): depth"),
    ],
)
def test_locator_form_must_match_the_adapter(
    dcx, fresh_ws: Path, adapter: str, locator: str, message: str
) -> None:
    configure(
        fresh_ws, binding_block("p", adapter) + source_block("source:x", locator, provider_id="p")
    )
    out = dcx("-C", str(fresh_ws), "sources")
    assert out.exit_code == 2 and message in out.stderr and "Traceback" not in out.stderr
    assert "sources.toml" in out.stderr


def test_a_rebase_citing_a_repository_root_path_names_the_path_rule(
    dcx, example: Path, authoring: Path
) -> None:
    """The source's locator has `path = "docs"`: its changes are named relative to docs/. A rebase
    that cites `docs/<file>` (the repository-root path) is told the path rule, exit 2, not
    `rebase_refs_stale` ("prepare again"), which would not help; the source-relative path works."""
    name = RUNBOOK.name

    def rebase(path: str) -> Any:
        body = {
            "semantic_no_change": False,
            "changed_facts": [
                {"fact_id": "f-runbook", "summary": "The rollback runbook changed",
                 "change_ref": {"source_id": SID, "path": path}}
            ],
            "recalled_claims": [], "stale_or_rejected_claims": [], "conflicts": [],
        }  # fmt: skip
        (example / "rebase.json").write_text(json.dumps(body))
        return dcx(
            "-C", str(example), "prepare", "--decision-id", D,
            "--rebase", str(example / "rebase.json"), "--format", "json",
        )  # fmt: skip

    wrong = rebase(f"docs/{name}")
    assert wrong.exit_code == 2, wrong.stdout
    error = wrong.json()["error"]
    assert error["code"] == "rebase_path_not_in_source"
    assert "relative to the source's path" in error["message"]
    assert "--show-content" in error["hint"] and name not in error["message"]
    right = rebase(name)
    assert right.exit_code == 0, right.stdout
    facts = right.json()["data"]["assembly"]["evidence"]["changed_facts"]
    assert [f["fact_id"] for f in facts] == ["f-runbook"]
    unknown = rebase("docs/not-a-file.md")  # no change of that name anywhere: stale refs, as before
    assert unknown.exit_code == 1 and unknown.json()["error"]["code"] == "rebase_refs_stale"
