"""docs/safety.md's tables are generated from the data the code and the tests use.

Each generated block sits between ``<!-- NAME:begin -->`` and ``<!-- NAME:end -->``
markers; this test renders it again and compares. ``python -m
tests.security.test_safety_docs`` rewrites the blocks after a change.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from tests.support.workspace import REPO

DOC = REPO / "docs" / "safety.md"


def _cp(code: int) -> str:
    return f"U+{code:04X}"


def escape_table() -> str:
    from dcx.core.terminal import CLASSES, escape_of

    rows = ["| class | example | shown as |", "|---|---|---|"]
    for what, code in CLASSES:
        rows.append(f"| {what} | {_cp(code)} | `{escape_of(code)}` |")
    return "\n".join(rows) + "\n"


def executable_keys() -> str:
    from dcx.ops.workbench import EXECUTABLE_KEYS

    return ", ".join(f"`{key}`" for key in sorted(EXECUTABLE_KEYS)) + "\n"


def corpus_figures() -> str:
    import json

    corpus = REPO / "fixtures" / "public-safety"
    rows = {
        name: [json.loads(line) for line in (corpus / f"{name}.jsonl").read_text().splitlines()]
        for name in ("positives", "negatives")
    }
    families = len({row["family"] for row in rows["positives"]})
    return (
        f"positives: {len(rows['positives'])} texts over {families} families; "
        f"negatives: {len(rows['negatives'])} texts\n"
    )


BLOCKS: dict[str, Callable[[], str]] = {
    "escape-table": escape_table,
    "corpus-figures": corpus_figures,
    "executable-keys": executable_keys,
}


def _pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"(<!-- {name}:begin -->\n)(.*?)(<!-- {name}:end -->)", re.S)


def test_the_generated_blocks_match_their_data() -> None:
    text = DOC.read_text()
    for name, render in BLOCKS.items():
        match = _pattern(name).search(text)
        assert match, f"docs/safety.md has no {name} block"
        assert match.group(2) == render(), (
            f"docs/safety.md's {name} block is stale: run `python -m tests.security.test_safety_docs`"
        )


def rewrite() -> None:
    text = DOC.read_text()
    for name, render in BLOCKS.items():
        text = _pattern(name).sub(lambda m, r=render: m.group(1) + r() + m.group(3), text)
    DOC.write_text(text)


if __name__ == "__main__":
    rewrite()
