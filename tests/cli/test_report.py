"""`dcx report` on fixtures/report/ (SPEC §13): every value below is derived by hand
from the story scripts/report_fixture.py tells, not from the report's code.

The story (profile: max_results = 2, so each recall returns two results; every
settled decision advances that host's cursor, so the next prepare on that host
reads only what changed since):

catalog-cache-ttl — two agents on two hosts, merged with git
  ttl-keep       agent-a  first scan: 5 docs -> 5 facts, 5 exact reads; the runbook
                          moved after indexing -> 1 claim stale, 1 accepted;
                          proposal 11-02 10:00 (0.8); pending, then verified 11-05 10:00
                          (3 days = 259200 s), chain linked
  ttl-jitter     agent-b  its own host and cursor: 5 facts, 5 reads; 2 accepted;
                          0.65; verified 11-04 10:00 (86400 s), linked
  purge-retry    agent-a  index rebuilt, then the postmortem edited -> prepare 1:
                          1 fact; the recall returns the ADR's context and the
                          runbook's head, both still current -> 2 accepted. Then the
                          rate limits and the ADR's context are edited -> prepare 2:
                          3 facts (postmortem still uncommitted, rate limits, ADR);
                          the ADR claim no longer matches -> 1 accepted, 1 stale.
                          4 facts, 4 reads, 2 calls, 4 results, 3 accepted, 1 stale;
                          retry-3x (0.6) -> retry-5x (0.7) on new evidence: one
                          evidence-driven change, +2 facts, 1 claim accepted -> stale;
                          refuted, 1 assumption (then the index is rebuilt)
  stampede-lock  agent-b  nothing changed: 0 facts; 2 accepted; 0.2; refuted
  warmup         agent-a  OpenViking, binary absent: 1 call unavailable
                          (provider_cli_unavailable), 0 results; 0.4; pending
  edge-tiering   agent-a  2 accepted; 0.55; no outcome
  purge-batching agent-b  2 accepted; 0.9; inconclusive
checkout-latency — a second domain
  retry-budget       first scan: 3 docs -> 3 facts, 3 reads; the timeouts page
                     moved after indexing -> 1 stale, 1 accepted; 0.9; verified
                     one day later (86400 s), linked
  pool-size          extension provider: 2 results, both rejected
                     (unverifiable_recall); 0.3; refuted; 1 assumption
  jitter-retries     extension: 2 rejected; 0.7; pending
  provider-failover  extension: 2 rejected; 0.5; verified two days later
                     (172800 s), linked
  pool-alerts        a preview without recall, no proposal: started at its first
                     index line (11-11 09:00), no confidence, no outcome
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.support.cli import run_dcx
from tests.support.workspace import REPO

FIXTURE = REPO / "fixtures" / "report"
DC = ".decision-context"


@pytest.fixture
def goals(tmp_path: Path) -> tuple[Path, Path]:
    """A fresh clone's worth of each goal: public files only."""
    out = []
    for name in ("catalog", "checkout"):
        shutil.copytree(FIXTURE / name, tmp_path / name)
        assert not (tmp_path / name / DC / "private").exists()
        assert not (tmp_path / name / DC / "profile.toml").exists()
        out.append(tmp_path / name)
    return out[0], out[1]


def report(dcx, *roots: Path, extra: tuple[str, ...] = ()) -> tuple[int, dict]:
    args = ["report", *(a for r in roots for a in ("-C", str(r))), *extra, "--format", "json"]
    result = dcx(*args)
    assert result.stdout, result.stderr
    return result.exit_code, result.json()


def by_id(data: dict) -> dict[str, dict]:
    return {row["decision_id"]: row for row in data["decisions"]}


