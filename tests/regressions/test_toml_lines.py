"""Issue 11 §3: `tomlerrors` names the right line when strings hide TOML-looking text.

Oracle: the documents are generated here line by line, so the line of every
key is known from the construction, not from the scanner; tomllib checks each
document parses and holds the values the generator meant.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from dcx.core.tomlerrors import line_of

# string values that look like TOML structure: (TOML source lines, the parsed value)
TRICKY = [
    (['"""docs', "[[sources]]", 'priority = "p9"', '"""'], 'docs\n[[sources]]\npriority = "p9"\n'),
    (["'''", "[table]", "x = [", "'''"], "[table]\nx = [\n"),
    (['"a ] [ b # not a comment"'], "a ] [ b # not a comment"),
    (["'[[sources]]'"], "[[sources]]"),
    (['"""one line with \\""" inside"""'], 'one line with """ inside'),
    (['"""\\', "  continued \\", '  [[x]] = 1"""'], "continued [[x]] = 1"),
    (['["a]", "b[", """', "]", '"""]'], ["a]", "b[", "]\n"]),
    (['"plain"  # comment [[sources]]'], "plain"),
]


def _document(choices: list[list[int]]) -> tuple[str, dict[tuple, int], list[dict]]:
    lines = ['schema_version = "x"', ""]
    expected: dict[tuple, int] = {}
    values: list[dict] = []
    for index, picks in enumerate(choices):
        lines.append("[[sources]]")
        expected[("sources", index)] = len(lines)
        row = {}
        for n, pick in enumerate(picks):
            source, value = TRICKY[pick]
            lines.append(f"k{n} = {source[0]}")
            expected[("sources", index, f"k{n}")] = len(lines)
            lines.extend(source[1:])
            row[f"k{n}"] = value
        lines.append('priority = "p0"')
        expected[("sources", index, "priority")] = len(lines)
        row["priority"] = "p0"
        values.append(row)
    return "\n".join(lines) + "\n", expected, values


@settings(max_examples=150)
@given(st.lists(st.lists(st.integers(0, len(TRICKY) - 1), max_size=4), min_size=1, max_size=4))
def test_key_lines_follow_the_document_not_its_strings(choices: list[list[int]]) -> None:
    text, expected, values = _document(choices)
    assert tomllib.loads(text)["sources"] == values  # the generator wrote what it meant
    for (_, index, *key), line in expected.items():
        path = f"sources[{index}]" + (f".{key[0]}" if key else "")
        assert line_of(text, path) == line, (path, text)


def test_registry_error_after_a_multi_line_string_names_the_right_line(dcx, fresh_ws: Path) -> None:
    source = """[[sources]]
source_id = "{sid}"
provider_id = "files"
source_kind = "document"
priority = "{priority}"
evidence_level = "s1"
objectives = ["latency"]
scan_mode = "incremental"
exact_read_policy = "always"
freshness_seconds = 3600
locator = {locator}
"""
    body = (
        'schema_version = "decision_source_registry_v0"\n\n[[bindings]]\nprovider_id = "files"\n'
        'adapter = "local-file"\n\n'
        + source.format(
            sid="a", priority="p0", locator='"""docs\n[[sources]]\npriority = "p1"\n"""'
        )
        + source.format(sid="b", priority="p9", locator='"docs"')
    )
    (fresh_ws / ".decision-context" / "sources.toml").write_text(body)
    wanted = body.splitlines().index('priority = "p9"') + 1
    result = dcx("-C", str(fresh_ws), "sources")
    assert result.exit_code == 2
    assert f"sources[1].priority, line {wanted}:" in result.stderr, result.stderr
