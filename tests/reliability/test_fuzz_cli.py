"""CLI-level fuzz: mutated JSON through `dcx propose`, `dcx outcome` and `dcx prepare --rebase`.

Each case runs the real command (typer runner, ``--format json``) on a copy of
the cycle template and must end in exit 0, or exit 2 with the error naming a
field, or a documented refusal (exit 1 with a listed reason code) — never a
traceback or an internal error (exit 5), always exactly one JSON document on
stdout, and on any non-zero exit the workspace's public files (packets,
decision indexes, events) byte-for-byte unchanged: nothing half-written.

A third of the cases change one leaf to a plausible value (so the success path
is fuzzed too); the rest mutate heavily, a fifth of them also mangling the
file's bytes (not JSON, not UTF-8).
CI runs 150 + 150 + 80 cases; ``DCX_HYPOTHESIS_PROFILE=deep`` runs 2,000 each.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.cycle import OUTCOME, PROPOSAL
from tests.support.figures import record
from tests.support.fuzz import examples, mutate, nudge
from tests.support.reliability import PRIVATE_TOP, copy_workspace, cycle_template

DECISION = "ttl-2026-12"
COUNTS: dict[str, dict[str, int]] = {}
# refusals (exit 1) a mutated input may legitimately meet, by command
REFUSALS = {
    "propose": set(),
    "outcome": set(),
    "prepare": {"rebase_refs_stale"},
}
REBASE = {
    "changed_facts": [
        {
            "fact_id": "runbook-rehearsed",
            "summary": "The rollback drill was rehearsed again",
            "change_ref": {"source_id": "source:authority:docs", "path": "runbook-ttl-rollback.md"},
        },
        {
            "fact_id": "note-one",
            "summary": "Origin load looked normal",
            "change_ref": {"source_id": "source:notes", "path": "note-one.md"},
        },
        {
            "fact_id": "note-two",
            "summary": "Origin load looked normal again",
            "change_ref": {"source_id": "source:notes", "path": "note-two.md"},
        },
        {
            "fact_id": "note-three",
            "summary": "Origin load normal a third time",
            "change_ref": {"source_id": "source:notes", "path": "note-three.md"},
        },
    ],
    "stale_or_rejected_claims": [
        {
            "claim_id": "old-ttl",
            "summary": "The 900 s TTL is still live",
            "reason_code": "stale_authority_revision",
        },
    ],
    "conflicts": [],
}


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    return cycle_template(tmp_path_factory)


def _public_state(root: Path) -> dict[str, str]:
    dc = root / ".decision-context"
    out = {}
    for path in dc.rglob("*"):
        rel = path.relative_to(dc)
        if rel.parts[0] in PRIVATE_TOP or not path.is_file() or path.name.endswith(".lock"):
            continue
        out[rel.as_posix()] = hashlib.blake2b(path.read_bytes(), digest_size=16).hexdigest()
    return out


def _mangle(raw: bytes, data: st.DataObject) -> bytes:
    if data.draw(st.integers(0, 4)) != 0:
        return raw
    choice = data.draw(st.sampled_from(["truncate", "junk", "binary"]))
    at = data.draw(st.integers(0, max(0, len(raw) - 1)))
    if choice == "truncate":
        return raw[:at]
    if choice == "junk":
        return raw[:at] + data.draw(st.binary(min_size=1, max_size=4)) + raw[at:]
    return b"\xff\xfe" + raw


def _case(
    dcx, root: Path, tmp_path: Path, command: str, base: Any, data: st.DataObject, args: list[str]
) -> None:
    counts = COUNTS.setdefault(
        command,
        {
            "cases": 0,
            "exit_0": 0,
            "exit_1": 0,
            "exit_2": 0,
            "tracebacks": 0,
            "partial_writes": 0,
            "unnamed_fields": 0,
        },
    )
    if data.draw(st.integers(0, 2)) == 0:  # a third: one plausible change (mostly accepted)
        raw = json.dumps(nudge(base, data)).encode()
    else:  # the rest: heavy mutation, a fifth of it also mangled bytes
        raw = _mangle(json.dumps(mutate(base, data), allow_nan=True).encode(), data)
    path = tmp_path / "input.json"
    path.write_bytes(raw)
    before = _public_state(root)
    out = dcx(
        "-C", str(root), *args, str(path), "--format", "json", env={"DCX_AGENT_ID": "agent-a"}
    )
    counts["cases"] += (
        1  # after the last draw: an example hypothesis abandons while drawing is no case
    )
    text = out.stdout + out.stderr
    if out.exit_code == 5 or "Traceback" in text:
        counts["tracebacks"] += 1
    body = json.loads(out.stdout)  # exactly one JSON document, whatever happened
    if out.exit_code != 0 and _public_state(root) != before:
        counts["partial_writes"] += 1
    assert out.exit_code in (0, 1, 2), (out.exit_code, text[-600:])
    counts[f"exit_{out.exit_code}"] += 1
    if out.exit_code == 0:
        assert body["ok"] is True
        return
    error = body["error"]
    assert "\n" not in error["message"]
    if out.exit_code == 2:
        if not error.get("field"):
            counts["unnamed_fields"] += 1
        assert error.get("field"), error
    else:
        assert error["code"] in REFUSALS[command], error
    assert _public_state(root) == before, "a refused input changed a public file"


@settings(max_examples=examples(150, 2000))
@given(data=st.data())
def test_fuzz_dcx_propose(dcx, template, tmp_path_factory, data) -> None:
    root = _workspace(template, tmp_path_factory, "propose")
    _case(
        dcx,
        root,
        root.parent,
        "propose",
        PROPOSAL,
        data,
        ["propose", "--decision-id", DECISION, "--from"],
    )


@settings(max_examples=examples(150, 2000))
@given(data=st.data())
def test_fuzz_dcx_outcome(dcx, template, tmp_path_factory, data) -> None:
    root = _workspace(template, tmp_path_factory, "outcome")
    _case(
        dcx,
        root,
        root.parent,
        "outcome",
        OUTCOME,
        data,
        ["outcome", "--decision-id", DECISION, "--from"],
    )


@settings(max_examples=examples(80, 2000))
@given(data=st.data())
def test_fuzz_dcx_prepare_rebase(dcx, template, tmp_path_factory, data) -> None:
    root = _workspace(template, tmp_path_factory, "prepare")
    _case(
        dcx,
        root,
        root.parent,
        "prepare",
        REBASE,
        data,
        ["prepare", "--decision-id", "fuzz-rebase", "--rebase"],
    )


_ROOTS: dict[str, Path] = {}


def _workspace(template, tmp_path_factory, name: str) -> Path:
    """One copy of the template per command, shared by its cases (successes only add packets)."""
    if name not in _ROOTS:
        _ROOTS[name] = copy_workspace(template, tmp_path_factory.mktemp(f"fuzz-{name}") / "goal")
    return _ROOTS[name]


def test_fuzz_cli_case_count_reported() -> None:
    """Runs last in this module: figures for bench/reliability.py; both outcomes were exercised."""
    if not COUNTS:
        return
    total = {key: sum(c[key] for c in COUNTS.values()) for key in next(iter(COUNTS.values()))}
    record("fuzz", "cli", {**total, "by_command": COUNTS})
    assert total["tracebacks"] == total["partial_writes"] == total["unnamed_fields"] == 0
    for command, counts in COUNTS.items():
        assert counts["exit_0"] > 0 and counts["exit_2"] > 0, (command, counts)