def test_each_decision_by_hand(dcx, goals) -> None:
    code, envelope = report(dcx, *goals)
    assert code == 0 and envelope["status"] == "ok" and envelope["warnings"] == []
    rows = by_id(envelope["data"])
    expected = {  # decision: (agents, confidence, outcome, seconds to verified, linked, facts, reads, prepares)
        "ttl-keep": (["agent-a"], 0.8, "verified", 259200, True, 5, 5, 1),
        "ttl-jitter": (["agent-b"], 0.65, "verified", 86400, True, 5, 5, 1),
        "purge-retry": (["agent-a"], 0.7, "refuted", None, False, 4, 4, 2),
        "stampede-lock": (["agent-b"], 0.2, "refuted", None, False, 0, 0, 1),
        "warmup": (["agent-a"], 0.4, "pending", None, False, 0, 0, 1),
        "edge-tiering": (["agent-a"], 0.55, "none", None, False, 0, 0, 1),
        "purge-batching": (["agent-b"], 0.9, "inconclusive", None, False, 0, 0, 1),
        "retry-budget": (["agent-a"], 0.9, "verified", 86400, True, 3, 3, 1),
        "pool-size": (["agent-a"], 0.3, "refuted", None, False, 0, 0, 1),
        "jitter-retries": (["agent-a"], 0.7, "pending", None, False, 0, 0, 1),
        "provider-failover": (["agent-a"], 0.5, "verified", 172800, True, 0, 0, 1),
        "pool-alerts": (["agent-a"], None, "none", None, False, 0, 0, 1),
    }
    assert set(rows) == set(expected)
    for ident, (
        agents,
        confidence,
        outcome,
        seconds,
        linked,
        facts,
        reads,
        prepares,
    ) in expected.items():
        row = rows[ident]
        got = (
            row["agents"],
            row["confidence"],
            row["outcome"],
            row["time_to_verified_seconds"],
            row["outcome_linked"],
            row["authority"]["changed_facts"],
            row["authority"]["exact_reads"],
            row["authority"]["prepares"],
        )
        assert got == (agents, confidence, outcome, seconds, linked, facts, reads, prepares), ident
    assert rows["pool-alerts"]["started_at"] == "2026-11-11T09:00:00Z"
    assert (
        rows["purge-retry"]["started_at"] == "2026-11-06T13:00:00Z"
    )  # the proposal the outcome links
    assert [a["assumption_id"] for a in rows["purge-retry"]["invalidated_assumptions"]] == [
        "purges-idempotent"
    ]
    assert [a["assumption_id"] for a in rows["pool-size"]["invalidated_assumptions"]] == [
        "db-has-headroom"
    ]


def test_evidence_driven_change_names_the_differing_fact(dcx, goals) -> None:
    _, envelope = report(dcx, *goals)
    changes = by_id(envelope["data"])["purge-retry"]["changes"]
    assert len(changes) == 1
    change = changes[0]
    assert (change["from_option"], change["to_option"], change["comparable"]) == (
        "retry-3x",
        "retry-5x",
        True,
    )
    assert len(change["facts_added"]) == 2 and change["facts_removed"] == []  # rate limits, ADR
    assert [(c["before"], c["after"]) for c in change["claims_changed"]] == [
        ("accepted", "stale_authority_revision")
    ]
    assert change["from_evidence"] != change["to_evidence"]
    purge = by_id(envelope["data"])["purge-retry"]["providers"]
    assert [(p["provider"], p["accepted"], p["stale"]) for p in purge] == [("bm25", 3, 1)]
    for ident, row in by_id(envelope["data"]).items():
        if ident != "purge-retry":
            assert row["changes"] == [] and row["changes_without_new_evidence"] == 0, ident


