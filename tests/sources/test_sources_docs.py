"""docs/ stays true for the source plane: every reason code and receipt field is documented."""

from __future__ import annotations

from dcx.packets import coverage, freshness, scan
from dcx.sources import base
from tests.support.workspace import REPO

SOURCES_MD = (REPO / "docs" / "sources.md").read_text()
EXIT_CODES_MD = (REPO / "docs" / "exit-codes.md").read_text()
REASONS = sorted(
    {
        value
        for name, value in vars(base).items()
        if name.isupper()
        and isinstance(value, str)
        and "_" in value
        and name not in ("COMPLETED", "NO_CHANGE", "FAILED", "UNAVAILABLE", "VERIFIED", "DELETED")
    }
    | {
        "locator_outside_root",
        "locator_inside_workspace",
        "locator_missing",
        "cursor_invalid",
        "cursor_tree_missing",
    }
)


def test_every_reason_code_is_documented() -> None:
    assert "provider_scan_failed" in REASONS and "exact_read_not_text" in REASONS
    for code in REASONS:
        assert f"`{code}`" in SOURCES_MD, code
        assert code in EXIT_CODES_MD, code


def test_every_packet_field_is_documented() -> None:
    for spec in (scan.SPEC, coverage.SPEC, freshness.SPEC):
        for name in spec.shape.fields:
            assert name in SOURCES_MD, f"{spec.schema_version}.{name}"
    for shape in (scan.CHANGE, scan.TELEMETRY, coverage.ROW, freshness.ROW):
        for name in shape.fields:
            assert name in SOURCES_MD, f"{shape.title}.{name}"


def test_scan_command_is_documented() -> None:
    commands = (REPO / "docs" / "commands.md").read_text()
    assert "## dcx scan" in commands and "--source" in commands
