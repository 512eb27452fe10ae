"""Forgeries and bad input against signed statements (SPEC §18), tried as an attacker would.

Each attack writes what anyone with write access to the repository could write
— packets with recomputed refs (``tests.support.oracles``), events with
recomputed ids, statement lines and signer files signed with keys the attacker
holds (``tests.support.signing``) — and checks what `dcx verify` (and, with
``require_signatures``, `dcx commit` and `dcx review`) says: a named problem,
exit 1, never 5, and nothing in the public tree rewritten.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support import oracles
from tests.support import signing as forge
from tests.support.cli import Runner
from tests.support.cycle import D, prepared, seed_evidence, through_writeback
from tests.support.workspace import FIXED_SIGNING_KEY, packet_files, tree_bytes

DC = ".decision-context"
GOAL = "catalog-cache-ttl"
ATTACKER = bytes(range(100, 132))  # a key the attacker holds


def _verify(root: Path, *args: str) -> tuple[int, dict]:
    result = Runner(root)("verify", "--format", "json", *args, ok=False)
    assert result.exit_code in (0, 1), result.stdout + result.stderr  # never 5
    return result.exit_code, json.loads(result.stdout)["data"]


def _problems(data: dict, code: str) -> list[dict]:
    return [p for p in data["problems"] if code in p["problem"]]


def _public(root: Path) -> dict[str, bytes]:
    return {
        name: data
        for name, data in tree_bytes(root / DC).items()
        if not name.startswith("private/") and not name.endswith(".lock")
    }


def _copy_packet(root: Path, prefix: str, **changes) -> tuple[str, dict]:
    """A stored packet copied with ``changes`` and its ref recomputed, stored and indexed like dcx's."""
    src = next(p for ref, p in packet_files(root).items() if ref.startswith(prefix))
    packet = {**json.loads(src.read_text()), **changes}
    ref = oracles.packet_ref(prefix.rstrip("-"), packet, "packet_ref")
    packet["packet_ref"] = ref
    kind = src.parent.name
    (src.parent / f"{ref}.json").write_bytes(forge.pretty(packet))
    with (root / DC / "decisions" / f"{packet['decision_id']}.jsonl").open("a") as handle:
        handle.write(
            json.dumps({"kind": kind, "observed_at": packet["observed_at"], "ref": ref}) + "\n"
        )
    return ref, packet


def _forged_event(root: Path, **changes) -> str:
    event = {**json.loads((root / DC / "events.jsonl").read_text().splitlines()[0]), **changes}
    event["event_id"] = oracles.event_id(event)
    with (root / DC / "events.jsonl").open("a") as handle:
        handle.write(json.dumps(event, sort_keys=True) + "\n")
    return event["event_id"]


def _fixed_key_id() -> str:
    return forge.key_id(forge.public_of(FIXED_SIGNING_KEY))


# -- the forgery suite ---------------------------------------------------------------------


def test_a_copied_proposal_with_another_agent_id_and_a_recomputed_ref(cycled: Path) -> None:
    """The issue's attack: it verified ok and `dcx log` said "by agent-b". Now it is unsigned."""
    ref, _ = _copy_packet(
        cycled,
        "decision-proposal-",
        agent_id="agent-b",
        proposed_by="agent-b",
        recommended_decision={
            **json.loads(
                next(
                    p for r, p in packet_files(cycled).items() if r.startswith("decision-proposal-")
                ).read_text()
            )["recommended_decision"],
            "confidence": 0.99,
        },
    )
    code, data = _verify(cycled)
    assert code == 0  # an unsigned packet is a warning: old goals still verify
    item = next(i for i in data["signatures"]["items"] if i["ref"] == ref)
    assert item["verdict"] == "unsigned" and item["agent_id"] == "agent-b"
    assert "by agent-b (unsigned)" in Runner(cycled)("log").stdout
    code, data = _verify(cycled, "--require-signatures")
    assert code == 1 and [p["ref"] for p in _problems(data, "unsigned")] == [ref]
    # claiming it in agent-a's own statement breaks agent-a's signature
    lines = (cycled / DC / "statements.jsonl").read_text().splitlines()
    st = json.loads(lines[1])
    assert st["command"] == "propose"
    st["products"] = sorted([*st["products"], ref])
    lines[1] = json.dumps(st, sort_keys=True)
    (cycled / DC / "statements.jsonl").write_text("\n".join(lines) + "\n")
    code, data = _verify(cycled)
    assert code == 1
    assert _problems(data, "line 2: bad_signature")
    assert next(i for i in data["signatures"]["items"] if i["ref"] == ref)["verdict"] == (
        "bad_signature"
    )


