"""The fast path of `dcx scan` against its typer command (issue 11: the whole no-change scan).

The oracle is the typer app itself, as in test_fast_readers.py: for every argv
shape one process runs ``dcx.cli.main`` (which answers the shapes it fully
understands without importing typer) and another runs the typer app; stdout,
stderr and the exit code must be byte-identical, and the fast process must
have taken the path it should (no typer; rich only for text), or fallen
through to typer for the shapes it must leave alone.

The workspace is the example with two more sources: an on-demand one (only
scanned when named) and a p0 source whose folder is missing (so every full
scan is ``partial``, fail-open). A file is edited after the first scan so the
receipts list changes. The fast side runs every shape first, then the typer
side: a scan stores content-addressed receipts under the fixed clock, so the
second side finds the same refs already stored and must still print the same.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_fast_readers import FAST, TYPER, _run_side

EXTRA_SOURCES = """
[[sources]]
source_id = "source:notes"
provider_id = "files"
source_kind = "document"
priority = "p1"
evidence_level = "s2"
objectives = ["origin-latency"]
scan_mode = "on_demand"
exact_read_policy = "never"
freshness_seconds = 86400
locator = { path = "docs" }

[[sources]]
source_id = "source:gone"
provider_id = "files"
source_kind = "document"
priority = "p0"
evidence_level = "s1"
objectives = ["origin-latency"]
scan_mode = "incremental"
exact_read_policy = "always"
freshness_seconds = 86400
locator = { path = "no-such-folder" }
"""


def _cases(root: Path, other: Path) -> list[tuple[str, list[str], dict[str, str], str]]:
    c = ["-C", str(root)]
    docs = "source:authority:docs"
    return [
        ("scan", [*c, "scan"], {}, FAST),
        ("scan-json", [*c, "scan", "--format", "json"], {}, FAST),
        ("scan-JSON=", [*c, "scan", "--format=JSON"], {}, FAST),
        ("scan-env-json", [*c, "scan"], {"DCX_FORMAT": "json"}, FAST),
        ("scan-env-empty", [*c, "scan"], {"DCX_FORMAT": ""}, FAST),
        ("scan-source", [*c, "scan", "--source", docs], {}, FAST),
        ("scan-source=-json", [*c, "scan", f"--source={docs}", "--format", "json"], {}, FAST),
        ("scan-two-sources", [*c, "scan", "--source", docs, "--source", "source:notes"], {}, FAST),
        (
            "scan-on-demand-json",
            [*c, "scan", "--source", "source:notes", "--format", "json"],
            {},
            FAST,
        ),
        ("scan-unknown-source", [*c, "scan", "--source", "source:nope"], {}, FAST),
        (
            "scan-unknown-source-json",
            [*c, "scan", "--source", "source:nope", "--format", "json"],
            {},
            FAST,
        ),
        ("scan-agent", [*c, "scan", "--agent-id", "agent-a"], {}, FAST),
        ("scan-agent=-twice", [*c, "scan", "--agent-id=agent-b", "--agent-id=agent-a"], {}, FAST),
        ("scan-unknown-agent", [*c, "scan", "--agent-id", "agent-z", "--format", "json"], {}, FAST),
        ("scan-env-agent", [*c, "scan"], {"DCX_AGENT_ID": "agent-z"}, FAST),
        (
            "scan-observed-at",
            [*c, "scan", "--observed-at", "2026-11-30T08:00:00Z", "--format", "json"],
            {},
            FAST,
        ),
        ("scan-observed-at-bad", [*c, "scan", "--observed-at", "yesterday"], {}, FAST),
        (
            "scan-observed-at-bad-json",
            [*c, "scan", "--observed-at=20261130T080000Z", "--format", "json"],
            {},
            FAST,
        ),
        ("scan-no-color-verbose", ["--no-color", "-v", *c, "scan"], {}, FAST),
        ("scan-narrow", [*c, "scan"], {"COLUMNS": "40"}, FAST),
        ("scan-workspace=", [f"--workspace={root}", "scan", "--format", "json"], {}, FAST),
        ("scan-no-workspace", ["-C", str(other), "scan"], {}, FAST),
        ("scan-no-workspace-json", ["-C", str(other), "scan", "--format", "json"], {}, FAST),
        # shapes the fast path leaves to typer
        ("scan-help", [*c, "scan", "--help"], {}, TYPER),
        ("scan-unknown-flag", [*c, "scan", "--bogus"], {}, TYPER),
        ("scan-positional", [*c, "scan", docs], {}, TYPER),
        ("scan-dashdash", [*c, "scan", "--"], {}, TYPER),
        ("scan-source-missing-value", [*c, "scan", "--source"], {}, TYPER),
        ("scan-source-empty", [*c, "scan", "--source", ""], {}, TYPER),
        ("scan-agent-dash", [*c, "scan", "--agent-id", "-x"], {}, TYPER),
        ("scan-format-yaml", [*c, "scan", "--format", "yaml"], {}, TYPER),
        ("scan-env-yaml", [*c, "scan"], {"DCX_FORMAT": "yaml"}, TYPER),
        ("scan-short-option", [*c, "scan", "-s", docs], {}, TYPER),
    ]


@pytest.fixture
def workspace(example: Path, tmp_path: Path) -> tuple[Path, Path]:
    registry = example / ".decision-context" / "sources.toml"
    registry.write_text(registry.read_text() + EXTRA_SOURCES)
    other = tmp_path / "not-a-goal"
    other.mkdir()
    return example, other


def _compare(shapes, tmp_path: Path, root: Path):
    cases = [
        {
            "args": args,
            "env": env,
            "unset": [name for name in ("DCX_FORMAT", "DCX_AGENT_ID") if name not in env],
        }
        for _, args, env, _ in shapes
    ]
    # each scan is an attempt that moves its source's failure streak (SPEC §5.5 v4): both sides
    # start from the same private record, so they run the same sequence of attempts
    record = root / ".decision-context" / "private" / "source-health.json"
    before = record.read_bytes() if record.exists() else None
    fast = _run_side("fast", cases, tmp_path)
    if before is None:
        record.unlink(missing_ok=True)
    else:
        record.write_bytes(before)
    slow = _run_side("typer", cases, tmp_path)
    return list(zip(shapes, fast, slow, strict=True))


def test_fast_and_typer_scans_print_the_same_bytes(workspace, tmp_path: Path) -> None:
    root, other = workspace
    # a first scan with changes to list: edit an authority file (the cursors are the example's committed ones)
    doc = next((root / "docs").rglob("*.md"))
    doc.write_text(doc.read_text() + "\nedited after the cursor\n")
    compared = _compare(_cases(root, other), tmp_path, root)
    codes = set()
    for (name, args, env, path), fast, slow in compared:
        assert (fast["stdout"], fast["stderr"], fast["code"]) == (
            slow["stdout"],
            slow["stderr"],
            slow["code"],
        ), name
        assert fast["stdout"] or fast["stderr"], (
            name
        )  # an empty answer would compare equal for free
        assert b"Traceback" not in fast["stderr"], name
        assert "typer" in slow["mods"]
        if path == FAST:
            assert "typer" not in fast["mods"], f"{name}: fell through to typer"
            json_out = any("json" in a.lower() for a in args) or env.get("DCX_FORMAT") == "json"
            assert ("rich" in fast["mods"]) == (not json_out and fast["code"] == 0), (
                f"{name}: rich {fast['mods']}"
            )
        else:
            assert "typer" in fast["mods"], f"{name}: answered by the fast path"
        codes.add(fast["code"])
    assert {0, 2, 3} <= codes
    by_name = {shape[0]: fast for shape, fast, _ in compared}
    full = json.loads(by_name["scan-json"]["stdout"])
    assert full["status"] == "partial"  # source:gone is unavailable, fail-open
    receipts = {r["source_id"]: r for r in full["data"]["receipts"]}
    assert set(receipts) == {"source:authority:docs", "source:gone"}
    assert (
        receipts["source:authority:docs"]["changed_count"] >= 1
        and receipts["source:gone"]["status"] == "unavailable"
    )
    on_demand = json.loads(by_name["scan-on-demand-json"]["stdout"])
    assert [r["source_id"] for r in on_demand["data"]["receipts"]] == ["source:notes"]
    assert (
        json.loads(by_name["scan-unknown-source-json"]["stdout"])["error"]["code"]
        == "unknown_source"
    )
    assert b"receipt(s) stored" in by_name["scan"]["stdout"]
    assert (
        by_name["scan-observed-at-bad"]["code"] == 2
        and b"--observed-at" in by_name["scan-observed-at-bad"]["stderr"]
    )
