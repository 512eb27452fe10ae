"""`dcx redact`: a secret that got into a packet is audited, redacted, and the rest of the chain
still verifies (issue 12 §4).

The secret is planted as a dcx without the v3 entropy rule would have let it
in (that one rule off while propose, outcome and writeback run); everything
after is the real CLI with the whole detector.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dcx.core import public
from tests.support.cli import Runner
from tests.support.cycle import QUERY, QUERY_SUMMARY, D
from tests.support.workspace import copy_example

SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ9vT3kLm8"  # generated shape of an AWS secret key


@pytest.fixture
def leaked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, dict[str, str]]:
    root = copy_example(tmp_path / "example")
    dcx = Runner(root)
    dcx("index")
    asm = dcx.json(
        "prepare",
        "--decision-id",
        D,
        "--auto-rebase",
        "--query",
        QUERY,
        "--query-summary",
        QUERY_SUMMARY,
    )["data"]["assembly"]
    body = json.loads((root / "proposal.json").read_text())
    body["recommended_decision"]["rationale"] = f"the key {SECRET} was pasted here"
    (root / "leaky.json").write_text(json.dumps(body))
    with monkeypatch.context() as patch:
        patch.setattr(public, "_bare_secret", lambda text: None)
        proposal = dcx.json("propose", "--decision-id", D, "--from", str(root / "leaky.json"))
        outcome = dcx.json("outcome", "--decision-id", D, "--from", str(root / "outcome.json"))
        event = dcx.json(
            "writeback", "--decision-id", D, "--kind", "validation", "--summary", "TTL kept at 90 s"
        )
    refs = {
        "assembly": asm["assembly_ref"],
        "evidence": asm["evidence"]["packet_ref"],
        "proposal": proposal["data"]["proposal"]["packet_ref"],
        "outcome": outcome["data"]["outcome"]["packet_ref"],
        "event": event["data"]["event"]["event_id"],
    }
    return root, refs


def test_plant_audit_redact_verify(leaked) -> None:
    root, refs = leaked
    dcx = Runner(root)
    path = root / ".decision-context" / "packets" / "proposal" / f"{refs['proposal']}.json"
    assert SECRET in path.read_text()

    audit = dcx("audit", "--format", "json", ok=False)
    assert audit.exit_code == 1
    flagged = {(f["file"], f["field"]) for f in json.loads(audit.stdout)["data"]["findings"]}
    assert (
        f".decision-context/packets/proposal/{refs['proposal']}.json",
        "recommended_decision.rationale",
    ) in flagged
    assert SECRET not in audit.stdout

    original = path.read_bytes()
    done = dcx.json("redact", refs["proposal"][:26], "--reason", "leaked_credential")["data"]
    stub = done["stub"]
    assert done["redacted"] is True
    assert SECRET.encode() not in path.read_bytes()
    import blake3

    assert stub["removed_blake3"] == "blake3-" + blake3.blake3(original).hexdigest()[:32]
    assert stub["removed_size"] == len(original)
    assert {k: stub[k] for k in ("redacted_ref", "kind", "goal_id", "decision_id")} == {
        "redacted_ref": refs["proposal"],
        "kind": "proposal",
        "goal_id": "catalog-cache-ttl",
        "decision_id": D,
    }
    assert dcx.json("redact", refs["proposal"], "--reason", "again")["data"]["redacted"] is False

    verify = dcx.json("verify")["data"]
    assert verify["problems"] == []
    assert [r["ref"] for r in verify["redacted"]] == [refs["proposal"]]
    assert "redacted" in dcx("verify").stdout
    assert dcx("audit").exit_code == 0

    shown = dcx("show", refs["proposal"]).stdout
    assert "redacted" in shown and "leaked_credential" in shown
    assert (
        json.loads(dcx("show", refs["proposal"], "--format", "json").stdout)["schema_version"]
        == "dcx_redacted_v0"
    )
    assert "redacted (leaked_credential)" in dcx("log").stdout
    clean = dcx.json("propose", "--decision-id", D, "--from", str(root / "proposal.json"))["data"][
        "proposal"
    ]
    diff = dcx("diff", refs["proposal"], clean["packet_ref"], ok=False)
    assert diff.exit_code == 1 and "redacted" in diff.stderr

    commit = dcx(
        "commit", "--decision-id", D, "--event-id", refs["event"], "--format", "json", ok=False
    )
    assert commit.exit_code == 1
    assert json.loads(commit.stdout)["error"]["code"] == "chain_redacted"


def test_feedback_says_redacted_and_verify_still_checks_the_rest(leaked) -> None:
    root, refs = leaked
    dcx = Runner(root)
    dcx("redact", refs["outcome"], "--reason", "wrong_goal")
    feedback = dcx("feedback", "--decision-id", D, "--format", "json", ok=False)
    assert feedback.exit_code == 1
    error = json.loads(feedback.stdout)["error"]
    assert error["code"] == "packet_redacted" and "redacted" in error["message"]
    # a broken link elsewhere is still found beside the redaction
    evidence = root / ".decision-context" / "packets" / "evidence" / f"{refs['evidence']}.json"
    evidence.chmod(0o644)
    evidence.unlink()
    verify = dcx("verify", "--format", "json", ok=False)
    data = json.loads(verify.stdout)["data"]
    assert verify.exit_code == 1 and [r["ref"] for r in data["redacted"]] == [refs["outcome"]]
    assert any(refs["evidence"] in p["problem"] for p in data["problems"])


def test_redact_bad_input(leaked) -> None:
    root, refs = leaked
    dcx = Runner(root)
    bad = dcx("redact", refs["proposal"], "--reason", "not a token", ok=False)
    assert bad.exit_code == 2 and "--reason" in bad.stderr
    missing = dcx("redact", "decision-proposal-" + "0" * 32, "--reason", "x", ok=False)
    assert missing.exit_code == 1