def test_goal_measures_by_hand(dcx, goals) -> None:
    _, envelope = report(dcx, *goals)
    catalog, checkout = (g["summary"] for g in envelope["data"]["goals"])
    assert catalog["decisions"] == 7 and checkout["decisions"] == 5
    # authority: facts and reads are the sums above; one source read per prepare
    assert catalog["authority"] == {
        "prepares": 8,
        "source_reads": 8,
        "exact_reads": 14,
        "changed_facts": 14,
        "coverage_partial": 0,
    }
    assert checkout["authority"] == {
        "prepares": 5,
        "source_reads": 5,
        "exact_reads": 3,
        "changed_facts": 3,
        "coverage_partial": 0,
    }
    # recall: catalog 7 bm25 calls x 2 results + 1 unavailable OpenViking call
    # accepted: ttl-keep 1, ttl-jitter 2, purge-retry 3, stampede-lock 2, edge-tiering 2, purge-batching 2
    assert catalog["recall"] == {
        "calls": 8,
        "results": 14,
        "accepted": 12,
        "stale": 2,
        "rejected": 0,
        "unavailable": 1,
        "stale_by_reason": {"stale_authority_revision": 2},
        "rejected_by_reason": {},
        "unavailable_by_reason": {"provider_cli_unavailable": 1},
    }
    assert checkout["recall"] == {
        "calls": 4,
        "results": 8,
        "accepted": 1,
        "stale": 1,
        "rejected": 6,
        "unavailable": 0,
        "stale_by_reason": {"stale_authority_revision": 1},
        "rejected_by_reason": {"unverifiable_recall": 6},
        "unavailable_by_reason": {},
    }
    assert catalog["stale_claims"] == {
        "presented": 2,
        "demoted": 2,
        "accepted_stale": 0,
        "rejection_rate": 1.0,
    }
    assert checkout["stale_claims"] == {
        "presented": 1,
        "demoted": 1,
        "accepted_stale": 0,
        "rejection_rate": 1.0,
    }
    assert catalog["decision_changes"] == {
        "evidence_driven": 1,
        "decisions_changed": 1,
        "without_new_evidence": 0,
    }
    assert catalog["outcomes"] == {
        "verified": 2,
        "refuted": 2,
        "inconclusive": 1,
        "pending": 1,
        "none": 1,
        "linked_verified": 2,
        "invalidated_assumptions": 1,
        "time_to_verified_seconds": {"count": 2, "median": 172800, "min": 86400, "max": 259200},
    }
    assert checkout["outcomes"] == {
        "verified": 2,
        "refuted": 1,
        "inconclusive": 0,
        "pending": 1,
        "none": 1,
        "linked_verified": 2,
        "invalidated_assumptions": 1,
        "time_to_verified_seconds": {"count": 2, "median": 129600, "min": 86400, "max": 172800},
    }


def test_calibration_by_hand(dcx, goals) -> None:
    _, envelope = report(dcx, *goals)
    cal = envelope["data"]["totals"]["calibration"]
    # scored (confidence, outcome): 0.8/1 0.65/1 0.7/0 0.2/0 0.9/1 0.3/0 0.5/1
    # squared errors .04 .1225 .49 .04 .01 .09 .25 -> 1.0425 / 7
    assert cal["scored"] == 7
    assert cal["brier_score"] == pytest.approx(1.0425 / 7, abs=1e-6)
    assert [
        (b["bin"], b["count"], b["mean_confidence"], b["observed_rate"]) for b in cal["bins"]
    ] == [
        ("0.0-0.2", 0, None, None),
        ("0.2-0.4", 2, 0.25, 0.0),  # 0.2 and 0.3, both refuted
        ("0.4-0.6", 1, 0.5, 1.0),  # 0.5 verified
        ("0.6-0.8", 2, 0.675, 0.5),  # 0.65 verified, 0.7 refuted
        ("0.8-1.0", 2, 0.85, 1.0),  # 0.8 and 0.9 verified
    ]
    # pending: warmup, jitter-retries; inconclusive: purge-batching; none: edge-tiering, pool-alerts
    assert cal["left_out"] == {"pending": 2, "inconclusive": 1, "none": 2, "no_confidence": 0}
    catalog = envelope["data"]["goals"][0]["summary"]["calibration"]
    assert catalog["brier_score"] == pytest.approx((0.04 + 0.1225 + 0.49 + 0.04) / 4, abs=1e-6)


