"""dcx.core.tomlpeek against tomllib (the oracle), over generated TOML texts (issue 18).

``may_set`` may answer False only when the parse could not set the key;
``simple_table`` must give exactly ``tomllib.loads``'s table whenever it answers.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dcx.core.tomlpeek import may_set, simple_table

KEYS = ["require_review", "external_event_logs", "goal_id", "schema_version", "key_id", "x"]
key_spelling = st.sampled_from(
    [
        *KEYS,
        '"require_review"',
        "'require_review'",
        '"require\\u005freview"',
        '"\\u0072equire_review"',
        '"require\\U0000005Freview"',
        "commit.require_review",
        '"goal id"',
        "goal-id",
        "1",
    ]
)
value = st.sampled_from(
    [
        "true",
        "false",
        '"x"',
        '"catalog-cache-ttl"',
        '"a # b"',
        '"\\""',
        "'lit'",
        "[]",
        '["a"]',
        "1",
        '"',
    ]
)
line = st.one_of(
    st.builds(
        lambda k, sp1, sp2, v, c: f"{k}{sp1}={sp2}{v}{c}",
        key_spelling,
        st.sampled_from(["", " ", "  ", "\t"]),
        st.sampled_from(["", " ", "\t"]),
        value,
        st.sampled_from(["", " # note", "# x", "\t# y", " #"]),
    ),
    st.sampled_from(
        ["", "# comment", "[commit]", "[review]", "  ", "\r", "commit = { require_review = true }"]
    ),
    st.text(max_size=8),
)
document = st.lists(line, max_size=6).map("\n".join)


def _parse(text: str) -> dict[str, Any] | None:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None


def _keys(table: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(table, dict):
        for k, v in table.items():
            found.add(k)
            found |= _keys(v)
    return found


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=document)
def test_may_set_answers_false_only_when_the_parse_sets_none_of_the_names(
    text: str, tmp_path: Path
) -> None:
    path = tmp_path / "profile.toml"
    path.write_text(text, encoding="utf-8", newline="")
    parsed = _parse(text)
    for name in ("require_review", "external_event_logs"):
        if not may_set(path, name):
            assert parsed is None or name not in _keys(parsed), (name, text)


def test_may_set_on_missing_odd_and_plain_files(tmp_path: Path) -> None:
    assert may_set(tmp_path / "absent.toml", "require_review") is False
    bad = tmp_path / "latin1.toml"
    bad.write_bytes(b"x = '\xe9'\n")
    assert may_set(bad, "require_review") is True  # the full read reports it
    assert may_set(tmp_path, "require_review") is True  # a directory: the full read's error
    plain = tmp_path / "profile.toml"
    plain.write_text("enabled = true\n[commit]\nrequire_review = true\n")
    assert may_set(plain, "require_review") and not may_set(plain, "external_event_logs")


@settings(max_examples=400)
@given(text=document)
def test_simple_table_is_tomllib_s_whenever_it_answers(text: str) -> None:
    got = simple_table(text)
    if got is not None:
        assert got == tomllib.loads(text), text


@pytest.mark.parametrize(
    "text",
    [
        'schema_version = "dcx_workspace_v0"\ngoal_id = "catalog-cache-ttl"\n',
        'schema_version = "dcx_workspace_v0"\ngoal_id = "g"\nkey_id = "97e24594" # the goal\'s key\n',
        "# only a comment\n\n",
        "",
    ],
)
def test_what_init_writes_is_read_without_tomllib(text: str) -> None:
    assert simple_table(text) == tomllib.loads(text)


@pytest.mark.parametrize(
    "text",
    [
        'a = "x"\na = "y"\n',  # repeated key: tomllib's error
        'a = "x\\ty"\n',  # an escape
        'a = "x"\r\n',  # CRLF
        "a = 1\n",  # not a string
        '[t]\na = "x"\n',  # a table
        'a = "x" b\n',  # trailing text
        'a = "é"\n',  # beyond ASCII
        'a\t= "x"\n',  # a tab
    ],
)
def test_anything_else_is_left_to_tomllib(text: str) -> None:
    assert simple_table(text) is None
