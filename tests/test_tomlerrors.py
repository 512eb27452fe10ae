"""``dcx.core.tomlerrors``: TOML errors that name the file, the key path and its line (SPEC §4).

Oracles:
- tomllib itself: every document a mutation breaks must raise a one-line exit-2 error that
  names the file and the line tomllib reported (or, where tomllib names none, says so);
- documents generated here line by line (tables, arrays of tables, quoted and dotted keys,
  multi-line arrays, strings and inline tables), so the line of every key is known from the
  construction, not from the scanner; tomllib checks each document means what the generator
  meant. (tests/regressions/test_toml_lines.py covers strings that look like TOML structure.)
- hand-written examples for the fallbacks and the re-wording of field errors.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dcx.core.errors import ExitCode, InvalidInput
from dcx.core.tomlerrors import key_lines, line_of, load_toml, locate_error, parse_path, parse_toml
from tests.support.fuzz import examples

# The two documents of SPEC §4, as a user writes them.
PROFILE = """\
# profile.toml
schema_version = "decision_context_profile_v0"
goal_id = "goal-checkout-latency"
enabled = true
enabled_agents = ["agent-a"]

[context_provider]
provider = "bm25"
namespace = "decision-context"
max_results = 4
timeout_seconds = 10
"""
SOURCES = """\
schema_version = "decision_source_registry_v0"

[[bindings]]
provider_id = "files"
adapter = "local-file"

[[sources]]
source_id = "source:authority:docs"
provider_id = "files"
source_kind = "document"
priority = "p0"
evidence_level = "s1"
objectives = ["latency"]
scan_mode = "incremental"
exact_read_policy = "always"
freshness_seconds = 86400
locator = { path = "docs", include = ["**/*.md"] }

[[sources]]
source_id = "source:notes"
provider_id = "files"
source_kind = "document"
priority = "p1"
evidence_level = "s2"
objectives = [
  "latency",
  "cost",
]
scan_mode = "incremental"
exact_read_policy = "material_change"
freshness_seconds = 3600
locator = "notes"
"""
TOMLLIB_WHERE = re.compile(r"\(at line (\d+), column \d+\)|\(at end of document\)")


def test_the_spec_examples_parse_and_their_keys_have_lines() -> None:
    assert parse_toml(PROFILE, "profile.toml") == tomllib.loads(PROFILE)
    assert line_of(PROFILE, "context_provider.max_results") == 10
    assert line_of(PROFILE, "context_provider") == 7
    assert line_of(PROFILE, "enabled_agents") == 5
    assert line_of(SOURCES, "bindings[0].adapter") == 5
    assert line_of(SOURCES, "sources[0]") == 7
    assert line_of(SOURCES, "sources[0].locator") == 17
    assert line_of(SOURCES, "sources[1].source_id") == 20
    assert line_of(SOURCES, "sources[1].scan_mode") == 29  # after the multi-line array
    assert line_of(SOURCES, "sources") == 7  # the first [[sources]]


def test_line_of_falls_back_to_the_enclosing_table() -> None:
    assert line_of(SOURCES, "sources[1].no_such_key") == 19  # its [[sources]] header
    assert (
        line_of(SOURCES, "sources[0].locator.path") == 17
    )  # inside an inline table: the key's line
    assert line_of(SOURCES, "sources[7].priority") == 7  # no 8th source: the array's first header
    assert line_of(SOURCES, "nowhere.at_all") is None
    assert line_of(PROFILE, "") is None


def test_parse_path() -> None:
    assert parse_path("sources[2].locator") == ("sources", 2, "locator")
    assert parse_path("context_provider.config.api_key") == (
        "context_provider",
        "config",
        "api_key",
    )
    assert parse_path("bindings[0]") == ("bindings", 0)
    assert parse_path("") == ()


# -- every tomllib error: one line, the file, the line ----------------------------------------------

BREAKERS = [
    "[",
    "]",
    "{",
    "}",
    "=",
    '"',
    "'",
    '"""',
    "#",
    "\n",
    ",",
    ".",
    " = =",
    "[[",
    "\x00",
    "\x7f",
    "é",
    "\ud7ff",
    "x",
    "1",
    "true",
]


@st.composite
def broken(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from([PROFILE, SOURCES]))
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(text)))
        if draw(st.booleans()) and at < len(text):
            text = text[:at] + text[at + draw(st.integers(1, 8)) :]  # cut a few characters
        else:
            text = text[:at] + draw(st.sampled_from(BREAKERS)) + text[at:]
    return text


