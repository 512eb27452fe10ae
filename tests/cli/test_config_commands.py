"""Configuration by command (`enable`, `disable`, `source add|rm|list`, `provider set`).

The oracle is the file itself: parsed with tomllib and compared with what the
test expects, its comments and untouched lines compared line by line with the
file before, and refused edits compared byte for byte.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest


def _dc(root: Path) -> Path:
    return root / ".decision-context"


def _lines_kept(before: str, after: str) -> bool:
    """Every line of ``before`` is still in ``after``, in the same order."""
    rest = iter(after.splitlines())
    return all(any(line == other for other in rest) for line in before.splitlines())


def test_a_fresh_goal_is_made_working_by_the_two_commands_init_prints(dcx, fresh_ws: Path) -> None:
    (fresh_ws / "docs").mkdir()
    (fresh_ws / "docs" / "runbook.md").write_text("# Runbook\nRoll back when p99 exceeds 400 ms.\n")
    result = dcx("-C", str(fresh_ws), "init")
    assert result.exit_code == 0
    profile_before = (_dc(fresh_ws) / "profile.toml").read_text()
    sources_before = (_dc(fresh_ws) / "sources.toml").read_text()
    assert dcx("-C", str(fresh_ws), "enable").exit_code == 0  # init listed agent-a
    added = dcx(
        "-C",
        str(fresh_ws),
        "source",
        "add",
        "source:authority:docs",
        "--path",
        "docs",
        "--include",
        "**/*.md",
    )
    assert added.exit_code == 0, added.stderr
    status = dcx("-C", str(fresh_ws), "status", "--format", "json").json()["data"]
    assert status["activation"]["status"] == "available"
    profile = (_dc(fresh_ws) / "profile.toml").read_text()
    sources = (_dc(fresh_ws) / "sources.toml").read_text()
    # comments and layout survive: every old line is still there, in order, save the two values changed
    assert _lines_kept(profile_before.replace("enabled = false", "enabled = true"), profile)
    assert _lines_kept(sources_before, sources)
    registry = tomllib.loads(sources)
    assert registry["bindings"] == [{"provider_id": "files", "adapter": "local-file"}]
    assert registry["sources"] == [
        {
            "source_id": "source:authority:docs",
            "provider_id": "files",
            "source_kind": "document",
            "priority": "p0",
            "evidence_level": "s1",
            "objectives": ["goal-test"],
            "scan_mode": "incremental",
            "exact_read_policy": "always",
            "freshness_seconds": 86400,
            "locator": {"path": "docs", "include": ["**/*.md"]},
        }
    ]
    scan = dcx("-C", str(fresh_ws), "scan", "--format", "json")
    assert scan.exit_code == 0, scan.stdout


def test_init_prints_the_two_commands(dcx, tmp_path: Path) -> None:
    root = tmp_path / "g"
    root.mkdir()
    out = dcx("-C", str(root), "init", "--goal-id", "g1").stdout
    assert "  dcx enable --agent AGENT_ID\n" in out
    assert "  dcx source add source:authority:docs --path docs" in out
    other = tmp_path / "h"
    other.mkdir()
    out = dcx("-C", str(other), "init", "--goal-id", "h1", "--agent-id", "agent-a").stdout
    assert "  dcx enable\n" in out


def test_enable_adds_agents_once_and_disable_turns_off(dcx, fresh_ws: Path) -> None:
    assert (
        dcx("-C", str(fresh_ws), "enable", "--agent", "agent-b", "--agent", "agent-a").exit_code
        == 0
    )
    data = tomllib.loads((_dc(fresh_ws) / "profile.toml").read_text())
    assert (data["enabled"], data["enabled_agents"]) == (True, ["agent-a", "agent-b"])
    again = dcx("-C", str(fresh_ws), "enable", "--agent", "agent-b", "--format", "json").json()[
        "data"
    ]
    keys = again.pop("signing_keys")  # SPEC §18: the agent's key on this host, made the first time
    assert again == {"enabled": True, "agents_added": [], "changed": False}
    assert [(k["agent_id"], k["created"]) for k in keys] == [("agent-b", False)]
    assert (_dc(fresh_ws) / "signers" / "agent-b" / f"{keys[0]['key_id']}.pub").is_file()
    assert dcx("-C", str(fresh_ws), "disable").exit_code == 0
    data = tomllib.loads((_dc(fresh_ws) / "profile.toml").read_text())
    assert (data["enabled"], data["enabled_agents"]) == (False, ["agent-a", "agent-b"])


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(_dc(root).glob("*.toml"))}


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (("enable", "--agent", "not a token"), "--agent"),
        (("source", "add", "s1", "--path", "missing-folder"), "--path"),
        (("source", "add", "s1", "--path", ".."), "--path"),
        (("source", "add", "s1", "--path", ".decision-context"), "--path"),
        (("source", "add", "s1", "--path", "docs", "--priority", "p9"), "--priority"),
        (("source", "add", "s1", "--path", "docs", "--kind", "novel"), "--kind"),
        (("source", "add", "bad id", "--path", "docs"), "ID"),
        (("source", "rm", "nope"), "ID"),
        (("provider", "set", "magic"), "PROVIDER"),
        (("provider", "set", "bm25", "--max-results", "9"), "--max-results"),
        (("provider", "set", "bm25", "--timeout", "0.5"), "--timeout"),
        (("source", "add", "g1", "--git", "missing-repo", "--ref", "main"), "--git"),
        (("provider", "set", "bm25", "--config", "colour=red"), "context_provider.config.colour"),
        (("provider", "set", "openviking", "--config", "nonsense"), "--config"),
    ],
)
def test_a_refused_edit_writes_nothing_and_names_the_field(
    dcx, fresh_ws: Path, args, field
) -> None:
    (fresh_ws / "docs").mkdir()
    before = _snapshot(fresh_ws)
    result = dcx("-C", str(fresh_ws), *args, "--format", "json")
    assert result.exit_code == 2, result.stdout
    error = result.json()["error"]
    assert error.get("field") == field, error
    assert _snapshot(fresh_ws) == before
    assert not list(_dc(fresh_ws).glob("*.tmp")) and not list(_dc(fresh_ws).glob(".*.tmp"))


def test_flag_values_are_named_as_typed_before_anything_is_written(dcx, fresh_ws: Path) -> None:
    """The profile's bounds (SPEC §4: max_results 1..8, timeout 1..120) said of the flag given."""
    for args, message in (
        (("--max-results", "99"), "--max-results: 99 is outside 1..8"),
        (("--max-results", "0"), "--max-results: 0 is outside 1..8"),
        (("--timeout", "121"), "--timeout: 121.0 is outside 1..120"),
    ):
        result = dcx("-C", str(fresh_ws), "provider", "set", "bm25", *args, "--format", "json")
        assert result.exit_code == 2 and result.json()["error"]["message"] == message
    ok = dcx("-C", str(fresh_ws), "provider", "set", "bm25", "--max-results", "8")
    assert ok.exit_code == 0


