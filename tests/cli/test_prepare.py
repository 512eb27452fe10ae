"""dcx prepare: authority wins, checkpoint dispositions, fail-open (issue 6)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cycle import QUERY, RUNBOOK, D, prepared, stale_runbook
from tests.support.workspace import cursor_bytes

CANARY_QUERY = "zebracanary roll back origin p99"


def test_current_recall_is_accepted_with_exact_read(dcx, example: Path) -> None:
    data = prepared(dcx, example)
    evidence = data["assembly"]["evidence"]
    accepted = evidence["recalled_claims"]
    assert accepted and all(c["exact_read_verified"] is True for c in accepted)
    revisions = {r["source_ref"]: r for r in evidence["source_revisions"]}
    for claim in accepted:  # every accepted claim cites a current revision listed in the packet
        assert revisions[claim["source_ref"]]["revision"] == claim["source_revision"]


def test_recall_of_moved_authority_is_stale_not_accepted(dcx, example: Path) -> None:
    data = prepared(dcx, example)
    evidence = data["assembly"]["evidence"]
    stale = [
        c
        for c in evidence["stale_or_rejected_claims"]
        if c["reason_code"] == "stale_authority_revision"
    ]
    assert len(stale) == 1
    assert stale[0]["claim_id"] not in {c["claim_id"] for c in evidence["recalled_claims"]}
    assert stale[0]["provider_ref"].startswith("provider-")


def test_preview_preserves_every_changed_source(dcx, example: Path) -> None:
    assert dcx("-C", str(example), "index").exit_code == 0
    result = dcx("-C", str(example), "prepare", "--decision-id", D, "--format", "json")
    data = result.json()["data"]
    assert data["summary"]["preview"] is True
    rows = data["assembly"]["checkpoint"]["rows"]
    assert [(r["disposition"], r["reason_code"]) for r in rows] == [
        ("preserve", "rebase_incomplete")
    ]
    assert data["assembly"]["evidence"]["changed_facts"] == []
    text = dcx("-C", str(example), "prepare", "--decision-id", D)
    assert "PREVIEW" in text.stdout


def test_uncited_item_keeps_its_cursor(dcx, example: Path) -> None:
    rebase = {
        "changed_facts": [
            {
                "fact_id": "adr",
                "summary": "ADR-0007 records the 90 s TTL",
                "change_ref": {
                    "source_id": "source:authority:docs",
                    "path": "adr-0007-catalog-cache-ttl.md",
                },
            }
        ]
    }
    (example / "rebase.json").write_text(json.dumps(rebase))
    result = dcx(
        "-C",
        str(example),
        "prepare",
        "--decision-id",
        D,
        "--rebase",
        str(example / "rebase.json"),
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.stdout
    asm = result.json()["data"]["assembly"]
    assert [r["reason_code"] for r in asm["checkpoint"]["rows"]] == ["rebase_incomplete"]
    assert asm["rebase"]["status"] == "incomplete" and asm["rebase"]["uncited_change_count"] == 4
    assert "adr-0007" not in json.dumps(asm)  # the path was turned into a ref, never copied


def test_full_agent_rebase_is_ready(dcx, example: Path) -> None:
    docs = sorted(p.name for p in (example / "docs").glob("*.md"))
    facts = [
        {
            "fact_id": f"f{i}",
            "summary": "Authority document in force",
            "change_ref": {"source_id": "source:authority:docs", "path": name},
        }
        for i, name in enumerate(docs)
    ]
    (example / "rebase.json").write_text(json.dumps({"changed_facts": facts}))
    result = dcx(
        "-C",
        str(example),
        "prepare",
        "--decision-id",
        D,
        "--rebase",
        str(example / "rebase.json"),
        "--format",
        "json",
    )
    rows = result.json()["data"]["assembly"]["checkpoint"]["rows"]
    assert [(r["disposition"], r["reason_code"]) for r in rows] == [
        ("ready_after_writeback", "validated_rebase")
    ]


def test_rebase_citing_refs_of_another_run_is_refused(dcx, example: Path) -> None:
    rebase = {
        "changed_facts": [
            {
                "fact_id": "x",
                "summary": "Something else",
                "change_ref": {"source_id": "source:authority:docs", "path": "not-there.md"},
            }
        ]
    }
    (example / "rebase.json").write_text(json.dumps(rebase))
    result = dcx(
        "-C", str(example), "prepare", "--decision-id", D, "--rebase", str(example / "rebase.json")
    )
    assert result.exit_code == 1 and "rebase_refs_stale" in result.stderr
    assert not (example / ".decision-context" / "packets" / "assembly").exists()


@pytest.mark.parametrize(
    "body",
    [
        {
            "semantic_no_change": True,
            "changed_facts": [
                {"fact_id": "a", "summary": "s", "change_ref": "source-change-" + "0" * 32}
            ],
        },
        {"surprise": 1},
    ],
)
def test_bad_rebase_input_is_exit_2(dcx, example: Path, body) -> None:
    (example / "rebase.json").write_text(json.dumps(body))
    result = dcx(
        "-C", str(example), "prepare", "--decision-id", D, "--rebase", str(example / "rebase.json")
    )
    assert result.exit_code == 2


def test_exact_read_failure_keeps_cursor_and_marks_coverage_partial(
    dcx, example: Path, monkeypatch
) -> None:
    from dcx.sources import local_file, registry
    from dcx.sources.base import failed_read

    real = registry.BUILTINS["local-file"]

    def flaky_factory(*args, **kwargs):
        adapter = real(*args, **kwargs)
        original = adapter.exact_read

        def exact_read(source, item, max_bytes, deadline, observed_at):
            if item.resource_ref == RUNBOOK.name:  # the file changed between scan and read
                return failed_read(item, observed_at, "exact_read_revision_mismatch")
            return original(source, item, max_bytes, deadline, observed_at)

        adapter.exact_read = exact_read
        return adapter

    monkeypatch.setitem(registry.BUILTINS, "local-file", flaky_factory)
    del local_file
    result = dcx(
        "-C", str(example), "prepare", "--decision-id", D, "--auto-rebase", "--format", "json"
    )
    assert result.exit_code == 0
    envelope = result.json()
    asm = envelope["data"]["assembly"]
    assert [(r["disposition"], r["reason_code"]) for r in asm["checkpoint"]["rows"]] == [
        ("preserve", "exact_read_incomplete")
    ]
    assert asm["coverage_status"] == "partial" and envelope["status"] == "partial"
    assert any("partial" in w for w in envelope["warnings"])
    text = dcx("-C", str(example), "prepare", "--decision-id", D, "--auto-rebase")
    assert "partial" in text.stdout


def test_unavailable_provider_keeps_authority_evidence(dcx, example: Path) -> None:
    # no `dcx index`: the bm25 index is missing, recall fails open
    result = dcx(
        "-C",
        str(example),
        "prepare",
        "--decision-id",
        D,
        "--auto-rebase",
        "--query",
        QUERY,
        "--query-summary",
        "TTL rollback criteria",
        "--format",
        "json",
    )
    assert result.exit_code == 0
    asm = result.json()["data"]["assembly"]
    health = {h["provider"]: h for h in asm["evidence"]["provider_health"]}
    assert (
        health["bm25"]["status"] == "unavailable"
        and health["bm25"]["reason_code"] == "index_missing"
    )
    assert health["files"]["status"] == "healthy"
    assert len(asm["evidence"]["changed_facts"]) == 5
    assert asm["retrieval"]["status"] == "unavailable"
    assert [r["disposition"] for r in asm["checkpoint"]["rows"]] == ["ready_after_writeback"]
    assert result.json()["status"] == "partial"


def test_previously_accepted_claims_are_demoted_when_authority_moves(dcx, example: Path) -> None:
    assert dcx("-C", str(example), "index").exit_code == 0
    args = [
        "-C",
        str(example),
        "prepare",
        "--decision-id",
        D,
        "--auto-rebase",
        "--query",
        QUERY,
        "--query-summary",
        "TTL rollback criteria",
        "--format",
        "json",
    ]
    first = dcx(*args).json()["data"]["assembly"]["evidence"]
    runbook_claims = [c["claim_id"] for c in first["recalled_claims"]]
    assert runbook_claims
    stale_runbook(example)
    second = dcx(
        "-C", str(example), "prepare", "--decision-id", D, "--auto-rebase", "--format", "json"
    )
    evidence = second.json()["data"]["assembly"]["evidence"]
    demoted = {c["claim_id"]: c for c in evidence["stale_or_rejected_claims"]}
    assert demoted and set(demoted) <= set(runbook_claims)
    assert all(c["reason_code"] == "stale_authority_revision" for c in demoted.values())
    assert second.json()["data"]["assembly"]["rebase"]["demoted_claim_count"] == len(demoted)


def test_show_content_prints_content_and_writes_nothing(dcx, example: Path) -> None:
    assert dcx("-C", str(example), "index").exit_code == 0
    dc = example / ".decision-context"
    before = {p: p.read_bytes() for p in dc.rglob("*") if p.is_file()}
    result = dcx(
        "-C",
        str(example),
        "prepare",
        "--decision-id",
        D,
        "--show-content",
        "--query",
        CANARY_QUERY,
        "--query-summary",
        "TTL rollback criteria",
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.stdout
    content = result.json()["data"]["content"]
    assert content["visibility"] == "local_private_transient"
    assert any("Freeze deploys" in (i["content"] or "") for i in content["exact_reads"])
    after = {p: p.read_bytes() for p in dc.rglob("*") if p.is_file()}
    assert after == before


def test_flags_are_exclusive_and_query_needs_a_summary(dcx, example: Path) -> None:
    both = dcx("-C", str(example), "prepare", "--decision-id", D, "--auto-rebase", "--baseline")
    assert both.exit_code == 2 and "cannot be combined" in both.stderr
    summary = dcx("-C", str(example), "prepare", "--decision-id", D, "--query", "x")
    assert summary.exit_code == 2 and "--query-summary" in summary.stderr


def test_baseline_adopts_every_source(dcx, example: Path) -> None:
    result = dcx(
        "-C", str(example), "prepare", "--decision-id", D, "--baseline", "--format", "json"
    )
    asm = result.json()["data"]["assembly"]
    assert [(r["disposition"], r["reason_code"]) for r in asm["checkpoint"]["rows"]] == [
        ("ready_after_writeback", "baseline_adopted")
    ]
    assert [f["summary"] for f in asm["evidence"]["changed_facts"]] == [
        "Adopted the current state of source:authority:docs"
    ]


def test_prepare_never_touches_the_cursor_file(dcx, example: Path) -> None:
    prepared(dcx, example)
    assert cursor_bytes(example) is None


def test_prepare_snapshots(dcx, example: Path, snapshot_json) -> None:
    data = prepared(dcx, example)
    asm = data["assembly"]
    assert {"assembly": asm} == snapshot_json


def test_no_canary_from_sources_or_query_reaches_public_files(dcx, example: Path) -> None:
    (example / "docs" / "canary-filename-quokka7.md").write_text(
        "# Notes\n\nThe canary-content-narwhal9 sentence sits in the authority text for this test.\n"
    )
    data = prepared(dcx, example, query=False)
    result = dcx(
        "-C",
        str(example),
        "prepare",
        "--decision-id",
        "other",
        "--auto-rebase",
        "--query",
        "narwhal9 canary-query-okapi3",
        "--query-summary",
        "TTL rollback criteria",
        "--format",
        "json",
    )
    assert result.exit_code == 0 and data
    public = [
        p
        for p in (example / ".decision-context").rglob("*")
        if p.is_file()
        and "private" not in p.parts
        and p.name not in ("profile.toml", "sources.toml")
    ]
    for path in public:
        text = path.read_text(errors="replace")
        for canary in ("quokka7", "narwhal9", "okapi3"):
            assert canary not in text, path
    assert (
        "okapi3" not in result.stdout
        and "narwhal9" not in result.stdout
        and "quokka7" not in result.stdout
    )


def test_refused_rebase_writes_no_private_state_either(dcx, example: Path) -> None:
    rebase = {
        "changed_facts": [
            {
                "fact_id": "x",
                "summary": "Something else",
                "change_ref": {"source_id": "source:authority:docs", "path": "not-there.md"},
            }
        ]
    }
    (example / "rebase.json").write_text(json.dumps(rebase))
    result = dcx(
        "-C", str(example), "prepare", "--decision-id", D, "--rebase", str(example / "rebase.json")
    )
    assert result.exit_code == 1
    private = example / ".decision-context" / "private"
    assert not (private / "freshness.json").exists() and not (private / "refs.sqlite").exists()


def test_every_cited_ref_is_a_listed_source_revision(dcx, example: Path) -> None:
    assert dcx("-C", str(example), "index").exit_code == 0
    args = [
        "-C",
        str(example),
        "prepare",
        "--decision-id",
        D,
        "--auto-rebase",
        "--query",
        QUERY,
        "--query-summary",
        "TTL rollback criteria",
        "--format",
        "json",
    ]
    assert dcx(*args).exit_code == 0
    (example / RUNBOOK).unlink()  # the authority of an accepted claim disappears
    evidence = dcx(
        "-C", str(example), "prepare", "--decision-id", D, "--auto-rebase", "--format", "json"
    ).json()["data"]["assembly"]["evidence"]
    listed = {row["source_ref"] for row in evidence["source_revisions"]}
    cited = {
        r["source_ref"]
        for key in ("changed_facts", "recalled_claims", "stale_or_rejected_claims")
        for r in evidence[key]
        if "source_ref" in r
    }
    assert cited and cited <= listed
    assert any(
        c["reason_code"] == "stale_authority_revision" for c in evidence["stale_or_rejected_claims"]
    )
