"""Authority wins for recall from providers other than bm25: matched by content."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from tests.support.cycle import D
from tests.support.extensions import install, manifest_text

ADR = (
    "Lower the edge cache TTL for the catalog routes from 900 s to 90 s and add\n"
    "stale-while-revalidate of 30 s."
)

SCRIPT = """#!/usr/bin/env python3
import json, sys
if "--doctor" in sys.argv:
    sys.exit(0)
json.load(sys.stdin)
items = {items}
json.dump({{"schema_version": "decision_context_advisory_retrieve_response_v0", "ok": True,
           "status": "completed", "reason_code": None, "items": items}}, sys.stdout)
"""


def _extension(tmp: Path, items: list[dict]) -> Path:
    folder = tmp / "memory-ext"
    folder.mkdir()
    script = folder / "memory.py"
    script.write_text(SCRIPT.format(items=repr(items)))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    (folder / "extension.toml").write_text(manifest_text("memory-ext", "./memory.py"))
    return folder / "extension.toml"


def _profile(root: Path) -> None:
    path = root / ".decision-context" / "profile.toml"
    path.write_text(
        path.read_text()
        .replace('provider = "bm25"', 'provider = "extension"')
        .replace("max_results = 2", "max_results = 3")
    )


def test_content_matched_recall_is_accepted_or_rejected_by_authority(
    dcx, example: Path, tmp_path: Path
) -> None:
    items = [
        {
            "resource_ref": "memory:adr",
            "summary": "Remembered ADR text",
            "content": ADR,
            "score": 0.9,
        },
        {
            "resource_ref": "memory:wrong",
            "summary": "Remembered a different TTL",
            "content": ADR.replace("90 s", "120 s"),
            "score": 0.8,
        },
        {
            "resource_ref": "host-session:codex:thread-a:1",
            "summary": "A conversation turn",
            "content": ADR,
            "score": 0.7,
        },
    ]
    install(example, _extension(tmp_path, items))
    _profile(example)
    assert dcx("-C", str(example), "index").exit_code == 0
    result = dcx(
        "-C",
        str(example),
        "prepare",
        "--decision-id",
        D,
        "--auto-rebase",
        "--query",
        "catalog ttl",
        "--query-summary",
        "TTL history",
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.stdout
    evidence = result.json()["data"]["assembly"]["evidence"]
    assert [c["summary"] for c in evidence["recalled_claims"]] == ["Remembered ADR text"]
    reasons = {c["summary"]: c["reason_code"] for c in evidence["stale_or_rejected_claims"]}
    assert reasons == {
        "Remembered a different TTL": "unverifiable_recall",
        "A conversation turn": "conversation_not_authority",
    }
    assert "memory:adr" not in json.dumps(result.json()) and ADR not in json.dumps(evidence)