def test_the_attacker_signs_it_as_agent_b_with_a_key_of_its_own(cycled: Path) -> None:
    ref, _ = _copy_packet(cycled, "decision-proposal-", agent_id="agent-b", proposed_by="agent-b")
    st = forge.statement(
        ATTACKER, agent_id="agent-b", goal_id=GOAL, command="propose", products=[ref]
    )
    forge.append(cycled, st)
    code, data = _verify(cycled)
    assert code == 1 and _problems(data, "unknown_signer")  # no signer file holds that key
    # with a signer file of its own the signature holds: a new signer is a new file in the diff,
    # and commit and review accept only the agents the profile enables (see below)
    forge.signer_file(cycled, ATTACKER, agent_id="agent-b", goal_id=GOAL)
    code, data = _verify(cycled)
    assert code == 0, data["problems"]
    item = next(i for i in data["signatures"]["items"] if i["ref"] == ref)
    assert (item["verdict"], item["signer_agent_id"]) == ("signed", "agent-b")
    signers = Runner(cycled).json("key", "signers")["data"]["signers"]
    assert [(s["agent_id"], s["this_host"]) for s in signers] == [
        ("agent-a", True),
        ("agent-b", False),
    ]


def test_signing_someone_elses_packet_is_a_signer_mismatch(cycled: Path) -> None:
    ref, _ = _copy_packet(cycled, "decision-proposal-", agent_id="agent-b", proposed_by="agent-b")
    forge.signer_file(cycled, ATTACKER, agent_id="agent-x", goal_id=GOAL)
    forge.append(
        cycled,
        forge.statement(
            ATTACKER, agent_id="agent-x", goal_id=GOAL, command="propose", products=[ref]
        ),
    )
    code, data = _verify(cycled)
    assert code == 1
    (problem,) = _problems(data, "signer_mismatch")
    assert (
        problem["ref"] == ref
        and "agent-b" in problem["problem"]
        and "agent-x" in problem["problem"]
    )


def test_a_forged_event(cycled: Path) -> None:
    forged = _forged_event(cycled, summary="TTL rolled back to 30 s")
    code, data = _verify(cycled, "--require-signatures")
    assert code == 1 and [p["ref"] for p in _problems(data, "unsigned")] == [forged]
    assert _problems(data, "unsigned")[0]["file"] == f"{DC}/events.jsonl"
    # signed in agent-a's name with a key that is not agent-a's
    forge.append(
        cycled,
        forge.statement(
            ATTACKER,
            agent_id="agent-a",
            goal_id=GOAL,
            command="writeback",
            products=[forged],
            key=_fixed_key_id(),  # it even names agent-a's key id
        ),
    )
    code, data = _verify(cycled)
    assert code == 1
    assert next(i for i in data["signatures"]["items"] if i["ref"] == forged)["verdict"] == (
        "bad_signature"
    )


