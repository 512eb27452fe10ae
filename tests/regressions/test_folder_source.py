"""Issue 11 §3: a folder source with no include/exclude (``locator = "docs"``)."""

from __future__ import annotations

from pathlib import Path

from tests.support.cycle import QUERY, D, prepared, through_writeback

SOURCES = Path(".decision-context") / "sources.toml"


def test_auto_rebase_reads_unchanged_authority_of_a_plain_folder_locator(
    dcx, example: Path
) -> None:
    registry = example / SOURCES
    registry.write_text(
        registry.read_text().replace(
            'locator = { path = "docs", include = ["**/*.md"] }', 'locator = "docs"'
        )
    )
    prepared(dcx, example)
    event_id = through_writeback(dcx, example)
    assert (
        dcx("-C", str(example), "commit", "--decision-id", D, "--event-id", event_id).exit_code == 0
    )
    # every file is now unchanged: the recalled claims are judged by reading authority afresh
    result = dcx(
        "-C",
        str(example),
        "prepare",
        "--decision-id",
        "next",
        "--auto-rebase",
        "--query",
        QUERY,
        "--query-summary",
        "TTL rollback criteria",
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.stdout + result.stderr
    accepted = result.json()["data"]["assembly"]["evidence"]["recalled_claims"]
    assert accepted and all(c["exact_read_verified"] for c in accepted)
