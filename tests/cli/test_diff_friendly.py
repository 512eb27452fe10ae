"""Packets diff well in git: decisions never share a file, one field is one line."""

from __future__ import annotations

import difflib
import json
import os
import shutil
import subprocess
from pathlib import Path

from tests.support.cli import Runner
from tests.support.cycle import run_cycle
from tests.support.workspace import copy_example, packet_files

DC = ".decision-context"


def public_files(root: Path) -> dict[str, bytes]:
    """Workspace-relative name -> bytes of every public file (no private/, config or lock files)."""
    out = {}
    for path in sorted((root / DC).rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and "/private/" not in rel and not rel.endswith((".lock", ".toml")):
            out[rel] = path.read_bytes()
    return out


def _is_goal_level(name: str, data: bytes) -> bool:
    return name.startswith(f"{DC}/packets/") and "decision_id" not in json.loads(data)


def test_two_agents_decisions_touch_disjoint_files(tmp_path: Path) -> None:
    home = {"HOME": str(tmp_path / "home")}
    base = public_files(copy_example(tmp_path / "base"))
    runs = {}
    for decision in ("ttl-a", "ttl-b"):
        root = copy_example(tmp_path / decision)
        run_cycle(root, decision, edit_authority=False, env=home)
        after = public_files(root)
        runs[decision] = {name: data for name, data in after.items() if base.get(name) != data}
    a, b = runs["ttl-a"], runs["ttl-b"]
    assert f"{DC}/decisions/ttl-a.jsonl" in a and f"{DC}/decisions/ttl-b.jsonl" in b
    shared = set(a) & set(b)
    logs = {f"{DC}/events.jsonl", f"{DC}/statements.jsonl"}
    assert logs <= shared  # the shared logs: append-only, merged by union (SPEC §18: statements)
    goal_level = shared - logs
    assert goal_level, "both runs scanned the same sources: their goal-level packets coincide"
    for name in goal_level:
        # the one agent's signer file (SPEC §18: the same fixed key in both copies) is shared too
        shared_file = name.startswith(f"{DC}/signers/") or _is_goal_level(name, a[name])
        assert shared_file and a[name] == b[name], name
    decision_files = {
        name
        for name in set(a) | set(b)
        if name not in logs
        and not name.startswith(f"{DC}/signers/")
        and not _is_goal_level(name, (a.get(name) or b[name]))
    }
    assert decision_files and not (decision_files & shared)


def test_a_second_decision_never_rewrites_a_file_of_the_first(cycled: Path, tmp_path: Path) -> None:
    before = public_files(cycled)
    load_test = cycled / "docs" / "load-test-90s-ttl.md"
    load_test.write_text(
        load_test.read_text() + "\nA second run at 95 s TTL showed the same origin p99.\n"
    )
    run_cycle(cycled, "ttl-2027-01", edit_authority=False, env={"HOME": str(tmp_path / "home")})
    after = public_files(cycled)
    changed = sorted(name for name in before if after[name] != before[name])
    assert changed == [f"{DC}/events.jsonl", f"{DC}/statements.jsonl"]
    for log in changed:
        assert after[log].startswith(before[log])  # appended, never rewritten
    assert len(after) > len(before) and f"{DC}/decisions/ttl-2027-01.jsonl" in after


def _changed_lines(old: bytes, new: bytes) -> list[str]:
    diff = difflib.unified_diff(
        old.decode().splitlines(), new.decode().splitlines(), lineterm="", n=0
    )
    return [line for line in diff if line[:1] in "+-" and not line.startswith(("+++", "---"))]


def test_a_one_field_change_is_a_one_line_diff(cycled: Path) -> None:
    dcx = Runner(cycled)
    body = json.loads((cycled / "proposal.json").read_text())
    body["recommended_decision"]["confidence"] = 0.6
    changed = cycled / "proposal-2.json"
    changed.write_text(json.dumps(body))
    new_ref = dcx.json("propose", "--decision-id", "ttl-2026-12", "--from", str(changed))["data"][
        "proposal"
    ]["packet_ref"]
    files = packet_files(cycled)
    old_ref = next(ref for ref in files if ref.startswith("decision-proposal-") and ref != new_ref)
    lines = _changed_lines(files[old_ref].read_bytes(), files[new_ref].read_bytes())
    # the field's own line, and the ref line that names the new content — nothing else moves
    assert sorted(lines) == sorted(
        [
            '-    "confidence": 0.8,',
            '+    "confidence": 0.6,',
            f'-  "packet_ref": "{old_ref}",',
            f'+  "packet_ref": "{new_ref}",',
        ]
    )
    semantic = dcx.json("diff", old_ref, new_ref)["data"]["changes"]
    assert [c["path"] for c in semantic] == ["recommended_decision.confidence"]


def test_git_sees_a_hand_edit_as_one_changed_line(cycled: Path) -> None:
    """What a reviewer sees in a PR when someone edits a stored packet: exactly the line touched."""
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1"}
    path = next(p for ref, p in packet_files(cycled).items() if ref.startswith("decision-outcome-"))
    edited = path.with_name("edited.json")
    shutil.copy2(path, edited)
    os.chmod(edited, 0o644)
    edited.write_text(
        edited.read_text().replace(
            '"verification_status": "pending"', '"verification_status": "verified"'
        )
    )
    proc = subprocess.run(
        ["git", "diff", "--no-index", "--numstat", str(path), str(edited)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 1  # differences found
    assert proc.stdout.split()[:2] == ["1", "1"]
    assert Runner(cycled)("verify", ok=False).exit_code == 1  # and dcx verify flags the edit


def test_diff_reports_a_record_that_left_as_one_change(cycled: Path) -> None:
    dcx = Runner(cycled)
    before = next(ref for ref in packet_files(cycled) if ref.startswith("decision-source-scan-"))
    after = dcx.json("scan")["data"]["receipts"][0]["receipt_ref"]  # after the commit: nothing new
    changes = dcx.json("diff", before, after)["data"]["changes"]
    removed = [c for c in changes if c["path"].startswith("changes[")]
    assert len(removed) == 5 and all(
        c["change"] == "removed" and set(c["old"]) >= {"change_ref", "revision_ref"}
        for c in removed
    )
    assert {c["path"] for c in changes} - {c["path"] for c in removed} == {
        "status",
        "changed_count",
        "exact_read_count",
        "cursor_before_ref",
        "decision_id",
    }  # completed → no_change; cursor moved; a `dcx scan` receipt belongs to no decision