@settings(max_examples=examples(300))
@given(text=broken())
def test_every_tomllib_error_is_one_line_naming_the_file_and_the_line(text: str) -> None:
    try:
        expected = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        tomllib_error = str(exc)
    else:
        assert parse_toml(text, "sources.toml") == expected
        return
    with pytest.raises(InvalidInput) as caught:
        parse_toml(text, ".decision-context/sources.toml")
    error = caught.value
    assert error.exit_code == ExitCode.INVALID_INPUT and error.code == "invalid_toml"
    message = error.message
    assert message.startswith(".decision-context/sources.toml: invalid TOML: "), message
    assert "\n" not in message and "\r" not in message
    assert message.isprintable(), repr(message)  # what reaches a terminal carries no control bytes
    assert "Traceback" not in message
    where = TOMLLIB_WHERE.search(tomllib_error)
    assert where is not None, tomllib_error
    if where.group(1):  # the line tomllib found, and a line the document has
        line = int(where.group(1))
        assert f"line {line}," in message
        assert 1 <= line <= text.count("\n") + 1
    else:
        assert "end of document" in message


# a file without a final newline: tomllib says "at end of document"; dcx names the last line too (SPEC §4)
@pytest.mark.parametrize(
    ("text", "line"),
    [
        (
            'enabled = true\ngoal_id = "a"\nenabled = false',
            3,
        ),  # a key given twice, on the last line
        ('goal_id = "a"\nnamespace = "unterminated', 2),
    ],
)
def test_errors_tomllib_places_at_the_end_still_name_a_line(text: str, line: int) -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_toml(text, "profile.toml")
    assert f"line {line}" in caught.value.message


def test_load_toml_reads_utf8_and_refuses_anything_else(tmp_path: Path) -> None:
    good = tmp_path / "profile.toml"
    good.write_text(PROFILE)
    assert load_toml(good, "profile.toml") == (tomllib.loads(PROFILE), PROFILE)
    bad = tmp_path / "sources.toml"
    bad.write_bytes(SOURCES.encode().replace(b"latency", b"lat\xff\xfeency", 1))
    with pytest.raises(InvalidInput) as caught:
        load_toml(bad, ".decision-context/sources.toml")
    assert caught.value.message == ".decision-context/sources.toml: not UTF-8 text"
    assert caught.value.code == "invalid_toml" and caught.value.exit_code == ExitCode.INVALID_INPUT
    broken_file = tmp_path / "broken.toml"
    broken_file.write_text(PROFILE.replace("max_results = 4", "max_results = = 4"))
    with pytest.raises(
        InvalidInput, match=r"^broken\.toml: invalid TOML: .*\(at line 10, column \d+\)$"
    ):
        load_toml(broken_file, "broken.toml")


# -- locate_error ------------------------------------------------------------------------------------


def test_locate_error_rewords_a_field_error_with_its_line() -> None:
    error = InvalidInput(
        "sources[1].exact_read_policy: must be always, material_change or never",
        code="registry_invalid",
        hint="see docs/sources.md",
        field="sources[1].exact_read_policy",
    )
    got = locate_error(error, ".decision-context/sources.toml", SOURCES)
    assert got.message == (
        ".decision-context/sources.toml: sources[1].exact_read_policy, line 30: "
        "must be always, material_change or never"
    )
    assert (got.code, got.hint, got.field, got.exit_code) == (
        "registry_invalid",
        "see docs/sources.md",
        "sources[1].exact_read_policy",
        ExitCode.INVALID_INPUT,
    )
    # a missing key: the line of the table it is missing from
    missing = locate_error(
        InvalidInput("sources[0].max_changes: required", field="sources[0].max_changes"),
        "sources.toml",
        SOURCES,
    )
    assert missing.message == "sources.toml: sources[0].max_changes, line 7: required"
    # a message that does not repeat the field keeps all of its words
    plain = locate_error(
        InvalidInput("unknown key", field="context_provider.colour"), "profile.toml", PROFILE
    )
    assert plain.message == "profile.toml: context_provider.colour, line 7: unknown key"
    # no field: the file alone; a field the text does not hold: no line
    assert (
        locate_error(InvalidInput("empty file"), "profile.toml", "").message
        == "profile.toml: empty file"
    )
    assert (
        locate_error(InvalidInput("x: bad", field="x"), "p.toml", PROFILE).message
        == "p.toml: x: bad"
    )
    assert locate_error(InvalidInput("x: bad", field="x"), "p.toml", PROFILE).field == "x"