def test_providers_and_stop_condition(dcx, goals) -> None:
    _, envelope = report(dcx, *goals)
    rows = {
        (p["goal_id"], p["provider"]): p for g in envelope["data"]["goals"] for p in g["providers"]
    }
    assert set(rows) == {
        ("catalog-cache-ttl", "bm25"),
        ("catalog-cache-ttl", "openviking"),
        ("checkout-latency", "bm25"),
        ("checkout-latency", "extension"),
    }
    # bm25's accepted claims sit in evidence that outcome receipts link: it mattered in both goals
    assert rows["catalog-cache-ttl", "bm25"]["stop_condition"] == "mattered"
    assert rows["checkout-latency", "bm25"]["stop_condition"] == "mattered"
    # OpenViking never answered: no volume to judge
    ov = rows["catalog-cache-ttl", "openviking"]
    assert (ov["calls"], ov["results"], ov["unavailable_by_reason"], ov["stop_condition"]) == (
        1,
        0,
        {"provider_cli_unavailable": 1},
        "no_volume",
    )
    # the extension's 6 results never matched the authority, never changed a decision: stop
    ext = rows["checkout-latency", "extension"]
    assert (
        ext["calls"],
        ext["results"],
        ext["accepted"],
        ext["rejected"],
        ext["acceptance_rate"],
        ext["stop_condition"],
    ) == (3, 6, 0, 6, 0.0, "stop")
    overall = {p["provider"]: p["stop_condition"] for p in envelope["data"]["providers"]}
    assert overall == {"bm25": "mattered", "extension": "stop", "openviking": "no_volume"}


def test_promotion_gate_needs_a_second_goal(dcx, goals) -> None:
    _, both = report(dcx, *goals)
    gate = both["data"]["promotion_gate"]
    assert gate["status"] == "reproduced"
    assert gate["goals_proving"] == ["catalog-cache-ttl", "checkout-latency"]
    _, one = report(dcx, goals[0])
    assert one["data"]["promotion_gate"]["status"] == "proven_once"


def test_merged_history_of_two_agents(dcx, goals) -> None:
    catalog = goals[0]
    _, envelope = report(dcx, catalog)
    goal = envelope["data"]["goals"][0]
    assert goal["agents"] == ["agent-a", "agent-b"]
    assert goal["foreign_key_ids"] == []  # both hosts share the goal's key
    assert goal["other_packets"] == {
        "commit": 3
    }  # ttl-keep, purge-retry, ttl-jitter were committed
    events = (catalog / DC / "events.jsonl").read_text().splitlines()
    assert len(events) == 3  # the union merge kept both hosts' writeback events


def test_fresh_clone_in_a_real_process_writes_nothing(goals) -> None:
    catalog, checkout = goals
    before = sorted(p.relative_to(catalog.parent).as_posix() for p in catalog.parent.rglob("*"))
    result = run_dcx(
        "report",
        "-C",
        str(catalog),
        "-C",
        str(checkout),
        cwd=catalog.parent,
        env={"COLUMNS": "120"},
    )
    assert result.exit_code == 0, result.stderr
    assert "promotion gate: reproduced" in result.stdout
    after = sorted(p.relative_to(catalog.parent).as_posix() for p in catalog.parent.rglob("*"))
    assert after == before


def test_filters(dcx, goals) -> None:
    _, one = report(dcx, *goals, extra=("--decision-id", "purge-retry"))
    assert [r["decision_id"] for r in one["data"]["decisions"]] == ["purge-retry"]
    assert one["data"]["filters"] == {"decision_id": "purge-retry", "since": None}
    _, recent = report(dcx, *goals, extra=("--since", "2026-11-09T00:00:00Z"))
    assert sorted(r["decision_id"] for r in recent["data"]["decisions"]) == [
        "edge-tiering",
        "pool-alerts",
        "purge-batching",
        "warmup",
    ]
    code, bad = report(dcx, *goals, extra=("--since", "yesterday"))
    assert code == 2 and bad["error"]["message"].startswith("--since")


def test_the_same_goal_twice_is_refused(dcx, goals, tmp_path: Path) -> None:
    twin = tmp_path / "twin"
    shutil.copytree(goals[0], twin)
    code, envelope = report(dcx, goals[0], twin)
    assert code == 2 and envelope["error"]["code"] == "goal_repeated"


def _index(
    root: Path, decision: str, kind: str, ref: str, at: str = "2026-11-20T09:00:00Z"
) -> None:
    with (root / DC / "decisions" / f"{decision}.jsonl").open("a") as handle:
        handle.write(
            json.dumps({"kind": kind, "observed_at": at, "ref": ref}, sort_keys=True) + "\n"
        )


def _packet(root: Path, kind: str, decision: str) -> Path:
    index = (root / DC / "decisions" / f"{decision}.jsonl").read_text().splitlines()
    ref = next(json.loads(line)["ref"] for line in index if json.loads(line)["kind"] == kind)
    return root / DC / "packets" / kind / f"{ref}.json"