def test_a_git_source_is_checked_at_once(dcx, fresh_ws: Path, tmp_path: Path) -> None:
    """As --path is: a repository that is not there, or a ref it lacks, is refused before the
    registry changes (real git: the ref exists only after a commit)."""
    import subprocess

    repo = tmp_path / "adrs"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com",
         "commit", "-q", "--allow-empty", "-m", "first"],
        check=True,
    )  # fmt: skip
    before = _snapshot(fresh_ws)
    cases = (
        (str(tmp_path / "nowhere"), "main", "git_repository_missing", "--git"),
        (str(repo), "release-9", "git_ref_missing", "--ref"),
    )
    for where, ref, code, field in cases:
        args = ("source", "add", "s:adr", "--git", where, "--ref", ref, "--format", "json")
        result = dcx("-C", str(fresh_ws), *args)
        error = result.json()["error"]
        assert result.exit_code == 2 and (error["code"], error["field"]) == (code, field)
        assert error["hint"]
    assert _snapshot(fresh_ws) == before
    good = dcx("-C", str(fresh_ws), "source", "add", "s:adr", "--git", str(repo), "--ref", "main")
    assert good.exit_code == 0 and _snapshot(fresh_ws) != before


def test_enable_with_no_agent_anywhere_is_refused(dcx, tmp_path: Path) -> None:
    root = tmp_path / "g"
    root.mkdir()
    dcx("-C", str(root), "init", "--goal-id", "g1")
    before = _snapshot(root)
    result = dcx("-C", str(root), "enable", "--format", "json")
    assert result.exit_code == 2 and result.json()["error"]["code"] == "agent_required"
    assert _snapshot(root) == before


def test_source_add_twice_is_refused_and_rm_removes_only_that_source(dcx, fresh_ws: Path) -> None:
    (fresh_ws / "docs").mkdir()
    (fresh_ws / "notes.md").write_text("n\n")
    assert dcx("-C", str(fresh_ws), "source", "add", "docs", "--path", "docs").exit_code == 0
    assert (
        dcx(
            "-C",
            str(fresh_ws),
            "source",
            "add",
            "notes",
            "--path",
            "notes.md",
            "--priority",
            "p2",
            "--on-demand",
            "--objective",
            "latency",
            "--exclude",
            "*.tmp",
        ).exit_code
        == 0
    )
    again = dcx("-C", str(fresh_ws), "source", "add", "docs", "--path", "docs", "--format", "json")
    assert again.exit_code == 2 and again.json()["error"]["code"] == "duplicate_id"
    listed = dcx("-C", str(fresh_ws), "source", "list", "--format", "json").json()["data"][
        "manifest"
    ]
    assert [(s["source_id"], s["priority"], s["scan_mode"]) for s in listed["sources"]] == [
        ("docs", "p0", "incremental"),
        ("notes", "p2", "on_demand"),
    ]
    assert dcx("-C", str(fresh_ws), "source", "rm", "docs").exit_code == 0
    registry = tomllib.loads((_dc(fresh_ws) / "sources.toml").read_text())
    assert [s["source_id"] for s in registry["sources"]] == ["notes"]
    assert registry["sources"][0]["locator"] == {"path": "notes.md", "exclude": ["*.tmp"]}
    assert dcx("-C", str(fresh_ws), "source", "rm", "notes").exit_code == 0
    assert "sources" not in tomllib.loads((_dc(fresh_ws) / "sources.toml").read_text())


