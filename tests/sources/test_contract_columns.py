"""The scan contract's column checks (a fast path for large scans) against its item loop.

The oracle is the item-by-item loop of ``scan_contract_problem`` (the one the
plane used for every scan before, and still uses for small ones): for
seeded random item lists over the 64-item threshold, each either valid or
broken in one of the ways the contract names, the verdict must be the same.
"""

from __future__ import annotations

import random

import pytest

from dcx.sources import base
from dcx.sources.base import ScanItem, ScanResult, scan_contract_problem

SID = "source:s"


def _items(rng: random.Random, n: int) -> list[ScanItem]:
    out = []
    for i in range(n):
        if rng.random() < 0.2:
            out.append(
                ScanItem(SID, f"d/{i}.md", "deleted", "2026-11-29T18:00:00Z", "deleted", "deleted")
            )
        else:
            out.append(
                ScanItem(
                    SID,
                    f"d/{i}.md",
                    f"{i:064x}",
                    "2026-11-29T18:00:00Z",
                    rng.choice(["text", "binary"]),
                    rng.choice(["added", "modified"]),
                )
            )
    return out


BREAKS = [
    None,
    lambda it, j: it.__setitem__(j, it[j]._replace(source_id="source:other")),
    lambda it, j: it.__setitem__(j, it[j]._replace(resource_ref="")),
    lambda it, j: it.__setitem__(j, it[j]._replace(resource_ref="x" * 1025)),
    lambda it, j: it.__setitem__(
        j, it[j]._replace(resource_ref=it[0].resource_ref if j else it[1].resource_ref)
    ),
    lambda it, j: it.__setitem__(j, it[j]._replace(revision="")),
    lambda it, j: it.__setitem__(j, it[j]._replace(revision=7)),
    lambda it, j: it.__setitem__(j, it[j]._replace(change="renamed")),
    lambda it, j: it.__setitem__(j, it[j]._replace(content_kind="weird")),
    lambda it, j: it.__setitem__(j, it[j]._replace(change="deleted")),
    lambda it, j: it.__setitem__(j, it[j]._replace(revision="deleted")),
    lambda it, j: it.__setitem__(j, it[j]._replace(content_kind="deleted")),
    lambda it, j: it.__setitem__(j, tuple(it[j])),
]


@pytest.mark.parametrize("seed", range(6))
def test_column_checks_agree_with_the_item_loop(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    verdicts = set()
    for _ in range(40):
        items = _items(rng, rng.randint(65, 300))
        broken = rng.choice(BREAKS)
        if broken is not None:
            broken(items, rng.randrange(len(items)))
        result = ScanResult("completed", tuple(items), "cursor")
        fast = scan_contract_problem(result, SID, 1000)
        with monkeypatch.context() as m:
            m.setattr(base, "_items_ok", lambda *_: False)
            slow = scan_contract_problem(result, SID, 1000)
        assert fast == slow, (broken, fast, slow)
        verdicts.add(fast is None)
        if broken is None:
            assert fast is None
    assert verdicts == {True, False}  # both kinds of list were judged