def test_tampered_packet_is_left_out_and_named(dcx, goals) -> None:
    catalog = goals[0]
    path = _packet(catalog, "proposal", "ttl-keep")
    path.chmod(0o644)
    path.write_text(path.read_text().replace('"confidence": 0.8', '"confidence": 0.1'))
    code, envelope = report(dcx, catalog)
    assert code == 0 and envelope["status"] == "partial"
    left = envelope["data"]["left_out"]
    assert [row["file"] for row in left] == [f"{DC}/packets/proposal/{path.name}"]
    assert "does not match the content" in left[0]["problem"]  # dcx verify's own words
    assert any(path.name in w for w in envelope["warnings"])
    row = by_id(envelope["data"])["ttl-keep"]
    assert (
        row["confidence"] is None and row["proposals"] == 0
    )  # nothing of the tampered packet is used


def test_packet_of_another_goal_is_reported_not_mixed(dcx, goals) -> None:
    catalog, checkout = goals
    foreign = _packet(checkout, "proposal", "retry-budget")
    shutil.copy2(foreign, catalog / DC / "packets" / "proposal" / foreign.name)
    _index(catalog, "ttl-keep", "proposal", foreign.stem)
    _, envelope = report(dcx, catalog)
    assert envelope["status"] == "partial"
    assert (
        envelope["data"]["left_out"][0]["problem"] == "belongs to another goal (checkout-latency)"
    )
    assert by_id(envelope["data"])["ttl-keep"]["proposals"] == 1


def test_packet_of_another_key_is_measured_and_reported(dcx, goals) -> None:
    from dcx.core.canonical import packet_ref, pretty_bytes

    catalog = goals[0]
    packet = json.loads(_packet(catalog, "proposal", "edge-tiering").read_text())
    packet["key_id"] = "0badc0de"
    packet["recommended_decision"]["option_id"] = "one-tier"
    packet["packet_ref"] = packet_ref("decision-proposal", packet, "packet_ref")
    (catalog / DC / "packets" / "proposal" / f"{packet['packet_ref']}.json").write_bytes(
        pretty_bytes(packet)
    )
    _index(catalog, "edge-tiering", "proposal", packet["packet_ref"])
    _, envelope = report(dcx, catalog)
    goal = envelope["data"]["goals"][0]
    assert goal["foreign_key_ids"] == ["0badc0de"]
    assert any("0badc0de" in w for w in envelope["warnings"])
    row = by_id(envelope["data"])["edge-tiering"]
    assert row["proposals"] == 2 and row["recommended_option"] == "one-tier"
    # same evidence, another option: a change, but not one new evidence drove
    assert row["changes"] == [] and row["changes_without_new_evidence"] == 1


def test_accepted_stale_claim_is_loud_and_exits_1(dcx, goals) -> None:
    from dcx.core.canonical import packet_ref, pretty_bytes

    catalog = goals[0]
    assembly = json.loads(_packet(catalog, "assembly", "ttl-keep").read_text())
    evidence = assembly["evidence"]
    claim = evidence["recalled_claims"][0]
    claim["source_revision"] = (
        "source-revision-" + "0" * 32
    )  # not the revision its evidence lists as current
    evidence["packet_ref"] = packet_ref("decision-evidence", evidence, "packet_ref")
    assembly["assembly_ref"] = packet_ref("decision-context-assembly", assembly, "assembly_ref")
    (catalog / DC / "packets" / "assembly" / f"{assembly['assembly_ref']}.json").write_bytes(
        pretty_bytes(assembly)
    )
    _index(catalog, "ttl-keep", "assembly", assembly["assembly_ref"])
    code, envelope = report(dcx, catalog)
    assert code == 1 and envelope["ok"] is False and envelope["status"] == "error"
    stale = envelope["data"]["accepted_stale_claims"]
    assert [(s["decision_id"], s["claim_id"], s["evidence_ref"]) for s in stale] == [
        ("ttl-keep", claim["claim_id"], evidence["packet_ref"])
    ]
    assert envelope["data"]["goals"][0]["summary"]["stale_claims"]["accepted_stale"] == 1
    assert envelope["data"]["promotion_gate"]["goals"][0]["stale_rejection"] is False
    text = dcx("report", "-C", str(catalog))
    assert text.exit_code == 1 and "ACCEPTED STALE CLAIMS: 1" in text.stdout


