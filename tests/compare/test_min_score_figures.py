"""The figures docs/recall.md gives for OpenViking's ``min_score`` (SPEC §6.4 v4), recomputed from
the compare fixture's real 0.5.2 recordings and the hand-judged qrels, so the page stays true.

A recorded hit's URI names its file: ``viking://resources/compare-corpus/<dir>/<stem>/<stem>.md``
is the document ``<dir>/<stem>.md`` of ``qrels-file.txt``.
"""

from __future__ import annotations

import hashlib
import json

from tests.support.workspace import REPO

FIXTURE = REPO / "fixtures" / "compare"
PREFIX = "viking://resources/compare-corpus/"


def _scores() -> dict[str, list[tuple[str, float]]]:
    recordings = json.loads((FIXTURE / "openviking" / "recordings.json").read_text())
    out = {}
    for line in (FIXTURE / "queries.jsonl").read_text().splitlines():
        query = json.loads(line)
        case = recordings["find"][hashlib.sha256(query["query"].encode()).hexdigest()]
        hits = json.loads(case["stdout"])["result"]["resources"]
        docs = []
        for hit in hits:
            folder, stem, name = hit["uri"].removeprefix(PREFIX).rsplit("/", 2)
            assert name == f"{stem}.md"
            docs.append((f"{folder}/{name}", hit["score"]))
        out[query["query_id"]] = docs
    return out


def _relevant() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for line in (FIXTURE / "qrels-file.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            qid, _, doc, grade = line.split()
            if int(grade) >= 1:
                out.setdefault(qid, set()).add(doc)
    return out


def test_the_documented_min_score_figures() -> None:
    scores, relevant = _scores(), _relevant()
    answerable = [q for q in scores if q in relevant]
    unanswerable = [q for q in scores if q not in relevant]
    assert (len(answerable), len(unanswerable)) == (32, 4)
    assert {len(hits) for hits in scores.values()} == {32}
    lows = [min(s for _, s in hits) for hits in scores.values()]
    assert (round(min(lows), 2), round(max(lows), 2)) == (0.44, 0.57)
    tops = [max(s for _, s in scores[q]) for q in answerable]
    assert (round(min(tops), 3), round(max(tops), 3)) == (0.554, 0.878)
    best = [max(s for d, s in scores[q] if d in relevant[q]) for q in answerable]
    assert (round(min(best), 3), round(max(best), 3)) == (0.552, 0.878)
    un_tops = [max(s for _, s in scores[q]) for q in unanswerable]
    assert (round(min(un_tops), 3), round(max(un_tops), 3)) == (0.622, 0.69)
    # per floor: (unanswerable emptied, answerable emptied, answerable losing its best relevant hit)
    table = {
        floor: (
            sum(1 for t in un_tops if t < floor),
            sum(1 for t in tops if t < floor),
            sum(1 for b in best if b < floor),
        )
        for floor in (0.55, 0.6, 0.65, 0.7)
    }
    assert table == {0.55: (0, 0, 0), 0.6: (0, 2, 4), 0.65: (1, 9, 10), 0.7: (4, 17, 17)}