# -- key_lines against documents whose lines are known by construction -------------------------------


@st.composite
def document(draw: st.DrawFn) -> tuple[str, dict[tuple[Any, ...], int]]:
    """A valid TOML document and the line of every key path it writes."""
    lines: list[str] = []
    where: dict[tuple[Any, ...], int] = {}
    counter = iter(range(10_000))

    def key_value(table: tuple[Any, ...]) -> None:
        n = next(counter)
        form = draw(st.sampled_from(["bare", "quoted", "single", "dotted", "spaced"]))
        name: tuple[str, ...] = {
            "bare": (f"k{n}",),
            "quoted": (f"k {n}.x",),
            "single": (f"q{n}",),
            "dotted": (f"d{n}", "inner"),
            "spaced": (f"s{n}",),
        }[form]
        key = {
            "bare": f"k{n}",
            "quoted": f'"k {n}.x"',
            "single": f"'q{n}'",
            "dotted": f"d{n}.inner",
            "spaced": f"  s{n}   ",
        }[form]
        value = draw(
            st.sampled_from(
                [
                    "1",
                    '"a = b"',
                    "[1, 2]",
                    "{ x = 1, y = [2] }",
                    "MULTIARRAY",
                    "MULTISTRING",
                    "true  # [not.a.table]",
                ]
            )
        )
        where[(*table, *name)] = len(lines) + 1
        if value == "MULTIARRAY":
            lines.extend([f"{key} = [", "  1,", '  "k = 2",', "  [3, 4],", "]"])
        elif value == "MULTISTRING":
            lines.extend([f'{key} = """', "[table.inside]", "x = 1", '"""'])
        else:
            lines.append(f"{key} = {value}")

    for _ in range(draw(st.integers(0, 3))):
        key_value(())
    arrays: dict[str, int] = {}
    for _ in range(draw(st.integers(0, 5))):
        n = next(counter)
        kind = draw(st.sampled_from(["table", "nested", "array", "array", "quoted"]))
        if draw(st.booleans()):
            lines.append("")
        if kind == "array":
            name = draw(st.sampled_from(["sources", "bindings"]))
            index = arrays.get(name, 0)
            arrays[name] = index + 1
            table: tuple[Any, ...] = (name, index)
            lines.append(f"[[{name}]]" + draw(st.sampled_from(["", "  # a comment"])))
            where.setdefault((name,), len(lines))
        elif kind == "nested":
            table = (f"t{n}", "sub")
            lines.append(f"[ t{n} . sub ]")
        elif kind == "quoted":
            table = (f"t {n}",)
            lines.append(f'["t {n}"]')
        else:
            table = (f"t{n}",)
            lines.append(f"[t{n}]")
        where[table] = len(lines)
        for _ in range(draw(st.integers(0, 3))):
            key_value(table)
    return "\n".join(lines) + "\n", where


def _walk(value: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        value = value[part]
    return value


@given(doc=document())
def test_key_lines_match_the_construction(doc: tuple[str, dict[tuple[Any, ...], int]]) -> None:
    text, expected = doc
    parsed = tomllib.loads(text)  # the generator wrote valid TOML ...
    for path in expected:
        _walk(parsed, path)  # ... holding every path it recorded
    found = key_lines(text)
    for path, line in expected.items():
        assert found.get(path) == line, (path, text)


@given(doc=document(), data=st.data())
def test_a_located_field_error_is_one_line_naming_file_and_line(doc, data) -> None:
    text, expected = doc
    if not expected:
        return
    path = data.draw(st.sampled_from(sorted(expected, key=repr)))
    field = "".join(
        f"[{p}]" if isinstance(p, int) else (f".{p}" if i else p) for i, p in enumerate(path)
    )
    error = locate_error(
        InvalidInput(f"{field}: must be a token", field=field), "sources.toml", text
    )
    if any(not re.fullmatch(r"[A-Za-z0-9_-]+", str(p)) for p in path if not isinstance(p, int)):
        return  # dotted display of a quoted key with a dot in it is ambiguous; skip those
    assert error.message == f"sources.toml: {field}, line {expected[path]}: must be a token"
    assert "\n" not in error.message