def test_a_statement_replayed_from_another_goal(cycled: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    dcx = Runner(other)
    dcx("init", "--goal-id", "another-goal", "--agent-id", "agent-a")
    seed_evidence(other, "d")
    dcx("propose", "--decision-id", "d", "--from", str(cycled / "proposal.json"))
    line = (other / DC / "statements.jsonl").read_text()
    assert json.loads(line)["goal_id"] == "another-goal"
    (cycled / DC / "statements.jsonl").write_text(
        (cycled / DC / "statements.jsonl").read_text() + line
    )
    # and the other goal's signer file, copied alongside
    for pub in (other / DC / "signers" / "agent-a").glob("*.pub"):
        (cycled / DC / "signers" / "agent-a" / pub.name).write_bytes(pub.read_bytes())
    code, data = _verify(cycled)
    assert code == 1
    assert _problems(data, "line 7: statement_other_goal")
    assert [p["file"] for p in _problems(data, "signer_invalid")] == [
        f"{DC}/signers/agent-a/{pub.name}"
    ]


def test_a_key_swapped_under_the_same_file_name(cycled: Path) -> None:
    path = cycled / DC / "signers" / "agent-a" / f"{_fixed_key_id()}.pub"
    doc = json.loads(path.read_text())
    # the attacker's public key under agent-a's key id: the id is a fingerprint, it does not match
    swapped = forge.signed(ATTACKER, {**doc, "public_key": forge.b64(forge.public_of(ATTACKER))})
    path.write_bytes(forge.pretty(swapped))
    forged = _forged_event(cycled, summary="a forged approval")
    forge.append(
        cycled,
        forge.statement(
            ATTACKER,
            agent_id="agent-a",
            goal_id=GOAL,
            command="writeback",
            products=[forged],
            key=_fixed_key_id(),
        ),
    )
    code, data = _verify(cycled)
    assert code == 1
    (bad,) = _problems(data, "signer_invalid")
    assert "fingerprint" in bad["problem"] and bad["file"].endswith(f"{_fixed_key_id()}.pub")
    sig = data["signatures"]
    # every packet and event: its statements name a key no valid signer file holds now
    assert sig["signed"] == 0 and sig["failed"] == data["packets_checked"] + data["events_checked"]
    assert {i["verdict"] for i in sig["items"]} == {"unknown_signer"}


# -- commit and review under require_signatures ----------------------------------------------


def _require(root: Path) -> None:
    toml = root / DC / "workspace.toml"
    toml.write_text(toml.read_text() + "require_signatures = true\n")


def test_commit_refuses_a_chain_an_enabled_agent_did_not_sign(dcx, example: Path) -> None:
    prepared(dcx, example)
    through_writeback(dcx, example)
    forged, _ = _copy_packet(example, "decision-outcome-", review_at="2027-06-01T00:00:00Z")
    refs = [
        r
        for r in packet_files(example)
        if r.startswith(("decision-evidence-", "decision-proposal-"))
    ]
    run = Runner(example)
    event = run.json(
        "writeback",
        "--decision-id",
        D,
        "--kind",
        "validation",
        "--summary",
        "forged outcome",
        *[a for r in [*refs, forged] for a in ("--artifact", r)],
    )["data"]["event"]["event_id"]
    _require(example)
    before = _public(example)
    refused = run("commit", "--decision-id", D, "--event-id", event, "--format", "json", ok=False)
    assert refused.exit_code == 1
    error = json.loads(refused.stdout)["error"]
    assert error["code"] == "chain_unsigned" and forged in error["message"]
    assert _public(example) == before  # nothing written
    # the rule, not something else, refused it: without it the same commit goes through
    toml = example / DC / "workspace.toml"
    toml.write_text(toml.read_text().replace("require_signatures = true\n", ""))
    assert run("commit", "--decision-id", D, "--event-id", event, ok=False).exit_code == 0


def test_commit_accepts_the_signed_chain_when_signatures_are_required(dcx, example: Path) -> None:
    prepared(dcx, example)
    event = through_writeback(dcx, example)
    _require(example)
    assert Runner(example)("commit", "--decision-id", D, "--event-id", event).exit_code == 0


def test_a_signer_the_profile_does_not_enable_does_not_count(example: Path, dcx) -> None:
    from dcx.core.errors import Refused
    from dcx.core.workspace import Workspace
    from dcx.state.signatures import require_chain

    prepared(dcx, example)
    through_writeback(dcx, example)
    _require(example)
    outcome = json.loads(
        next(
            p for r, p in packet_files(example).items() if r.startswith("decision-outcome-")
        ).read_text()
    )
    ws = Workspace(example)
    require_chain(ws, {"outcome": outcome}, ["agent-a"])  # signed by agent-a: passes
    with pytest.raises(Refused) as refused:
        require_chain(ws, {"outcome": outcome}, ["agent-b"])
    assert refused.value.code == "chain_unsigned" and "does not enable" in refused.value.message


def test_review_refuses_an_unsigned_proposal_when_signatures_are_required(
    dcx, example: Path
) -> None:
    prepared(dcx, example)
    run = Runner(example)
    run("propose", "--decision-id", D, "--from", str(example / "proposal.json"))
    forged, _ = _copy_packet(
        example,
        "decision-proposal-",
        observed_at="2026-11-29T18:30:00Z",
        review_at="2027-02-01T00:00:00Z",
    )
    gate = run.json(
        "gate",
        "--decision-id",
        D,
        "--approve",
        "--by",
        "storefront-platform-lead",
        "--summary",
        "approve",
        "--proposal",
        forged,
    )["data"]["event"]["event_id"]
    _require(example)
    before = _public(example)
    refused = run("review", "--decision-id", D, "--gate-event", gate, "--format", "json", ok=False)
    assert refused.exit_code == 1, refused.stdout
    error = json.loads(refused.stdout)["error"]
    assert error["code"] == "chain_unsigned" and forged in error["message"]
    assert _public(example) == before


# -- bad input: each a named problem, exit 1, nothing rewritten --------------------------------


def _edit_statement(root: Path, index: int, edit) -> None:
    path = root / DC / "statements.jsonl"
    lines = path.read_text().splitlines()
    lines[index] = edit(lines[index])
    path.write_text("\n".join(lines) + "\n")


def _sign_with_fixed(**fields) -> dict:
    base = {"agent_id": "agent-a", "goal_id": GOAL, "command": "writeback"}
    return forge.statement(FIXED_SIGNING_KEY, **{**base, **fields})


BAD_INPUT = {
    "truncated": (
        lambda root: _edit_statement(root, 2, lambda ln: ln[: len(ln) // 2]),
        "line 3: statement_malformed",
    ),
    "tampered": (
        lambda root: _edit_statement(
            root, 2, lambda ln: ln.replace('"command": "outcome"', '"command": "propose"')
        ),
        "line 3: bad_signature",
    ),
    "signature over other bytes": (
        lambda root: _edit_statement(
            root,
            2,
            lambda ln: json.dumps(
                {
                    **json.loads(ln),
                    "signature": forge.signed(FIXED_SIGNING_KEY, {"other": "bytes"})["signature"],
                },
                sort_keys=True,
            ),
        ),
        "line 3: bad_signature",
    ),
    "reordered products": (
        lambda root: _edit_statement(
            root,
            0,
            lambda ln: json.dumps(
                {**json.loads(ln), "products": json.loads(ln)["products"][::-1]}, sort_keys=True
            ),
        ),
        "line 1: statement_malformed",
    ),
    "a signer file that is not a public key": (
        lambda root: (root / DC / "signers" / "agent-a" / f"{_fixed_key_id()}.pub").write_text(
            "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5 not a dcx signer file\n"
        ),
        "signer_invalid",
    ),
    "a public key that is not 32 bytes": (
        lambda root: (root / DC / "signers" / "agent-a" / f"{_fixed_key_id()}.pub").write_bytes(
            forge.pretty(
                {
                    **json.loads(
                        (root / DC / "signers" / "agent-a" / f"{_fixed_key_id()}.pub").read_text()
                    ),
                    "public_key": forge.b64(b"\x01" * 31),
                }
            )
        ),
        "signer_invalid",
    ),
    "two keys with one id": (
        lambda root: forge.signer_file(root, FIXED_SIGNING_KEY, agent_id="agent-z", goal_id=GOAL),
        "signer_key_id_duplicate",
    ),
    "a statement naming a ref that does not exist": (
        lambda root: forge.append(
            root, _sign_with_fixed(products=["decision-proposal-" + "0" * 32])
        ),
        "line 7: statement_ref_missing",
    ),
    "a statement naming an event that does not exist": (
        lambda root: forge.append(root, _sign_with_fixed(products=["dcx-event-" + "0" * 32])),
        "line 7: statement_ref_missing",
    ),
    "a statement naming what is neither a ref nor an event id": (
        # a well-signed line whose product is a token, not a name: a credential in a name's
        # place (here a Mailgun-shaped key) is refused by the shape before any signature check
        lambda root: forge.append(
            root, _sign_with_fixed(products=["key-" + "0123456789abcdef" * 2])
        ),
        "line 7: statement_malformed",
    ),
    "a statement from the future": (
        lambda root: forge.append(
            root,
            _sign_with_fixed(
                products=[next(iter(packet_files(root)))], observed_at="2999-01-01T00:00:00Z"
            ),
        ),
        "line 7: statement_from_future",
    ),
    "a stray file in signers/": (
        lambda root: (root / DC / "signers" / "agent-a" / "notes.txt").write_text("hello\n"),
        "signer_file_unexpected",
    ),
    "a revocation nobody signed": (
        lambda root: (root / DC / "signers" / "agent-a" / f"{_fixed_key_id()}.revoked").write_bytes(
            forge.pretty(
                forge.signed(
                    ATTACKER,
                    {
                        "schema_version": "dcx_signer_revocation_v0",
                        "goal_id": GOAL,
                        "agent_id": "agent-a",
                        "key_id": _fixed_key_id(),
                        "reason_code": "key_compromise",
                        "revoked_at": "2026-11-29T18:00:00Z",
                        "revoked_by_agent_id": "agent-a",
                        "revoked_by_key_id": _fixed_key_id(),
                    },
                )
            )
        ),
        "bad_revocation",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUT))
def test_bad_input_is_a_named_problem_and_nothing_is_rewritten(cycled: Path, case: str) -> None:
    spoil, expected = BAD_INPUT[case]
    spoil(cycled)
    before = _public(cycled)
    code, data = _verify(cycled)
    assert code == 1 and _problems(data, expected), data["problems"]
    text = Runner(cycled)("verify", ok=False)
    assert text.exit_code == 1 and "Traceback" not in text.stdout + text.stderr
    assert _public(cycled) == before
    # log and report still answer (they read; they do not judge the tree)
    assert Runner(cycled)("log", ok=False).exit_code == 0
    assert Runner(cycled)("report", ok=False).exit_code in (0, 1)


def test_a_revoked_signer_file_gone_and_a_revocation_the_key_signed(cycled: Path) -> None:
    """A valid revocation verifies with the library against the revoked key's signer file."""
    Runner(cycled)("key", "revoke", _fixed_key_id(), "--reason", "host_retired")
    path = cycled / DC / "signers" / "agent-a" / f"{_fixed_key_id()}.revoked"
    assert forge.verifies(forge.public_of(FIXED_SIGNING_KEY), json.loads(path.read_text()))
    os.remove(cycled / DC / "signers" / "agent-a" / f"{_fixed_key_id()}.pub")
    code, data = _verify(cycled)
    assert code == 1 and _problems(data, "bad_revocation") and _problems(data, "unknown_signer")
