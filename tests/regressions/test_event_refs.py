"""Issue 11 §3: short event refs resolve in `dcx show` and `commit --event-id` like packet refs."""

from __future__ import annotations

import json
from pathlib import Path

from dcx.state.events import dcx_event_id
from tests.support.cycle import D, prepared, through_writeback


def _events(root: Path) -> list[dict]:
    return [
        json.loads(line)
        for line in (root / ".decision-context" / "events.jsonl").read_text().splitlines()
    ]


def test_show_resolves_an_event_by_full_id_and_by_unique_prefix(dcx, cycled: Path) -> None:
    event = _events(cycled)[0]
    for text in (
        event["event_id"],
        event["event_id"][:18],
        event["event_id"].rsplit("-", 1)[1][:8],
    ):
        result = dcx("-C", str(cycled), "show", text, "--format", "json")
        assert result.exit_code == 0, (text, result.stderr)
        assert result.json() == event
        people = dcx("-C", str(cycled), "show", text)
        assert (
            people.exit_code == 0
            and event["event_id"] in people.stdout
            and "validation" in people.stdout
        )


def test_unknown_event_prefix_is_ref_not_found(dcx, cycled: Path) -> None:
    result = dcx("-C", str(cycled), "show", "dcx-event-ffffffff", "--format", "json")
    assert result.exit_code == 2 and result.json()["error"]["code"] == "ref_not_found"


def test_commit_accepts_a_unique_event_prefix(dcx, example: Path) -> None:
    prepared(dcx, example)
    event_id = through_writeback(dcx, example)
    result = dcx(
        "-C",
        str(example),
        "commit",
        "--decision-id",
        D,
        "--event-id",
        event_id[:16],
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.stdout + result.stderr
    assert result.json()["data"]["receipt"]["event_id"] == event_id


def _planted(root: Path, hexes: list[str]) -> list[str]:
    """Append events whose ids share a prefix (hand-made: only their ids matter to resolution)."""
    log = root / ".decision-context" / "events.jsonl"
    ids = []
    with log.open("a") as handle:
        for n, _ in enumerate(hexes):
            body = {**_events(root)[0], "summary": f"planted {n}"}
            body["event_id"] = dcx_event_id(body)
            ids.append(body["event_id"])
            handle.write(json.dumps(body, sort_keys=True) + "\n")
    return ids


def test_ambiguous_event_prefix_lists_the_candidates(dcx, cycled: Path) -> None:
    ids = [e["event_id"] for e in _events(cycled)] + _planted(cycled, ["a"] * 40)
    # some 1-hex-digit prefix is shared by at least two of the 41 ids (pigeonhole over 16 digits)
    first = [i.rsplit("-", 1)[1][0] for i in ids]
    digit = next(d for d in first if first.count(d) > 1)
    shared = [i for i, d in zip(ids, first, strict=True) if d == digit]
    text = "dcx-event-" + digit
    for args in (("show", text), ("commit", "--decision-id", D, "--event-id", text)):
        result = dcx("-C", str(cycled), *args, "--format", "json")
        assert result.exit_code == 2, (args, result.stdout)
        error = result.json()["error"]
        assert error["code"] == "ref_ambiguous" and error["hint"]
        for full in shared[:6]:
            assert full[:18] in error["message"]
