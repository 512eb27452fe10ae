from __future__ import annotations

import json
import os
from pathlib import Path

import pytest


def _manifest(dcx, root: Path) -> tuple[str, Path]:
    result = dcx("-C", str(root), "sources", "--write", "--format", "json")
    assert result.exit_code == 0, result.stderr
    ref = result.json()["data"]["manifest"]["manifest_ref"]
    return ref, root / ".decision-context" / "packets" / "manifest" / f"{ref}.json"


def test_packets_are_pretty_sorted_read_only_and_write_once(dcx, example: Path) -> None:
    ref, path = _manifest(dcx, example)
    data = path.read_bytes()
    assert data.endswith(b"}\n") and b'\n  "enabled_source_count": 1,\n' in data
    assert path.stat().st_mode & 0o777 == 0o444
    again, _ = _manifest(dcx, example)
    assert again == ref and path.read_bytes() == data


def test_manifest_snapshot_never_holds_locator(dcx, example: Path, snapshot_json) -> None:
    result = dcx("-C", str(example), "sources", "--format", "json")
    assert "docs" not in json.dumps(result.json()["data"]["manifest"]["sources"][0]).replace(
        "source:authority:docs", ""
    )
    assert "include" not in result.stdout
    assert result.json() == snapshot_json


def test_show_json_prints_stored_bytes(dcx, example: Path) -> None:
    ref, path = _manifest(dcx, example)
    shown = dcx("-C", str(example), "show", ref, "--format", "json")
    assert shown.exit_code == 0
    assert shown.stdout.encode() == path.read_bytes()


def test_show_accepts_unique_prefix_like_git(dcx, example: Path) -> None:
    ref, _ = _manifest(dcx, example)
    hex_part = ref.rsplit("-", 1)[1]
    for prefix in (ref[:30], hex_part[:6]):
        result = dcx("-C", str(example), "show", prefix)
        assert result.exit_code == 0
        assert ref in result.stdout
    missing = dcx("-C", str(example), "show", "ffffffffff")
    assert missing.exit_code == 2 and "no packet or event matches" in missing.stderr


@pytest.mark.parametrize("edit", ["flip_byte", "reformat", "rename"])
def test_hand_edited_packet_fails_show_and_verify(dcx, example: Path, edit: str) -> None:
    ref, path = _manifest(dcx, example)
    os.chmod(path, 0o644)
    if edit == "flip_byte":
        path.write_bytes(path.read_bytes().replace(b'"source_count": 1', b'"source_count": 2'))
    elif edit == "reformat":
        path.write_text(json.dumps(json.loads(path.read_text())))
    else:
        path.rename(path.with_name("decision-source-manifest-" + "0" * 32 + ".json"))
        ref = "decision-source-manifest-" + "0" * 32
    shown = dcx("-C", str(example), "show", ref)
    assert shown.exit_code == 1
    assert "dcx verify" in shown.stderr
    verified = dcx("-C", str(example), "verify", "--format", "json")
    assert verified.exit_code == 1
    problems = verified.json()["data"]["problems"]
    # the statement of `sources --write` that wrote it (SPEC §18) names a ref now gone
    stated = [p for p in problems if p["file"] == ".decision-context/statements.jsonl"]
    problems = [p for p in problems if p not in stated]
    assert [p["ref"] for p in problems] == [ref]
    assert problems[0]["file"].startswith(".decision-context/packets/manifest/")
    if edit == "rename":
        assert stated and all("statement_ref_missing" in p["problem"] for p in stated)
    else:
        assert stated == []


def test_verify_clean_example(dcx, example: Path) -> None:
    _manifest(dcx, example)
    result = dcx("-C", str(example), "verify")
    assert result.exit_code == 0 and "ok  1 packet, 0 events" in result.stdout


def test_verify_repair_moves_torn_fragment(dcx, example: Path) -> None:
    events = example / ".decision-context" / "events.jsonl"
    events.write_bytes(b'{"b":')
    assert dcx("-C", str(example), "verify").exit_code == 1
    repaired = dcx("-C", str(example), "verify", "--repair", "--format", "json")
    assert repaired.exit_code == 0
    assert repaired.json()["data"]["repaired"] == [".decision-context/events.jsonl"]
    assert events.read_bytes() == b""
    fragments = list((example / ".decision-context" / "private" / "log").glob("torn-*"))
    assert [f.read_bytes() for f in fragments] == [b'{"b":']


def test_key_missing_with_packets_is_exit_3(dcx, example: Path) -> None:
    _manifest(dcx, example)
    (example / ".decision-context" / "private" / "key").unlink()
    result = dcx("-C", str(example), "sources", "--write")
    assert result.exit_code == 3
    assert "dcx key import" in result.stderr


def test_key_created_on_first_use_when_no_packets(dcx, example: Path) -> None:
    (example / ".decision-context" / "private" / "key").unlink()
    assert dcx("-C", str(example), "sources", "--write").exit_code == 0
    assert len((example / ".decision-context" / "private" / "key").read_bytes()) == 32


def test_key_export_import_round_trip(dcx, example: Path, tmp_path: Path) -> None:
    exported = dcx("-C", str(example), "key", "export").stdout.strip()
    assert exported == bytes(range(32)).hex()
    other = tmp_path / "other"
    other.mkdir()
    dcx("-C", str(other), "init", "--goal-id", "catalog-cache-ttl")
    keyfile = tmp_path / "goal.key"
    keyfile.write_text(exported)
    refused = dcx("-C", str(other), "key", "import", str(keyfile))
    assert refused.exit_code == 2 and "--force" in refused.stderr
    assert dcx("-C", str(other), "key", "import", str(keyfile), "--force").exit_code == 0
    assert (other / ".decision-context" / "private" / "key").read_bytes() == bytes(range(32))


def test_key_import_takes_a_copy_of_private_key_and_refuses_binary_junk(
    dcx, example: Path, tmp_path: Path
) -> None:
    """A user who copies another host's private/key (32 raw bytes) gets it installed; other bytes are a
    one-line input error, never an internal error (found trying a second host by hand)."""
    other = tmp_path / "other"
    other.mkdir()
    (other / ".decision-context").mkdir()
    (other / ".decision-context" / "workspace.toml").write_text(
        (example / ".decision-context" / "workspace.toml").read_text()
    )
    raw = tmp_path / "key.copy"
    raw.write_bytes((example / ".decision-context" / "private" / "key").read_bytes())
    assert dcx("-C", str(other), "key", "import", str(raw)).exit_code == 0
    assert (other / ".decision-context" / "private" / "key").read_bytes() == bytes(range(32))
    junk = tmp_path / "junk.key"
    junk.write_bytes(b"\xa7\x00\xff" * 5)
    refused = dcx("-C", str(other), "key", "import", str(junk), "--force")
    assert refused.exit_code == 2
    assert (
        refused.stderr.count("\n") <= 2
        and "64 hex digits" in refused.stderr
        and "Traceback" not in refused.stderr
    )
