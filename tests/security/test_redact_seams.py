"""`dcx redact` removes a secret from an event and from a decision id (SPEC §3.4 v4).

The secret is planted as a dcx without the detector would have let it in (the
detector off while the planting commands run — what a merge from an older or
hostile host brings); everything after is the real CLI. The oracles: a byte
search of the whole public tree (names and contents) for the secret; blake3
of the removed line computed here with the blake3 library; `dcx audit` and
`dcx verify` of the result.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import blake3
import pytest

from dcx.core import public
from tests.support.cli import Runner
from tests.support.cycle import D
from tests.support.workspace import copy_example

SECRET = "ghp_" + "k3j9x2m4q8w7e1r5t6y0u2i3o4p5a6s7d8f9"  # a GitHub token's shape, lower case


def _public_tree(root: Path) -> list[tuple[str, bytes]]:
    dc = root / ".decision-context"
    return [
        (p.relative_to(root).as_posix(), p.read_bytes() if p.is_file() else b"")
        for p in sorted(dc.rglob("*"))
        if "private" not in p.relative_to(dc).parts[:1]
    ]


def _leaks(root: Path, secret: str) -> list[str]:
    return [rel for rel, data in _public_tree(root) if secret in rel or secret.encode() in data]


@pytest.fixture
def dcx(tmp_path: Path) -> Runner:
    root = copy_example(tmp_path / "example")
    runner = Runner(root)
    runner("index")
    return runner


@contextmanager
def _planting(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The detector off inside the block only (undone even when the block fails)."""
    with monkeypatch.context() as patch:
        patch.setattr(public, "unsafe_class", lambda text: None)
        yield


def test_an_event_is_redacted_to_a_stub_line(dcx: Runner, monkeypatch: pytest.MonkeyPatch) -> None:
    root = dcx.root
    dcx("prepare", "--decision-id", D, "--auto-rebase")
    dcx("propose", "--decision-id", D, "--from", str(root / "proposal.json"))
    dcx("outcome", "--decision-id", D, "--from", str(root / "outcome.json"))
    with _planting(monkeypatch):
        leaked = dcx.json(
            "writeback", "--decision-id", D, "--kind", "validation", "--summary", f"token {SECRET}"
        )
    event_id = leaked["data"]["event"]["event_id"]
    clean = dcx.json(
        "writeback", "--decision-id", D, "--kind", "validation", "--summary", "TTL kept"
    )
    events = root / ".decision-context" / "events.jsonl"
    lines = events.read_bytes().split(b"\n")[:-1]
    original = next(line for line in lines if event_id.encode() in line)
    assert dcx("audit", ok=False).exit_code == 1

    done = dcx.json("redact", event_id[:16], "--reason", "leaked_credential")
    stub = done["data"]["stub"]
    assert stub["redacted_ref"] == event_id and stub["kind"] == "event"
    assert stub["removed_blake3"] == "blake3-" + blake3.blake3(original).hexdigest()[:32]
    assert stub["removed_size"] == len(original)
    after = events.read_bytes().split(b"\n")[:-1]
    assert len(after) == len(lines)
    assert [a for a, b in zip(after, lines, strict=True) if a != b] == [
        a for a in after if event_id.encode() in a
    ], "every other line stays byte for byte"
    assert _leaks(root, SECRET) == []
    assert dcx("audit", ok=False).exit_code == 0
    verified = dcx.json("verify")
    assert verified["data"]["problems"] == []
    assert event_id in {row["ref"] for row in verified["data"]["redacted"]}
    assert (
        dcx.json("redact", event_id, "--reason", "leaked_credential")["data"]["redacted"] is False
    )
    log = dcx.json("log", "--decision-id", D)
    assert clean["data"]["event"]["event_id"] in json.dumps(log)


def test_a_decision_id_is_redacted_with_everything_it_names(
    dcx: Runner, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = dcx.root
    with _planting(monkeypatch):
        dcx("prepare", "--decision-id", SECRET, "--auto-rebase")
        dcx("propose", "--decision-id", SECRET, "--from", str(root / "proposal.json"))
        dcx("outcome", "--decision-id", SECRET, "--from", str(root / "outcome.json"))
        dcx("writeback", "--decision-id", SECRET, "--kind", "validation", "--summary", "TTL kept")
    dcx("prepare", "--decision-id", D, "--auto-rebase")  # an honest decision beside it
    assert _leaks(root, SECRET), "the planting worked"
    audit = dcx("audit", "--format", "json", ok=False)
    assert audit.exit_code == 1
    assert any(
        "decisions/" in f["file"] and f["field"] == "(file name)"
        for f in json.loads(audit.stdout)["data"]["findings"]
    )
    assert SECRET not in audit.stdout, "audit never prints what it found"

    done = dcx.json("redact", SECRET, "--reason", "leaked_credential")["data"]
    assert done["index_removed"] and done["packets"] and done["events"]
    assert SECRET not in json.dumps(done)
    assert _leaks(root, SECRET) == []
    assert dcx("audit", ok=False).exit_code == 0
    verified = dcx.json("verify")
    assert verified["data"]["problems"] == []
    assert all(
        "decision_id" not in row or row.get("decision_id") != SECRET
        for row in verified["data"]["redacted"]
    )


def test_a_redacted_event_a_merge_brings_back_is_reported_and_redacted_again(
    dcx: Runner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another host still holds the line: git's union driver appends it again on merge."""
    root = dcx.root
    dcx("prepare", "--decision-id", D, "--auto-rebase")
    dcx("propose", "--decision-id", D, "--from", str(root / "proposal.json"))
    dcx("outcome", "--decision-id", D, "--from", str(root / "outcome.json"))
    with _planting(monkeypatch):
        leaked = dcx.json(
            "writeback", "--decision-id", D, "--kind", "validation", "--summary", f"token {SECRET}"
        )
    event_id = leaked["data"]["event"]["event_id"]
    events = root / ".decision-context" / "events.jsonl"
    original = next(line for line in events.read_bytes().split(b"\n") if event_id.encode() in line)
    dcx.json("redact", event_id, "--reason", "leaked_credential")
    with events.open("ab") as handle:  # what `git merge` with merge=union does
        handle.write(original + b"\n")
    verified = dcx("verify", "--format", "json", ok=False)
    assert verified.exit_code == 1
    problems = json.loads(verified.stdout)["data"]["problems"]
    assert [p for p in problems if event_id in p["problem"] and "redact" in p["problem"]], problems
    assert SECRET not in dcx("log", "--decision-id", D).stdout, "readers never see a redacted event"
    assert dcx.json("redact", event_id, "--reason", "leaked_credential")["data"]["redacted"] is True
    assert _leaks(root, SECRET) == []
    assert dcx.json("verify")["data"]["problems"] == []