def test_unmeasured_kinds_are_counted_not_read(dcx, goals) -> None:
    """A newer dcx's kinds in a decision index are tolerated: counted, never read."""
    catalog = goals[0]
    _index(catalog, "ttl-keep", "verdict", "decision-verdict-" + "1" * 32)
    code, envelope = report(dcx, catalog)
    assert code == 0
    assert envelope["data"]["goals"][0]["other_packets"] == {"commit": 3, "verdict": 1}


def test_an_indexed_review_receipt_is_read_like_any_measured_packet(dcx, goals) -> None:
    """Review receipts are measured (docs/report.md#reviews): one the index lists but the store lacks is named."""
    catalog = goals[0]
    ref = "decision-review-" + "1" * 32
    _index(catalog, "ttl-keep", "review", ref)
    code, envelope = report(dcx, catalog)
    assert code == 0 and envelope["status"] == "partial"
    assert [(r["ref"], r["problem"]) for r in envelope["data"]["left_out"]] == [
        (ref, "listed in the decision index but missing")
    ]
    assert envelope["data"]["goals"][0]["other_packets"] == {"commit": 3}
    assert envelope["data"]["totals"]["reviews"]["receipts"] == 0


def test_json_validates_and_matches_snapshot(dcx, goals, snapshot_json) -> None:
    from jsonschema import Draft202012Validator

    schema = json.loads(
        (REPO / "docs" / "schemas" / "dcx_decision_quality_report_v0.schema.json").read_text()
    )
    _, envelope = report(dcx, *goals)
    Draft202012Validator(schema).validate(envelope["data"])
    assert envelope["data"] == snapshot_json


def test_text_tables(dcx, goals, snapshot) -> None:
    result = dcx("report", "-C", str(goals[0]), "-C", str(goals[1]))
    assert result.exit_code == 0
    assert result.stdout == snapshot


def test_verdict_cache_never_hides_a_tampered_file(dcx, goals) -> None:
    catalog = goals[0]
    (catalog / DC / "private").mkdir(mode=0o700)  # a host working on the goal keeps verdicts
    code, _first = report(dcx, catalog)
    cache = catalog / DC / "private" / "cache" / "report-verified.txt"
    assert (
        code == 0 and len(cache.read_text().split()) == 23
    )  # 8 assemblies, 8 proposals, 7 outcomes
    path = _packet(catalog, "outcome", "stampede-lock")
    path.chmod(0o644)
    path.write_text(path.read_text().replace('"refuted"', '"verified"'))
    _, second = report(dcx, catalog)
    assert [row["file"] for row in second["data"]["left_out"]] == [
        f"{DC}/packets/outcome/{path.name}"
    ]
    assert by_id(second["data"])["stampede-lock"]["outcome"] == "none"
    assert len(cache.read_text().split()) == 23  # a failure is never cached


def test_strings_from_packets_are_made_visible_on_a_terminal() -> None:
    from dcx.cli.views.report import safe

    assert safe("a\x1b[31mb\u202ec\x7f") == "a\\x1b[31mb\\u202ec\\x7f"
    assert safe(None) == "-"


def test_an_outcome_linking_a_proposal_the_decision_lacks(dcx, goals) -> None:
    """The latest outcome names a proposal that is not indexed: the latest proposal is the basis."""
    catalog = goals[0]
    index = catalog / DC / "decisions" / "ttl-jitter.jsonl"
    index.write_text(
        "".join(
            line + "\n"
            for line in index.read_text().splitlines()
            if json.loads(line)["kind"] != "proposal"
        )
    )
    code, envelope = report(dcx, catalog)
    assert code == 0
    row = by_id(envelope["data"])["ttl-jitter"]
    assert (row["proposals"], row["confidence"], row["outcome"], row["outcome_linked"]) == (
        0,
        None,
        "verified",
        False,
    )


