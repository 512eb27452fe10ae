"""`dcx verify` on a full cycle: each kind of tampering is found and named by file;
packets merged in from another workspace of the same goal verify too."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from tests.support import oracles
from tests.support.cycle import D, run_cycle
from tests.support.workspace import copy_example, packet_files

DC = ".decision-context"


def _verify(dcx, root: Path) -> tuple[int, dict[str, Any]]:
    result = dcx("-C", str(root), "verify", "--format", "json")
    return result.exit_code, result.json()["data"]


def _file_of(root: Path, prefix: str) -> Path:
    (path,) = [p for ref, p in packet_files(root).items() if ref.startswith(prefix)]
    return path


def test_a_full_cycle_verifies(dcx, cycled: Path) -> None:
    code, data = _verify(dcx, cycled)
    assert code == 0, data["problems"]
    assert (
        data["packets_checked"] == 13
        and data["events_checked"] == 1
        and data["foreign_key_ids"] == []
    )
    text = dcx("-C", str(cycled), "verify")
    assert text.exit_code == 0 and text.stdout.startswith(
        "ok  13 packets, 1 event, 1 decision index\n"
    )


def test_a_flipped_byte_in_a_decision_packet(dcx, cycled: Path) -> None:
    path = _file_of(cycled, "decision-outcome-")
    os.chmod(path, 0o644)
    data = bytearray(path.read_bytes())
    at = data.index(b"storefront-platform-lead")
    data[at] ^= 0x01  # 's' -> 'r': still valid JSON, different content
    path.write_bytes(bytes(data))
    code, result = _verify(dcx, cycled)
    assert code == 1
    files = {p["file"] for p in result["problems"]}
    assert f"{DC}/packets/outcome/{path.name}" in files
    text = dcx("-C", str(cycled), "verify")
    assert text.exit_code == 1 and path.name in text.stdout


def test_a_deleted_packet_that_others_reference(dcx, cycled: Path) -> None:
    path = _file_of(cycled, "decision-proposal-")
    ref = path.stem
    path.unlink()
    code, result = _verify(dcx, cycled)
    assert code == 1
    missing = [p for p in result["problems"] if ref in p["problem"]]
    files = {p["file"] for p in missing}
    # the outcome and the commit receipt name it, the decision index lists it, the event cites it
    assert any(f.startswith(f"{DC}/packets/outcome/") for f in files)
    assert any(f.startswith(f"{DC}/packets/commit/") for f in files)
    assert f"{DC}/decisions/{D}.jsonl" in files
    assert f"{DC}/events.jsonl" in files
    assert all("does not exist" in p["problem"] for p in missing)
    # and every signed statement that wrote or read it (SPEC §18): propose wrote it; outcome,
    # writeback, commit and feedback read it
    stated = [p for p in missing if p["file"] == f"{DC}/statements.jsonl"]
    assert all("statement_ref_missing" in p["problem"] for p in stated)
    assert len(stated) == 5
    assert len(result["problems"]) == len(missing) == 4 + len(stated)


def test_a_packet_moved_to_the_wrong_kind_folder(dcx, cycled: Path) -> None:
    path = _file_of(cycled, "decision-evidence-")
    wrong = path.parents[1] / "proposal" / path.name
    shutil.move(path, wrong)
    code, result = _verify(dcx, cycled)
    assert code == 1
    by_file = {p["file"]: p["problem"] for p in result["problems"]}
    assert f"{DC}/packets/proposal/{path.name}" in by_file  # the stray file itself
    linked = [
        p
        for p in result["problems"]
        if f"{path.stem}, which sits in packets/proposal/ instead of packets/evidence/"
        in p["problem"]
    ]
    assert linked, result["problems"]  # and every packet that names it says where it went


def test_a_forged_event_id(dcx, cycled: Path) -> None:
    events = cycled / DC / "events.jsonl"
    event = json.loads(events.read_text())
    event["summary"] = "TTL rolled back to 900 s"  # a different story under the old id
    events.write_text(json.dumps(event, sort_keys=True) + "\n")
    code, result = _verify(dcx, cycled)
    assert code == 1
    assert [p["problem"] for p in result["problems"]] == [
        "line 1: event id does not recompute (forged or edited)"
    ]
    forged = dict(event, event_id="dcx-event-" + "0" * 32)  # a made-up id of the right shape
    events.write_text(json.dumps(forged, sort_keys=True) + "\n")
    code, result = _verify(dcx, cycled)
    assert code == 1 and result["problems"][0]["file"] == f"{DC}/events.jsonl"
    assert result["problems"][0]["field"] == "line 1.event_id"


def test_packets_of_another_workspace_of_the_goal_merge_and_verify(
    dcx, cycled: Path, tmp_path: Path
) -> None:
    other_key = bytes(range(100, 132))
    other = copy_example(tmp_path / "other-host", key=other_key)
    run_cycle(other, "ttl-2026-12-b", edit_authority=False, env={"HOME": str(tmp_path / "home")})
    # what a git merge of the two branches does: union of packet files and log lines
    for src in sorted((other / DC / "packets").glob("*/*.json")):
        dest = cycled / DC / "packets" / src.parent.name / src.name
        dest.parent.mkdir(parents=True, exist_ok=True)
        if not dest.exists():
            shutil.copy2(src, dest)
    shutil.copy2(other / DC / "decisions" / "ttl-2026-12-b.jsonl", cycled / DC / "decisions")
    with open(cycled / DC / "events.jsonl", "ab") as log:
        log.write((other / DC / "events.jsonl").read_bytes())
    code, result = _verify(dcx, cycled)
    assert code == 0, result["problems"]
    assert result["packets_checked"] == 26 and result["events_checked"] == 2
    assert result["foreign_key_ids"] == [oracles.key_id(other_key)]
    log = dcx("-C", str(cycled), "log", "--format", "json").json()["data"]["decisions"]
    assert sorted(r["decision_id"] for r in log) == [D, "ttl-2026-12-b"]
