from __future__ import annotations

import json
from pathlib import Path

from dcx_obelisk.rows import SUMMARIES, to_items

SAMPLE = Path(__file__).resolve().parents[3] / "fixtures" / "obelisk" / "sample-hits.json"


def _hits() -> list[dict]:
    return json.loads(SAMPLE.read_text())


def test_keeps_only_the_visible_turns_of_the_exact_session() -> None:
    items, dropped = to_items(_hits(), "codex:thread-a", 8)
    assert [i["content"].split(":")[0] for i in items] == ["KEEP user", "KEEP assistant"]
    assert dropped == len(_hits()) - 2
    assert [i["resource_ref"] for i in items] == [
        "obelisk:codex:thread-a:codex:thread-a:000012",
        "obelisk:codex:thread-a:codex:thread-a:000013",
    ]
    assert {i["summary"] for i in items} <= set(SUMMARIES.values())


def test_every_drop_rule_is_needed() -> None:
    # each dropped sample row, made to pass every *other* rule, is dropped for its own reason
    hits = _hits()
    assert not to_items([h for h in hits if "DROP" in h["message"]["text"]], "codex:thread-a", 8)[0]
    assert not to_items(hits, "codex:thread", 8)[0]  # a prefix of the id is not the session
    assert not to_items(hits, "codex:thread-a:000012", 8)[0]


def test_score_is_negated_rank_and_orders_best_first() -> None:
    hits = _hits()
    keep = [h for h in hits if h["message"]["text"].startswith("KEEP")]
    keep[0]["rank"], keep[1]["rank"] = -1.0, -9.0
    items, _ = to_items(keep, "codex:thread-a", 8)
    assert [i["score"] for i in items] == [9.0, 1.0]
    keep[0]["rank"] = None  # degraded like-scan: no score, listed last
    items, _ = to_items(keep, "codex:thread-a", 8)
    assert [i["score"] for i in items] == [9.0, None]


def test_max_results_and_malformed_rows() -> None:
    items, _ = to_items(_hits(), "codex:thread-a", 1)
    assert len(items) == 1 and items[0]["score"] == 7.25
    junk = [
        None,
        3,
        {"message": "x", "session": {}},
        {"message": {"uuid": 5}, "session": {"id": "codex:thread-a"}},
    ]
    assert to_items(junk, "codex:thread-a", 8) == ([], 4)


def test_duplicates_and_oversize_text_are_dropped() -> None:
    keep = [h for h in _hits() if h["message"]["text"].startswith("KEEP user")]
    twice = keep + json.loads(json.dumps(keep))
    assert len(to_items(twice, "codex:thread-a", 8)[0]) == 1
    keep[0]["message"]["text"] = "x" * 16_001
    assert to_items(keep, "codex:thread-a", 8)[0] == []