def test_merge_order_does_not_matter(dcx, goals) -> None:
    """A union merge may interleave two hosts' lines in either order: the report reads
    index lines in observed_at order, so reversing every index changes nothing."""
    catalog = goals[0]
    _, before = report(dcx, catalog)
    for index in (catalog / DC / "decisions").glob("*.jsonl"):
        lines = index.read_text().splitlines()
        index.write_text("".join(line + "\n" for line in reversed(lines)))
    _, after = report(dcx, catalog)
    assert after["data"] == before["data"]


def test_the_fixture_verifies(dcx, goals) -> None:
    for root in goals:
        result = dcx("-C", str(root), "verify", "--format", "json")
        assert result.exit_code == 0, result.stdout


REGENERATE = (
    os.environ.get("DCX_REPORT_FIXTURE_CHECK") == "1"
)  # read before the isolation fixture clears DCX_*


@pytest.mark.slow
@pytest.mark.skipif(not REGENERATE, reason="about 30 s: set DCX_REPORT_FIXTURE_CHECK=1")
def test_the_fixture_regenerates_byte_for_byte() -> None:
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "report_fixture.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_cache_that_cannot_be_written_is_not_kept(dcx, goals) -> None:
    catalog = goals[0]
    (catalog / DC / "private").mkdir(mode=0o700)
    (catalog / DC / "private" / "cache").write_text("not a folder")
    code, envelope = report(dcx, catalog)
    assert code == 0 and envelope["status"] == "ok"


def _in_process(root: Path, workers: str, monkeypatch: pytest.MonkeyPatch) -> tuple:
    from dcx.core.workspace import Workspace
    from dcx.ops import report as ops_report

    monkeypatch.setenv("DCX_REPORT_WORKERS", workers)
    monkeypatch.setattr(ops_report, "PARALLEL_FROM", 1)
    result = ops_report.report(workspaces=[Workspace(root)])
    return json.dumps(result.data, sort_keys=True), result.warnings, result.status


def test_workers_read_what_one_process_reads(goals, monkeypatch) -> None:
    """Forked workers (slices joined in order) against the sequential loop, with a tampered
    packet left out and a foreign-goal packet named, and a slice that fails in a worker
    (read again by the command)."""
    import os

    from dcx.ops import report as ops_report

    catalog, checkout = goals
    path = _packet(catalog, "proposal", "ttl-keep")
    path.chmod(0o644)
    path.write_text(path.read_text().replace('"confidence": 0.8', '"confidence": 0.1'))
    foreign = _packet(checkout, "outcome", "retry-budget")
    shutil.copy2(foreign, catalog / DC / "packets" / "outcome" / foreign.name)
    _index(catalog, "ttl-keep", "outcome", foreign.stem)
    assert ops_report._workers(7) == 1  # below PARALLEL_FROM
    monkeypatch.setattr(ops_report, "PARALLEL_FROM", 1)
    monkeypatch.setenv("DCX_REPORT_WORKERS", "2")
    assert ops_report._workers(7) == min(2, len(os.sched_getaffinity(0)))
    one = _in_process(catalog, "1", monkeypatch)
    assert one[2] == "partial" and len(json.loads(one[0])["left_out"]) == 2
    assert _in_process(catalog, "2", monkeypatch) == one

    from dcx.core.workspace import Workspace
    from dcx.state.decisions import decision_ids

    parent = os.getpid()
    read = ops_report.Loaded._decision
    last = decision_ids(Workspace(catalog))[-1]  # in the last part: a forked child reads it

    here: list[str] = []

    def reading(self, ident: str) -> None:
        if os.getpid() == parent:
            here.append(ident)
        read(self, ident)

    monkeypatch.setattr(ops_report.Loaded, "_decision", reading)
    assert _in_process(catalog, "2", monkeypatch) == one
    assert last not in here  # the child's answer was used, not read again here

    again: list[str] = []

    def failing_in_a_worker(self, ident: str) -> None:
        if ident == last:
            if os.getpid() != parent:
                raise RuntimeError("a worker fails")
            again.append(ident)
        read(self, ident)

    monkeypatch.setattr(ops_report.Loaded, "_decision", failing_in_a_worker)
    assert _in_process(catalog, "2", monkeypatch) == one
    assert again == [last]  # read again by the command, once
