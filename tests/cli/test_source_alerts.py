"""Freshness alerts and failure streaks over several scans (SPEC §5.5 v4; the reference's parity case).

The expected values are written out here from the SPEC's rule, not computed by dcx:
a source is ``source_failing`` after ``failure_alert_after`` (default 3) consecutive
failed attempts, ``source_stale`` when its last success is older than its
``freshness_seconds`` (3600 here), and a success clears both. Each scan receipt
carries the streak and what its attempt raised and cleared; ``dcx status`` shows the
alerts standing at its own time; ``dcx report`` counts raised and cleared per kind.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.sources import binding_block, configure, source_block

T0 = "2026-11-29T18:00:00Z"
# (observed_at, is source:flaky's folder there?, expected alerts object of its receipt or None)
STORY = [
    (T0, True, None),  # a success with nothing to say: no alerts object at all
    (
        "2026-11-29T18:10:00Z",
        False,
        {"failure_streak": 1, "active": [], "raised": [], "cleared": []},
    ),
    (
        "2026-11-29T18:20:00Z",
        False,
        {"failure_streak": 2, "active": [], "raised": [], "cleared": []},
    ),
    (  # the third consecutive failure: failing
        "2026-11-29T18:30:00Z",
        False,
        {
            "failure_streak": 3,
            "active": ["source_failing"],
            "raised": ["source_failing"],
            "cleared": [],
        },
    ),
    (  # 2 h after the last success (18:00) > 3600 s: stale too; failing stays raised once
        "2026-11-29T20:00:00Z",
        False,
        {
            "failure_streak": 4,
            "active": ["source_failing", "source_stale"],
            "raised": ["source_stale"],
            "cleared": [],
        },
    ),
    (  # back: a success clears both
        "2026-11-29T20:10:00Z",
        True,
        {
            "failure_streak": 0,
            "active": [],
            "raised": [],
            "cleared": ["source_failing", "source_stale"],
        },
    ),
]


def _registry(root: Path, alerts_table: str = "") -> None:
    configure(
        root,
        binding_block()
        + source_block("source:steady", '"steady"')
        + source_block("source:flaky", '"flaky"'),
    )
    if alerts_table:
        profile = root / ".decision-context" / "profile.toml"
        profile.write_text(profile.read_text() + alerts_table)


def _scan(dcx, root: Path, at: str) -> dict[str, dict]:
    result = dcx("-C", str(root), "scan", "--observed-at", at, "--format", "json")
    assert result.exit_code == 0, result.stdout + result.stderr
    return {r["source_id"]: r for r in result.json()["data"]["receipts"]}


def _status_alerts(dcx, root: Path, at: str, monkeypatch: pytest.MonkeyPatch) -> dict:
    monkeypatch.setenv("DCX_NOW", at)
    result = dcx("-C", str(root), "status", "--format", "json")
    assert result.exit_code == 0, result.stdout + result.stderr
    return result.json()["data"]["alerts"]


def test_a_failing_source_over_several_scans(dcx, fresh_ws: Path, monkeypatch) -> None:
    root = fresh_ws
    (root / "steady").mkdir()
    (root / "steady" / "a.md").write_text("steady\n")
    flaky = root / "flaky"
    flaky.mkdir()
    (flaky / "b.md").write_text("flaky\n")
    _registry(root)
    for at, present, expected in STORY:
        if present and not flaky.exists():
            (root / "flaky-away").rename(flaky)
        if not present and flaky.exists():
            flaky.rename(root / "flaky-away")
        receipts = _scan(dcx, root, at)
        assert "alerts" not in receipts["source:steady"], at  # a healthy source says nothing
        got = receipts["source:flaky"].get("alerts")
        if expected is None:
            assert got is None, at
        else:
            assert got == {"source_kind": "document", "failure_alert_after": 3, **expected}, at
        # scanning never commits, so the folder's one file is a change every time it is there
        assert receipts["source:flaky"]["status"] == ("completed" if present else "unavailable")

        if at == "2026-11-29T20:00:00Z":  # status at the same time: both alerts stand
            standing = _status_alerts(dcx, root, "2026-11-29T20:05:00Z", monkeypatch)
            assert standing == {
                "counts": {"source_failing": 1, "source_stale": 1},
                "sources": [
                    {
                        "source_id": "source:flaky",
                        "source_kind": "document",
                        "failure_streak": 4,
                        "alerts": ["source_failing", "source_stale"],
                    }
                ],
            }
            text = dcx("-C", str(root), "status").stdout
            assert (
                "alert     source:flaky: source_failing, source_stale, 4 consecutive failure(s)"
                in text
            )
    assert _status_alerts(dcx, root, "2026-11-29T20:15:00Z", monkeypatch) == {
        "counts": {},
        "sources": [],
    }
    monkeypatch.setenv("DCX_NOW", T0)
    report = dcx("-C", str(root), "report", "--format", "json")
    assert report.exit_code == 0, report.stdout + report.stderr
    rows = [
        {"source_kind": "document", "alert": "source_failing", "raised": 1, "cleared": 1},
        {"source_kind": "document", "alert": "source_stale", "raised": 1, "cleared": 1},
    ]
    data = report.json()["data"]
    assert data["goals"][0]["source_alerts"] == rows and data["source_alerts"] == rows
    assert "source_failing" in dcx("-C", str(root), "report").stdout


def test_status_sees_a_source_go_stale_without_a_scan(dcx, fresh_ws: Path, monkeypatch) -> None:
    """status reads the record at its own time: the last success (18:00) ages past 3600 s."""
    (fresh_ws / "steady").mkdir()
    (fresh_ws / "flaky").mkdir()
    _registry(fresh_ws)
    _scan(dcx, fresh_ws, T0)
    assert _status_alerts(dcx, fresh_ws, "2026-11-29T19:00:00Z", monkeypatch)["sources"] == []
    late = _status_alerts(dcx, fresh_ws, "2026-11-29T19:00:01Z", monkeypatch)
    assert late["counts"] == {"source_stale": 2}
    assert [r["source_id"] for r in late["sources"]] == [
        "source:steady",
        "source:flaky",
    ]  # registry order


def test_failure_alert_after_is_a_profile_key(dcx, fresh_ws: Path) -> None:
    (fresh_ws / "steady").mkdir()
    _registry(fresh_ws, "\n[alerts]\nfailure_alert_after = 1\n")
    receipts = _scan(dcx, fresh_ws, T0)
    assert receipts["source:flaky"]["alerts"] == {
        "source_kind": "document",
        "failure_streak": 1,
        "failure_alert_after": 1,
        "active": ["source_failing"],
        "raised": ["source_failing"],
        "cleared": [],
    }


@pytest.mark.parametrize("value", ["0", "1001", "true", '"3"'])
def test_failure_alert_after_is_validated(dcx, fresh_ws: Path, value: str) -> None:
    _registry(fresh_ws, f"\n[alerts]\nfailure_alert_after = {value}\n")
    result = dcx("-C", str(fresh_ws), "status", "--format", "json")
    assert result.exit_code == 2
    error = result.json()["data"]["activation"]["error"]
    assert error["message"].startswith(
        ".decision-context/profile.toml: alerts.failure_alert_after"
    ), error


def test_the_record_is_private_and_prepare_show_content_writes_none(dcx, fresh_ws: Path) -> None:
    (fresh_ws / "steady").mkdir()
    _registry(fresh_ws)
    record = fresh_ws / ".decision-context" / "private" / "source-health.json"
    shown = dcx("-C", str(fresh_ws), "prepare", "--decision-id", "d1", "--show-content")
    assert shown.exit_code == 0, shown.stdout + shown.stderr
    assert not record.exists()
    _scan(dcx, fresh_ws, T0)
    body = json.loads(record.read_text())
    assert body["schema_version"] == "dcx_source_health_v0"
    assert body["sources"]["source:flaky"] == {"failures": 1, "alerts": []}
    assert body["sources"]["source:steady"] == {"failures": 0, "last_success_at": T0, "alerts": []}
    assert oct(record.stat().st_mode & 0o777) == "0o600"
