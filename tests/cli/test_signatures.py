"""Signed statements end to end (SPEC §18), judged by the libraries, not by dcx.

Oracle: every statement line is checked here with ``cryptography``'s own
Ed25519 verify over the RFC 8785 bytes ``rfc8785.dumps`` computes, against the
public key read from the signer file (itself checked against the key derived
from the private seed by the library); which commands wrote which files comes
from the story itself (the refs ``run_cycle`` returns, the packets on disk).
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from tests.support import signing as oracle
from tests.support.cli import Runner
from tests.support.cycle import D
from tests.support.workspace import FIXED_SIGNING_KEY, packet_files

DC = ".decision-context"
GOAL = "catalog-cache-ttl"


def _verify(root: Path, *args: str) -> tuple[int, dict]:
    result = Runner(root)("verify", "--format", "json", *args, ok=False)
    return result.exit_code, json.loads(result.stdout)["data"]


def _envelope(result) -> dict:
    return json.loads(result.stdout)


def test_every_statement_verifies_with_the_library(cycled: Path) -> None:
    keys = oracle.signers(cycled)
    lines = oracle.statements(cycled)
    assert lines
    for st in lines:
        folder, signer = keys[st["key_id"]]
        public = oracle.unb64(signer["public_key"])
        assert oracle.key_id(public) == st["key_id"] == signer["key_id"]
        assert folder == signer["agent_id"] == st["agent_id"] == "agent-a"
        assert oracle.verifies(public, st), st["command"]
        assert oracle.verifies(public, signer)  # the signer file is self-signed
        assert st["goal_id"] == GOAL and st["schema_version"] == "dcx_statement_v0"
        assert set(st) == {
            "schema_version",
            "agent_id",
            "key_id",
            "command",
            "observed_at",
            "goal_id",
            "materials",
            "products",
            "signature",
        }
    # the signer file holds the public half of this host's private key (the fixed test seed)
    assert [oracle.unb64(doc["public_key"]) for _, doc in keys.values()] == [
        oracle.public_of(FIXED_SIGNING_KEY)
    ]


def test_one_statement_per_writing_command_naming_what_it_wrote(cycled: Path) -> None:
    lines = oracle.statements(cycled)
    # the story (tests.support.cycle.run_cycle): index writes nothing public; each other step signs once
    assert [st["command"] for st in lines] == [
        "prepare",
        "propose",
        "outcome",
        "writeback",
        "commit",
        "feedback",
    ]
    by = {st["command"]: st for st in lines}
    files = packet_files(cycled)
    proposal = next(r for r in files if r.startswith("decision-proposal-"))
    outcome = next(r for r in files if r.startswith("decision-outcome-"))
    evidence = next(r for r in files if r.startswith("decision-evidence-"))
    assert by["propose"]["products"] == [proposal]
    assert evidence in by["propose"]["materials"]  # it bound the evidence it read
    assert by["outcome"]["products"] == [outcome] and proposal in by["outcome"]["materials"]
    event = json.loads((cycled / DC / "events.jsonl").read_text().splitlines()[0])["event_id"]
    assert by["writeback"]["products"] == [event]
    assert event in by["commit"]["materials"]
    # every packet on disk and every event is some statement's product: nothing unsigned
    produced = {ref for st in lines for ref in st["products"]}
    assert set(files) | {event} == produced
    # a statement's materials never repeat its products
    assert all(not set(st["materials"]) & set(st["products"]) for st in lines)


def test_verify_reports_each_packet_and_event_signed(cycled: Path) -> None:
    code, data = _verify(cycled, "--require-signatures")
    assert code == 0, data["problems"]
    sig = data["signatures"]
    total = data["packets_checked"] + data["events_checked"]
    assert (sig["signed"], sig["unsigned"], sig["failed"]) == (total, 0, 0)
    assert sig["required"] is True and sig["statements_checked"] == 6 and sig["signers"] == 1
    key = oracle.key_id(oracle.public_of(FIXED_SIGNING_KEY))
    assert {(i["verdict"], i["signer_agent_id"], i["key_id"]) for i in sig["items"]} == {
        ("signed", "agent-a", key)
    }


def test_private_key_is_0600_and_never_public(cycled: Path) -> None:
    key = cycled / DC / "private" / "signing" / "agent-a.key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert stat.S_IMODE(key.parent.stat().st_mode) == 0o700
    ignored = (cycled / DC / ".gitignore").read_text().split()
    assert "private/" in ignored
    seed_hex = FIXED_SIGNING_KEY.hex()
    for path in (cycled / DC).rglob("*"):
        if path.is_file() and "private" not in path.relative_to(cycled / DC).parts:
            data = path.read_bytes()
            assert FIXED_SIGNING_KEY not in data and seed_hex.encode() not in data, path
            assert oracle.b64(FIXED_SIGNING_KEY).encode() not in data, path


def test_init_and_enable_make_the_agents_keys(tmp_path: Path) -> None:
    root = tmp_path / "goal"
    root.mkdir()
    dcx = Runner(root)
    made = dcx.json("init", "--goal-id", "g", "--agent-id", "agent-x")["data"]["created"]
    pubs = sorted((root / DC / "signers" / "agent-x").glob("*.pub"))
    assert len(pubs) == 1 and f"{DC}/signers/agent-x/{pubs[0].name}" in made
    seed = (root / DC / "private" / "signing" / "agent-x.key").read_bytes()
    assert pubs[0].stem == oracle.key_id(oracle.public_of(seed))
    keys = dcx.json("enable", "--agent", "agent-x", "--agent", "agent-y")["data"]["signing_keys"]
    assert [(k["agent_id"], k["created"]) for k in keys] == [("agent-x", False), ("agent-y", True)]
    # one key per agent on this host: asking again makes none
    again = dcx.json("key", "create", "--agent-id", "agent-y")["data"]
    assert again["created"] is False and again["key_id"] == keys[1]["key_id"]
    listed = dcx.json("key", "signers")["data"]["signers"]
    assert [(r["agent_id"], r["status"], r["this_host"]) for r in listed] == [
        ("agent-x", "active", True),
        ("agent-y", "active", True),
    ]


def test_log_shows_who_signed_from_the_cache_and_says_when_it_has_not_checked(cycled: Path) -> None:
    dcx = Runner(cycled)
    text = dcx("log").stdout
    assert "by agent-a ✓" in text and "(unsigned)" not in text
    (cycled / DC / "private" / "cache" / "statements-verified.txt").unlink()
    text = dcx("log").stdout  # log verifies nothing itself
    assert "by agent-a (signature not checked yet: dcx verify)" in text and "✓" not in text
    assert dcx("verify").exit_code == 0
    assert "by agent-a ✓" in dcx("log").stdout


def test_an_old_goal_without_statements_verifies_with_a_warning(cycled: Path) -> None:
    (cycled / DC / "statements.jsonl").unlink()
    code, data = _verify(cycled)
    assert code == 0, data["problems"]
    total = data["packets_checked"] + data["events_checked"]
    assert data["signatures"]["unsigned"] == total and data["signatures"]["signed"] == 0
    result = Runner(cycled)("verify", "--format", "json")
    assert any(w.startswith(f"unsigned: {total} ") for w in _envelope(result)["warnings"])
    assert "(unsigned)" in Runner(cycled)("log").stdout
    # required: every one a problem naming its file
    code, data = _verify(cycled, "--require-signatures")
    assert code == 1 and len(data["problems"]) == total
    assert all(p["problem"].startswith("unsigned:") for p in data["problems"])


def test_workspace_toml_can_require_signatures(cycled: Path) -> None:
    (cycled / DC / "statements.jsonl").unlink()
    toml = cycled / DC / "workspace.toml"
    toml.write_text(toml.read_text() + "require_signatures = true\n")
    code, data = _verify(cycled)
    assert code == 1 and data["signatures"]["required"] is True
    toml.write_text(toml.read_text().replace("= true", '= "yes"'))
    result = Runner(cycled)("verify", ok=False)
    assert result.exit_code == 2 and "require_signatures must be true or false" in result.stderr


def test_report_counts_signed_unsigned_and_failed(cycled: Path) -> None:
    sig = Runner(cycled).json("report")["data"]["signatures"]
    # the report measures the assembly, proposal and outcome of the one decision
    assert sig == {"signed": 3, "unsigned": 0, "failed": 0}
    assert "signatures: 3 signed, 0 unsigned, 0 failed" in Runner(cycled)("report").stdout
    lines = (cycled / DC / "statements.jsonl").read_text().splitlines()
    kept = [ln for ln in lines if '"command": "propose"' not in ln]
    (cycled / DC / "statements.jsonl").write_text("\n".join(kept) + "\n")
    sig = Runner(cycled).json("report")["data"]["signatures"]
    assert sig == {"signed": 2, "unsigned": 1, "failed": 0}


def test_audit_accepts_signatures_only_in_their_own_fields(cycled: Path) -> None:
    dcx = Runner(cycled)
    assert dcx("audit").exit_code == 0
    st = oracle.statements(cycled)[0]
    # a signature-shaped secret in another field of a statement line, and in an event, is a finding
    with (cycled / DC / "statements.jsonl").open("a") as handle:
        handle.write(json.dumps({**st, "note": st["signature"]}, sort_keys=True) + "\n")
    with (cycled / DC / "events.jsonl").open("a") as handle:
        handle.write(json.dumps({"signature": st["signature"]}) + "\n")
    findings = _envelope(dcx("audit", "--format", "json", ok=False))["data"]["findings"]
    assert sorted((f["file"], f["field"]) for f in findings) == [
        (f"{DC}/events.jsonl", "line 2.signature"),
        (f"{DC}/statements.jsonl", "line 7.note"),
    ]


def test_revoking_a_key_withdraws_what_it_signs_afterwards(cycled: Path) -> None:
    dcx = Runner(cycled)
    key = oracle.key_id(oracle.public_of(FIXED_SIGNING_KEY))
    revoked = dcx.json("key", "revoke", key[:14], "--reason", "host_retired")["data"]
    assert revoked["written"] and revoked["retired_local_key"]
    doc = json.loads((cycled / revoked["file"]).read_text())
    # signed by the key itself: the library verifies it with the signer file's public key
    assert doc["revoked_by_key_id"] == key and oracle.verifies(
        oracle.public_of(FIXED_SIGNING_KEY), doc
    )
    code, data = _verify(cycled)
    assert code == 0, data["problems"]  # what it signed before the revocation still counts
    # someone holding the retired key signs later work with it
    signing_dir = cycled / DC / "private" / "signing"
    (signing_dir / "agent-a.key").write_bytes(FIXED_SIGNING_KEY)
    os.chmod(signing_dir / "agent-a.key", 0o600)
    late = dcx(
        "writeback",
        "--decision-id",
        D,
        "--kind",
        "todo_add",
        "--summary",
        "later work",
        "--observed-at",
        "2026-11-30T09:00:00Z",
        ok=False,
    )
    assert late.exit_code == 0
    code, data = _verify(cycled)
    assert code == 1
    bad = [p for p in data["problems"] if "revoked_signer" in p["problem"]]
    assert bad and all(p["file"] in (f"{DC}/statements.jsonl", f"{DC}/events.jsonl") for p in bad)
    assert data["signatures"]["failed"] == 1


def test_a_compromised_key_withdraws_everything_it_signed(cycled: Path) -> None:
    dcx = Runner(cycled)
    other = dcx.json("key", "create", "--agent-id", "agent-b")["data"]  # another signer of the goal
    key = oracle.key_id(oracle.public_of(FIXED_SIGNING_KEY))
    (cycled / DC / "private" / "signing" / "agent-a.key").rename(cycled / "agent-a.key.bak")
    out = dcx.json("key", "revoke", key, "--reason", "key_compromise", "--agent-id", "agent-b")
    assert out["data"]["revocation"]["revoked_by_key_id"] == other["key_id"]
    code, data = _verify(cycled)
    assert code == 1
    total = data["packets_checked"] + data["events_checked"]
    assert data["signatures"]["failed"] == total and data["signatures"]["signed"] == 0
    assert dcx.json("key", "signers")["data"]["signers"][0]["status"] == "revoked"


def test_a_statement_that_cannot_be_appended_is_a_warning_not_a_lost_write(cycled: Path) -> None:
    import portalocker

    path = cycled / DC / "statements.jsonl"
    before = path.read_bytes()
    with open(path.with_name("statements.jsonl.lock"), "a") as held:  # another writer holds it
        portalocker.lock(held, portalocker.LockFlags.EXCLUSIVE)
        result = Runner(cycled)(
            "writeback", "--decision-id", D, "--kind", "todo_add", "--summary", "x",
            "--wait", "0.2", "--format", "json",
        )  # fmt: skip
        portalocker.unlock(held)
    assert result.exit_code == 0  # the event is written
    assert any("statement not written (lock_busy" in w for w in _envelope(result)["warnings"])
    assert path.read_bytes() == before
    code, data = _verify(cycled)
    assert code == 0 and data["signatures"]["unsigned"] >= 1  # the event reads unsigned


def test_a_torn_statement_tail_is_set_aside_by_the_next_statement(cycled: Path) -> None:
    path = cycled / DC / "statements.jsonl"
    path.write_bytes(path.read_bytes() + b'{"torn')  # a crash mid-append
    result = Runner(cycled)(
        "writeback", "--decision-id", D, "--kind", "todo_add", "--summary", "x", "--format", "json"
    )
    assert result.exit_code == 0
    assert not any("statement not written" in w for w in _envelope(result)["warnings"])
    assert path.read_bytes().endswith(b"\n") and b'{"torn' not in path.read_bytes()
    code, data = _verify(cycled)
    assert code == 0, data["problems"][:3]
