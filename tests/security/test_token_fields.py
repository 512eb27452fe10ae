"""Token-typed fields pass the same detector as free text (SPEC §3.4 v4).

The attack: a credential given where dcx expects an id — a decision id (which
also becomes a file name, ``decisions/<id>.jsonl``), an agent id, ``--by``,
``accepted_by``, option, objective, alternative and transition ids, a source
id, a todo id. Each value below is a labelled shape of a credential family of
SPEC §3.4 (never a real one). Every command must stop with exit 2
``unsafe_public_text`` naming the field, and the value must appear in no file
name and no file's bytes under the goal afterwards (the oracle is a byte
search of the whole tree).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cycle import OUTCOME, PROPOSAL, D

# lower case (a decision id is [a-z0-9][a-z0-9._-]*), each a shape of one family
GITHUB = "ghp_" + "k3j9x2m4q8w7e1r5t6y0u2i3o4p5a6s7d8f9"
OPENAI = "sk-proj-" + "q2w3e4r5t6y7u8i9o0p1a2s3d4f5g6h7j8k9l0z1"
SLACK = "xoxb-123456789012-123456789012-" + "abcdefghijklmnopqrstuvwx"
GITLAB = "glpat-" + "x7y8z9a1b2c3d4e5f6g7"
AWS = "AKIA" + "QX7Z3K9M2P4W8R1T"  # upper case: an agent id may be


def _tree(root: Path) -> list[tuple[str, bytes]]:
    return [
        (p.relative_to(root).as_posix(), p.read_bytes() if p.is_file() else b"")
        for p in sorted(root.rglob("*"))
    ]


def _write(tmp_path: Path, name: str, value: dict) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(value))
    return str(path)


def _edited(body: dict, path: list, value: str) -> dict:
    copy = json.loads(json.dumps(body))
    here = copy
    for step in path[:-1]:
        here = here[step]
    here[path[-1]] = value
    return copy


def cases(tmp_path: Path) -> list[tuple[str, list[str], str, str]]:
    """(name, argv, secret, the field the error must name)."""
    write = lambda name, body: _write(tmp_path, name, body)  # noqa: E731
    return [
        (
            "decision_id_prepare",
            ["prepare", "--decision-id", GITHUB, "--auto-rebase"],
            GITHUB,
            "--decision-id",
        ),
        (
            "decision_id_writeback",
            [
                "writeback",
                "--decision-id",
                OPENAI,
                "--kind",
                "validation",
                "--summary",
                "looked again",
            ],
            OPENAI,
            "--decision-id",
        ),
        (
            "decision_id_propose",
            ["propose", "--decision-id", SLACK, "--from", write("p.json", PROPOSAL)],
            SLACK,
            "--decision-id",
        ),
        (
            "agent_id",
            [
                "writeback",
                "--decision-id",
                D,
                "--kind",
                "validation",
                "--summary",
                "looked again",
                "--agent-id",
                AWS,
            ],
            AWS,
            "--agent-id",
        ),
        (
            "by",
            ["gate", "--decision-id", D, "--approve", "--by", GITLAB, "--summary", "keep it"],
            GITLAB,
            "--by",
        ),
        (
            "todo_id",
            [
                "gate",
                "--decision-id",
                D,
                "--approve",
                "--by",
                "storefront-platform-lead",
                "--summary",
                "keep it",
                "--todo-id",
                GITHUB,
            ],
            GITHUB,
            "--todo-id",
        ),
        (
            "accepted_by",
            [
                "outcome",
                "--decision-id",
                D,
                "--from",
                write("o1.json", _edited(OUTCOME, ["accepted_decision", "accepted_by"], SLACK)),
            ],
            SLACK,
            "accepted_by",
        ),
        (
            "option_id",
            [
                "propose",
                "--decision-id",
                D,
                "--from",
                write("p1.json", _edited(PROPOSAL, ["recommended_decision", "option_id"], GITLAB)),
            ],
            GITLAB,
            "option_id",
        ),
        (
            "objective_id",
            [
                "propose",
                "--decision-id",
                D,
                "--from",
                write(
                    "p2.json", _edited(PROPOSAL, ["objective_scores", 0, "objective_id"], OPENAI)
                ),
            ],
            OPENAI,
            "objective_id",
        ),
        (
            "alternative_id",
            [
                "propose",
                "--decision-id",
                D,
                "--from",
                write("p3.json", _edited(PROPOSAL, ["alternatives", 0, "alternative_id"], GITHUB)),
            ],
            GITHUB,
            "alternative_id",
        ),
        (
            "transition_id",
            [
                "outcome",
                "--decision-id",
                D,
                "--from",
                write(
                    "o2.json",
                    {
                        **OUTCOME,
                        "resulting_transitions": [
                            {"transition_id": AWS, "summary": "TTL kept", "status": "done"}
                        ],
                    },
                ),
            ],
            AWS,
            "transition_id",
        ),
        ("source_id", ["source", "add", GITHUB, "--path", "docs"], GITHUB, "ID"),
        ("enable_agent", ["enable", "--agent", AWS], AWS, "--agent"),
        ("reason_code", ["redact", "decision-proposal", "--reason", OPENAI], OPENAI, "--reason"),
    ]


NAMES = [
    "decision_id_prepare",
    "decision_id_writeback",
    "decision_id_propose",
    "agent_id",
    "by",
    "todo_id",
    "accepted_by",
    "option_id",
    "objective_id",
    "alternative_id",
    "transition_id",
    "source_id",
    "enable_agent",
    "reason_code",
]


@pytest.mark.parametrize("name", NAMES)
def test_a_credential_in_a_token_field_is_refused_and_written_nowhere(
    cycled: Path, tmp_path: Path, dcx, name: str
) -> None:
    case = {c[0]: c for c in cases(tmp_path)}[name]
    _name, argv, secret, field = case
    before = _tree(cycled)
    result = dcx("-C", str(cycled), *argv, "--format", "json", env={"DCX_AGENT_ID": "agent-a"})
    assert result.exit_code == 2, (result.stdout, result.stderr)
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "unsafe_public_text", error
    assert field in (error.get("field") or "") + error["message"], error
    assert secret not in result.stdout + result.stderr, "the error echoed the value"
    after = _tree(cycled)
    assert after == before
    assert not any(secret in rel or secret.encode() in data for rel, data in after)
