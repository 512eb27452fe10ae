"""`dcx show` for people, every packet kind, and `dcx log`, on the example after a full cycle."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dcx.packets import KINDS
from tests.support.cycle import D
from tests.support.workspace import packet_files

# the legacy cycle stores every kind but the review receipt (tests/cli/test_review_readers.py shows that one)
KIND_NAMES = sorted(set(KINDS) - {"review"})


def _ref_of(root: Path, kind: str) -> str:
    refs = sorted(p.stem for p in (root / ".decision-context" / "packets" / kind).glob("*.json"))
    assert len(refs) == 1, (kind, refs)
    return refs[0]


def test_the_cycle_stores_every_kind_once(cycled: Path) -> None:
    kinds = {path.parent.name for path in packet_files(cycled).values()}
    assert kinds == set(KIND_NAMES)


@pytest.mark.parametrize("kind", KIND_NAMES)
def test_show_text_for_every_kind(dcx, cycled: Path, kind: str, snapshot) -> None:
    ref = _ref_of(cycled, kind)
    result = dcx("-C", str(cycled), "show", ref)
    assert result.exit_code == 0, result.stderr
    assert ref in result.stdout.splitlines()[0]
    assert (
        "{'" not in result.stdout and '{"' not in result.stdout
    )  # no raw dict or JSON dumped for people
    assert result.stdout == snapshot


@pytest.mark.parametrize("kind", KIND_NAMES)
def test_show_json_is_the_stored_bytes_for_every_kind(
    dcx, cycled: Path, kind: str, snapshot_json
) -> None:
    ref = _ref_of(cycled, kind)
    result = dcx("-C", str(cycled), "show", ref[: len(KINDS[kind].prefix) + 9], "--format", "json")
    assert result.exit_code == 0, result.stderr
    path = cycled / ".decision-context" / "packets" / kind / f"{ref}.json"
    assert result.stdout.encode() == path.read_bytes()
    assert json.loads(result.stdout) == snapshot_json


def test_evidence_view_separates_accepted_stale_and_rejected(dcx, cycled: Path) -> None:
    out = dcx("-C", str(cycled), "show", "decision-evidence-").stdout
    accepted = out.index("Accepted claims")
    stale = out.index("Stale or rejected claims")
    assert accepted < stale
    stale_section = out[stale : out.index("Changed facts")]
    assert "stale_authority_revision" in stale_section and " stale " in stale_section
    assert "the authority changed since this was recalled" in stale_section
    assert "1 accepted claim · 1 stale · 0 rejected" in out


def test_assembly_view_links_its_embedded_packets_by_short_ref(dcx, cycled: Path) -> None:
    out = dcx("-C", str(cycled), "show", "decision-context-assembly-").stdout
    section = out[out.index("Embedded packets") :]
    shorts = [line.split()[1] for line in section.splitlines()[3:] if line.strip()]
    assert len(shorts) == 8
    for short_ref in shorts:  # every link opens with `dcx show`
        assert dcx("-C", str(cycled), "show", short_ref).exit_code == 0, short_ref
    assert "auto rebase" in out.splitlines() and "coverage complete" in out.splitlines()
    assert "validated_rebase" in out


def test_log_text_and_json_after_a_full_cycle(dcx, cycled: Path, snapshot, snapshot_json) -> None:
    text = dcx("-C", str(cycled), "log")
    assert text.exit_code == 0
    assert f"* {D}" in text.stdout
    assert text.stdout == snapshot
    as_json = dcx("-C", str(cycled), "log", "--format", "json")
    assert as_json.json()["data"]["decisions"][0]["decision_id"] == D
    assert as_json.json() == snapshot_json


def test_preview_and_partial_coverage_are_labelled(dcx, example: Path) -> None:
    registry = example / ".decision-context" / "sources.toml"
    registry.write_text(
        registry.read_text()
        + "\n".join(
            [
                "",
                "[[sources]]",
                'source_id = "source:authority:gone"',
                'provider_id = "files"',
                'source_kind = "document"',
                'priority = "p0"',
                'evidence_level = "s1"',
                'objectives = ["origin-latency"]',
                'scan_mode = "incremental"',
                'exact_read_policy = "always"',
                "freshness_seconds = 86400",
                'locator = { path = "no-such-dir" }',
                "",
            ]
        )
    )
    prepared = dcx(
        "-C", str(example), "prepare", "--decision-id", "d-preview", "--agent-id", "agent-a"
    )
    assert prepared.exit_code == 0, prepared.stderr
    assembly = dcx("-C", str(example), "show", "decision-context-assembly-").stdout
    assert "PREVIEW (no rebase input): changed sources keep their cursors" in assembly
    assert "coverage PARTIAL: incomplete required source(s) source:authority:gone" in assembly
    assert (
        "preserve" in assembly
        and "rebase_incomplete" in assembly
        and "cursor_after_missing" in assembly
    )
    coverage = dcx("-C", str(example), "show", "decision-source-coverage-").stdout
    assert (
        "PARTIAL — required (p0) source(s) not covered completely: source:authority:gone"
        in coverage
    )
    scans = sorted(
        p.stem for p in (example / ".decision-context" / "packets" / "scan").glob("*.json")
    )
    texts = [dcx("-C", str(example), "show", ref).stdout for ref in scans]
    assert any("unavailable (locator_missing; failed open, cursor kept)" in t for t in texts), texts
    freshness = dcx("-C", str(example), "show", "decision-source-freshness-").stdout
    assert "not fresh" in freshness and "never" in freshness


def test_show_into_a_closed_pipe_exits_quietly(cycled: Path) -> None:
    """`dcx show REF | head -1` style: a reader that stops early gets no traceback."""
    import os
    import subprocess
    import sys

    exe = str(Path(sys.executable).parent / "dcx")
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before dcx writes
    proc = subprocess.run(
        [exe, "-C", str(cycled), "show", "decision-evidence-"],
        stdout=write_end,
        stderr=subprocess.PIPE,
        timeout=60,
        check=False,
    )
    os.close(write_end)
    assert b"Traceback" not in proc.stderr and b"AttributeError" not in proc.stderr, (
        proc.stderr.decode()
    )
    assert proc.returncode == 1


def test_feedback_view_shows_an_emitted_candidate(dcx, cycled: Path) -> None:
    from tests.support.cycle import verified_outcome, write_json

    evidence = _ref_of(cycled, "evidence")
    body = write_json(cycled / "verified.json", verified_outcome(evidence))
    assert dcx("-C", str(cycled), "outcome", "--decision-id", D, "--from", str(body)).exit_code == 0
    fed = dcx("-C", str(cycled), "feedback", "--decision-id", D, "--format", "json").json()["data"][
        "feedback"
    ]
    assert fed["candidate_emitted"] is True
    out = dcx("-C", str(cycled), "show", fed["feedback_ref"]).stdout
    assert "Reward Memory candidate (procedural_experience)" in out
    assert "review required · never ingested · never activated" in out
    assert "Candidate claims" in out and "Why no candidate: -" in out
    outcome = dcx("-C", str(cycled), "show", fed["outcome_packet_ref"]).stdout
    assert "verified · accepted keep-90s-ttl" in outcome and "p99-held" in outcome


def test_evidence_view_lists_conflicts_from_an_agent_rebase(dcx, example: Path) -> None:
    assert dcx("-C", str(example), "index", "--agent-id", "agent-a").exit_code == 0
    prepared = dcx(
        "-C",
        str(example),
        "prepare",
        "--decision-id",
        "d-agent",
        "--agent-id",
        "agent-a",
        "--rebase",
        str(example / "rebase.json"),
    )
    assert prepared.exit_code == 0, prepared.stderr
    out = dcx("-C", str(example), "show", "decision-evidence-").stdout
    conflicts = out[out.index("Conflicts") : out.index("Source revisions")]
    assert (
        "rollback-trigger" in conflicts
        and "resolved" in conflicts
        and "canonical_revision_wins" in conflicts
    )
    assert "1 conflict" in out and "adr-0007-accepted" in out
    rebase = dcx("-C", str(example), "show", "decision-semantic-rebase-").stdout
    assert "agent rebase · material change · 5 of 5 changed items accounted for" in rebase


def test_every_kind_has_a_view_and_others_fall_back_to_the_generic_one() -> None:
    from dcx.cli._layout import Page, plain_text
    from dcx.cli._views import load_views, render_packet

    assert set(load_views()) == set(KINDS)
    page = Page()
    render_packet(
        page,
        "future",
        {
            "schema_version": "future_packet_v1",
            "goal_id": "g",
            "key_id": "k",
            "note": "hello",
            "rows": [{"id": "a", "n": 1}],
        },
    )
    text = plain_text(page)
    assert "future_packet_v1" in text and "hello" in text and "rows" in text


def test_an_ambiguous_prefix_names_its_candidates(dcx, cycled: Path) -> None:
    result = dcx("-C", str(cycled), "show", "decision-source-")
    assert result.exit_code == 2
    first = result.stderr.splitlines()[0]
    assert first.startswith("error: 'decision-source-' is ambiguous: 4 packets match: ")
    candidates = first.split("match: ", 1)[1].split(", ")
    assert len(candidates) == 4
    for short_ref in candidates:  # each is a unique prefix again
        assert dcx("-C", str(cycled), "show", short_ref).exit_code == 0, short_ref
