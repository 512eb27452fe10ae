"""The JSON contract: every command prints exactly one envelope, and its keys are pinned.

The oracle is the pair of JSON Schemas in docs/schemas/ (validated with
jsonschema) and a key set written here from SPEC §3.6. A command added to the
app without a line in ``INVOCATIONS`` fails ``test_every_command_is_covered``.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from tests.support.workspace import REPO

RESULT_KEYS = {"schema_version", "ok", "command", "status", "data", "warnings"}
ERROR_KEYS = {"schema_version", "ok", "error"}
SCHEMAS = {
    name: json.loads((REPO / "docs" / "schemas" / f"{name}.schema.json").read_text())
    for name in ("dcx_result_v0", "dcx_error_v0")
}

# One representative call per command, on a copy of the example after one full cycle.
# `None`: not callable this way, with the reason.
INVOCATIONS: dict[str, list[str] | str] = {
    "init": ["init"],
    "status": ["status"],
    "enable": ["enable"],
    "disable": ["disable"],
    "source add": ["source", "add", "source:authority:more", "--path", "docs"],
    "source rm": ["source", "rm", "source:authority:missing"],
    "source list": ["source", "list"],
    "provider set": ["provider", "set", "bm25"],
    "sources": ["sources"],
    "index": ["index"],
    "ext install": ["ext", "install", "no-such-folder"],
    "ext upgrade": ["ext", "upgrade", "no-such-folder"],
    "ext enable": ["ext", "enable", "nothing"],
    "ext disable": ["ext", "disable", "nothing"],
    "ext doctor": ["ext", "doctor", "--all"],
    "ext rollback": ["ext", "rollback", "nothing"],
    "ext list": ["ext", "list"],
    "key export": ["key", "export"],
    "key import": ["key", "import", "no-such-file"],
    "key create": ["key", "create"],
    "key signers": ["key", "signers"],
    "key revoke": ["key", "revoke", "signer-ffff", "--reason", "host_retired"],
    "scan": ["scan"],
    "sync": ["sync"],  # the example copy is no git work tree: the sync_not_git error envelope
    "recall": ["recall", "--scope", "", "--query", "rollback", "--query-summary", "rollback"],
    "workbench": "serves until Ctrl-C: its one start-up document is checked in tests/web",
    "prepare": ["prepare", "--decision-id", "contract-d"],
    "propose": ["propose", "--decision-id", "contract-d", "--from", "proposal.json"],
    "outcome": ["outcome", "--decision-id", "nobody", "--from", "outcome.json"],
    "writeback": ["writeback", "--decision-id", "nobody", "--kind", "validation", "--summary", "s"],
    "commit": ["commit", "--decision-id", "nobody", "--event-id", "dcx-event-00"],
    "feedback": ["feedback", "--decision-id", "ttl-2026-12"],
    "abandon": ["abandon", "--decision-id", "contract-d", "--summary", "contract test"],
    "gc": ["gc", "--dry-run"],
    "gate": [
        "gate",
        "--decision-id",
        "ttl-2026-12",
        "--approve",
        "--by",
        "a-person",
        "--summary",
        "approve",
    ],
    "review": ["review", "--decision-id", "nobody", "--no-change", "--dry-run"],
    "log": ["log"],
    "show": ["show", "decision-evidence"],
    "diff": ["diff", "decision-evidence", "decision-evidence"],
    "verify": ["verify"],
    "audit": ["audit"],
    "compare": ["compare", "no-such-plan.toml"],
    "report": ["report"],
    "mcp": "serves MCP on stdio until the host closes it: tests/mcp drive it with the SDK client",
    "redact": ["redact", "decision-proposal", "--reason", "leaked_credential"],
    "help": ["help", "prepare"],
}


def _leaf_commands() -> list[str]:
    from typer.main import get_command

    from dcx.cli.app import build_app

    found: list[str] = []

    def walk(command, path: list[str]) -> None:
        subs = getattr(command, "commands", None)
        if subs:
            for name, sub in subs.items():
                walk(sub, [*path, name])
        else:
            found.append(" ".join(path))

    walk(get_command(build_app()), [])
    return sorted(found)


def test_every_command_is_covered() -> None:
    assert sorted(INVOCATIONS) == _leaf_commands()


@pytest.mark.parametrize("name", sorted(k for k, v in INVOCATIONS.items() if isinstance(v, list)))
def test_one_envelope_with_pinned_keys(dcx, cycled: Path, name: str) -> None:
    args = INVOCATIONS[name]
    assert isinstance(args, list)
    result = dcx("-C", str(cycled), *args, "--format", "json", env={"DCX_AGENT_ID": "agent-a"})
    document = json.loads(result.stdout)  # exactly one JSON document: json.loads refuses a second
    if name == "show" and result.exit_code == 0:
        # documented exception: `show --format json` prints the stored packet's own bytes
        assert document["schema_version"] == "decision_evidence_packet_v0"
        return
    if document["schema_version"] == "dcx_result_v0":
        assert set(document) == RESULT_KEYS
        assert document["command"] == name
        assert document["ok"] is (result.exit_code == 0)
        jsonschema.validate(document, SCHEMAS["dcx_result_v0"])
    else:
        assert set(document) == ERROR_KEYS, document
        assert result.exit_code != 0
        assert set(document["error"]) <= {"code", "message", "hint", "field"}
        jsonschema.validate(document, SCHEMAS["dcx_error_v0"])
    assert result.stderr == "" or document["schema_version"] == "dcx_result_v0"


def test_a_usage_error_is_an_error_envelope(dcx) -> None:
    result = dcx("prepare", "--no-such-flag", "--format", "json")
    assert result.exit_code == 2
    document = json.loads(result.stdout)
    jsonschema.validate(document, SCHEMAS["dcx_error_v0"])
    assert document["error"]["code"] == "usage_error"