def test_source_list_never_shows_a_locator(dcx, fresh_ws: Path) -> None:
    (fresh_ws / "secret-folder-name").mkdir()
    dcx("-C", str(fresh_ws), "source", "add", "s1", "--path", "secret-folder-name")
    for fmt in ("text", "json"):
        out = dcx("-C", str(fresh_ws), "source", "list", "--format", fmt).stdout
        assert "secret-folder-name" not in out


def test_provider_set_keeps_comments_and_drops_the_old_config(
    dcx, fresh_ws: Path, tmp_path: Path
) -> None:
    profile = _dc(fresh_ws) / "profile.toml"
    profile.write_text(
        profile.read_text()
        + '\n# my note about recall\n[context_provider]\nprovider = "openviking"  # the team server\n'
        '[context_provider.config]\nbinary = "/opt/ov/bin/ov"\n'
    )
    result = dcx(
        "-C",
        str(fresh_ws),
        "provider",
        "set",
        "bm25",
        "--max-results",
        "3",
        "--timeout",
        "7.5",
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.stdout
    assert result.json()["data"]["config_keys_dropped"] == ["binary"]
    text = profile.read_text()
    assert (
        "# my note about recall" in text and "# the team server" in text and "/opt/ov" not in text
    )
    data = tomllib.loads(text)["context_provider"]
    assert data == {"provider": "bm25", "max_results": 3, "timeout_seconds": 7.5}
    result = dcx(
        "-C",
        str(fresh_ws),
        "provider",
        "set",
        "openviking",
        "--config",
        "result_levels=[2]",
        "--config",
        "url=http://127.0.0.1:1933",
    )
    assert result.exit_code == 0, result.stderr
    data = tomllib.loads(profile.read_text())["context_provider"]
    assert data["config"] == {"result_levels": [2], "url": "http://127.0.0.1:1933"}
    # the values are private: the output names the keys only
    assert "1933" not in result.stdout


def test_a_hand_broken_file_is_refused_untouched(dcx, fresh_ws: Path) -> None:
    profile = _dc(fresh_ws) / "profile.toml"
    profile.write_text("enabled = [\n")
    result = dcx("-C", str(fresh_ws), "enable", "--agent", "a", "--format", "json")
    assert result.exit_code == 2 and result.json()["error"]["code"] == "invalid_toml"
    assert profile.read_text() == "enabled = [\n"


def test_edits_are_private_files(dcx, fresh_ws: Path) -> None:
    (_dc(fresh_ws) / "profile.toml").unlink()
    assert dcx("-C", str(fresh_ws), "enable", "--agent", "agent-a").exit_code == 0
    assert ((_dc(fresh_ws) / "profile.toml").stat().st_mode & 0o777) == 0o600


def test_source_add_git_makes_a_git_source_that_scans(dcx, fresh_ws: Path) -> None:
    import subprocess

    repo = fresh_ws / "vendor" / "handbook"
    repo.mkdir(parents=True)
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    (repo / "runbooks").mkdir()
    (repo / "runbooks" / "rollback.md").write_text("# Rollback\nRoll back above 400 ms.\n")
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "first"], check=True)
    result = dcx(
        "-C",
        str(fresh_ws),
        "source",
        "add",
        "source:runbooks",
        "--git",
        "vendor/handbook",
        "--ref",
        "main",
        "--path",
        "runbooks",
        "--include",
        "**/*.md",
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.stdout
    registry = tomllib.loads((_dc(fresh_ws) / "sources.toml").read_text())
    assert {"provider_id": "repos", "adapter": "git"} in registry["bindings"]
    source = registry["sources"][0]
    assert source["locator"] == {
        "repo": "vendor/handbook",
        "ref": "main",
        "path": "runbooks",
        "include": ["**/*.md"],
    }
    assert source["source_kind"] == "repository"
    assert dcx("-C", str(fresh_ws), "enable").exit_code == 0
    scan = dcx("-C", str(fresh_ws), "scan", "--format", "json").json()["data"]["receipts"][0]
    assert (scan["status"], scan["changed_count"]) == ("completed", 1)
    missing_ref = dcx(
        "-C", str(fresh_ws), "source", "add", "s2", "--git", "vendor/handbook", "--format", "json"
    )
    assert missing_ref.exit_code == 2 and missing_ref.json()["error"]["field"] == "--ref"
