"""The rich-free piped text of `dcx log` and `dcx verify` against rich's own (differential).

``dcx.cli._plain.PlainConsole`` writes what rich writes to a pipe for the calls
these views make, so a piped `dcx log`/`dcx verify` need not import rich
(issue 18). The oracle is rich itself: for generated results (brackets that
look like markup, backslashes, wide and combining characters, long cells at
narrow widths), the same view rendered on dcx's piped rich console and through
``render_plain`` must give the same text — or ``render_plain`` must decline
(and then the command prints with rich). ``tests/cli/test_fast_readers.py``
checks the commands end to end.
"""

from __future__ import annotations

import io
import sys
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dcx.cli import _plain, _render
from dcx.cli.readers import log as log_view
from dcx.cli.readers import verify as verify_view
from dcx.core.result import Result
from dcx.core.terminal import visible_data

text = st.one_of(
    st.text(st.sampled_from(list("abcz09-_.:/ ·[]\\#@")), max_size=30),
    st.sampled_from(
        ["[bold]x[/]", "\\[not]", "a\\", "[/]", "[red", "日本語", "e\u0301", "\t", "\x1b[2J", ""]
    ),
    st.text(max_size=12),
)
token = st.text(st.sampled_from(list("abcdef0123456789-")), min_size=1, max_size=40)


def _link() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {
            "kind": st.sampled_from(["assembly", "evidence", "proposal", "outcome", "review"]),
            "short_ref": token,
            "status": text,
        }
    )


decision = st.fixed_dictionaries(
    {
        "decision_id": token,
        "last_observed_at": st.one_of(st.none(), token),
        "next_step": st.one_of(st.none(), text),
        "chain": st.lists(_link(), max_size=4),
    },
    optional={
        "abandoned": st.booleans(),
        "outcome_due": st.booleans(),
        "settlement": st.one_of(st.none(), token),
        "next_hint": st.one_of(st.none(), text),
    },
)
scan = st.fixed_dictionaries(
    {
        "short_ref": token,
        "source_id": text,
        "status": token,
        "changed_count": st.integers(0, 10**6),
        "observed_at": token,
    }
)
log_data = st.fixed_dictionaries(
    {"decisions": st.lists(decision, max_size=4), "goal_scans": st.lists(scan, max_size=3)}
)
verify_data = st.fixed_dictionaries(
    {
        "repaired": st.lists(text, max_size=2),
        "packets_checked": st.integers(0, 3),
        "events_checked": st.integers(0, 3),
        "problems": st.lists(
            st.fixed_dictionaries(
                {"file": text, "problem": text}, optional={"field": st.one_of(st.none(), text)}
            ),
            max_size=3,
        ),
    },
    optional={
        "decision_indexes_checked": st.integers(0, 3),
        "foreign_key_ids": st.lists(token, max_size=2),
        "redacted": st.lists(
            st.fixed_dictionaries({"file": text, "reason_code": token, "redacted_at": token}),
            max_size=2,
        ),
    },
)
widths = st.sampled_from([None, "40", "80", "120", "7"])


def rendered(
    view: Any, data: dict[str, Any], columns: str | None, monkeypatch: pytest.MonkeyPatch
) -> tuple[str, str | None]:
    """(rich's piped text, the plain text or None when render_plain declined)."""
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "JUPYTER_COLUMNS", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    result = Result("x", visible_data(data))
    pipe = io.StringIO()
    monkeypatch.setattr(sys, "stdout", pipe)
    view.render(_render.console(), result)
    plain = io.StringIO()
    took = _plain.render_plain(view.render, result, plain)
    monkeypatch.setattr(sys, "stdout", sys.__stdout__)
    return pipe.getvalue(), plain.getvalue() if took else None


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=log_data, columns=widths)
def test_log_view(
    data: dict[str, Any], columns: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    rich_text, plain_text = rendered(log_view, data, columns, monkeypatch)
    if plain_text is not None:
        assert plain_text == rich_text


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=verify_data, columns=widths)
def test_verify_view(
    data: dict[str, Any], columns: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    rich_text, plain_text = rendered(verify_view, data, columns, monkeypatch)
    if plain_text is not None:
        assert plain_text == rich_text


def test_the_usual_outputs_take_the_plain_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Not a vacuous pass: the commands' everyday output is printed without rich."""
    row = {
        "decision_id": "ttl-keep",
        "last_observed_at": "2026-11-29T18:00:00Z",
        "next_step": "propose",
        "chain": [
            {
                "kind": "assembly",
                "short_ref": "decision-context-assembly-b5a1d421",
                "status": "auto rebase · coverage complete · 1 ready",
            },
            {"kind": "evidence", "short_ref": "decision-evidence-6046b84d", "status": "5 fact(s)"},
        ],
    }
    for view, data in (
        (log_view, {"decisions": [row], "goal_scans": []}),
        (
            verify_view,
            {
                "repaired": [],
                "packets_checked": 8,
                "events_checked": 0,
                "problems": [],
                "decision_indexes_checked": 1,
            },
        ),
        (
            verify_view,
            {
                "repaired": [],
                "packets_checked": 8,
                "events_checked": 0,
                "problems": [
                    {"file": "packets/x.json", "problem": "bytes differ [edited]", "field": "a.b"}
                ],
            },
        ),
    ):
        for columns in (None, "120"):
            rich_text, plain_text = rendered(view, data, columns, monkeypatch)
            assert plain_text == rich_text, (view, columns)


def test_a_terminal_or_forced_colour_is_rich_s(monkeypatch: pytest.MonkeyPatch) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("FORCE_COLOR", raising=False)
    assert _plain.pipe_width(Tty()) is None
    assert _plain.pipe_width(io.StringIO()) is not None
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE"):
        monkeypatch.setenv(name, "1")
        assert _plain.pipe_width(io.StringIO()) is None
        monkeypatch.delenv(name)
    monkeypatch.setenv("COLUMNS", "wide")
    assert _plain.pipe_width(io.StringIO()) is None


def _grid_view(console: Any, result: Result) -> None:
    from dcx.cli.views.common import grid

    grid(console, result.data["columns"], result.data["rows"])


_grid_view.plain = True  # type: ignore[attr-defined]


class _GridView:
    render = staticmethod(_grid_view)


cell = st.one_of(token, text, st.none(), st.integers(0, 10**9))


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    shape=st.integers(1, 8).flatmap(
        lambda n: st.tuples(
            st.lists(
                st.text(st.sampled_from(list("abcdefgh .")), min_size=1, max_size=12),
                min_size=n,
                max_size=n,
            ),
            st.lists(st.lists(cell, min_size=n, max_size=n), min_size=1, max_size=4),
        )
    ),
    columns=widths,
)
def test_grid_table(
    shape: tuple[list[str], list[list[Any]]], columns: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    headers, rows = shape
    rich_text, plain_text = rendered(
        _GridView, {"columns": headers, "rows": rows}, columns, monkeypatch
    )
    if plain_text is not None:
        assert plain_text == rich_text


def test_sources_table_takes_the_plain_path(monkeypatch: pytest.MonkeyPatch) -> None:
    from dcx.cli.readers import sources as sources_view

    row = {
        "source_id": "source:authority:docs",
        "enabled": True,
        "provider_id": "files",
        "source_kind": "document",
        "priority": "p0",
        "evidence_level": "s1",
        "scan_mode": "incremental",
        "exact_read_policy": "always",
        "freshness_seconds": 86400,
    }
    data = {
        "manifest": {
            "sources": [row, {**row, "source_id": "notes", "enabled": False}],
            "manifest_ref": "decision-source-manifest-" + "0" * 32,
            "source_count": 2,
        },
        "written": False,
    }
    for columns in (None, "120", "80"):
        rich_text, plain_text = rendered(sources_view, data, columns, monkeypatch)
        assert plain_text == rich_text, columns


def test_calls_it_does_not_know_are_rich_s() -> None:
    console = _plain.PlainConsole(80)
    for call in (
        lambda: console.print("x", end=""),
        lambda: console.print(object()),
        lambda: console.is_terminal,
        lambda: console.rule("x"),
    ):
        with pytest.raises(_plain.NeedRich):
            call()
    assert console.parts == []


# -- `dcx show`: every packet view, piped, through the plain console and through rich ----------

SHOW_WIDTHS = (None, "200", "120", "100", "80", "60", "48", "40", "20")


def _show_results(root: Any) -> dict[str, Result]:
    """kind -> the Result `dcx show` renders (its data made visible, as ``_render.emit`` does)."""
    from dcx.core.workspace import find_workspace
    from dcx.ops.show import show
    from tests.support.workspace import packet_files

    ws = find_workspace(str(root))
    found: dict[str, Result] = {}
    for ref in packet_files(root):
        result = show(ws=ws, ref=ref, reveal_refs=False)
        found.setdefault(result.data["kind"], Result("show", visible_data(result.data)))
    return found


class _ShowView:
    from dcx.cli.readers.show import render as _render_show

    render = staticmethod(_render_show)


@pytest.fixture(scope="module")
def every_kind(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Result]:
    """One Result per packet kind: the plain cycle's packets and the gated story's review receipt."""
    from tests.support.cycle import run_cycle, run_review_cycle
    from tests.support.workspace import copy_example

    base = tmp_path_factory.mktemp("plain-show")
    home = base / "home"
    home.mkdir()
    cycled = copy_example(base / "cycled")
    run_cycle(cycled, env={"HOME": str(home)})
    reviewed = copy_example(base / "reviewed")
    run_review_cycle(reviewed, env={"HOME": str(home)})
    return {**_show_results(reviewed), **_show_results(cycled)}


def test_show_views_of_every_kind_print_as_rich_does(
    every_kind: dict[str, Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    from dcx.packets import KINDS

    assert set(every_kind) == set(KINDS)
    plain_at_400 = set()
    for kind, result in every_kind.items():
        for columns in SHOW_WIDTHS:
            rich_text, plain_text = rendered(_ShowView, result.data, columns, monkeypatch)
            if plain_text is not None:
                assert plain_text == rich_text, (kind, columns)
                if columns is None:
                    plain_at_400.add(kind)
    # not a vacuous pass: piped at rich's piped width, every view takes the plain path
    assert plain_at_400 == set(KINDS)


def _mutated(value: Any, draw: Any) -> Any:
    """``value`` with some of its strings replaced by generated text (markup, wide, long, empty)."""
    if isinstance(value, dict):
        return {k: _mutated(v, draw) for k, v in value.items()}
    if isinstance(value, list):
        return [_mutated(v, draw) for v in value]
    if isinstance(value, str) and draw(st.integers(0, 3)) == 0:
        return draw(st.one_of(text, token, st.just(value * 3), st.just(value + "\n" + value)))
    return value


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data(), columns=st.sampled_from(SHOW_WIDTHS))
def test_show_views_with_odd_text_print_as_rich_does(
    every_kind: dict[str, Result],
    data: st.DataObject,
    columns: str | None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    kind = data.draw(st.sampled_from(sorted(every_kind)))
    packet = _mutated(every_kind[kind].data["packet"], data.draw)
    try:
        rich_text, plain_text = rendered(
            _ShowView, {**every_kind[kind].data, "packet": packet}, columns, monkeypatch
        )
    except (KeyError, TypeError, ValueError, AttributeError):
        return  # a mutation the view itself cannot read (not the console's business)
    if plain_text is not None:
        assert plain_text == rich_text, (kind, columns)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    lines=st.lists(st.one_of(text, token), min_size=1, max_size=4),
    rows=st.lists(
        st.tuples(st.one_of(text, token), st.one_of(text, token, st.integers())), max_size=5
    ),
    style=st.sampled_from(["", "yellow", "bold red"]),
    columns=widths,
)
def test_banner_and_facts(
    lines: list[str],
    rows: list[tuple[str, Any]],
    style: str,
    columns: str | None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def view(console: Any, result: Result) -> None:
        from dcx.cli.views.common import banner, facts

        banner(console, "\n".join(result.data["lines"]), result.data["style"])
        facts(console, result.data["rows"])

    view.plain = True  # type: ignore[attr-defined]

    class View:
        render = staticmethod(view)

    data = {"lines": lines, "rows": [list(r) for r in rows], "style": style}
    rich_text, plain_text = rendered(View, data, columns, monkeypatch)
    if plain_text is not None:
        assert plain_text == rich_text


def test_an_ascii_pipe_is_rich_s() -> None:
    """rich draws ASCII boxes on a stream that is not UTF-8: the plain console declines."""
    ascii_pipe = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    assert _plain.pipe_width(ascii_pipe) is None
    assert _plain.pipe_width(io.TextIOWrapper(io.BytesIO(), encoding="utf-8")) is not None


@pytest.mark.parametrize("verb", ["log", "verify", "sources"])
def test_a_closed_pipe_exits_quietly(cycled: Any, verb: str) -> None:
    """`dcx log | head -1` style, on the plain console: exit 1, no traceback (as rich's console)."""
    import os
    import subprocess
    from pathlib import Path

    exe = str(Path(sys.executable).parent / "dcx")
    read_end, write_end = os.pipe()
    os.close(read_end)
    proc = subprocess.run(
        [exe, "-C", str(cycled), verb], stdout=write_end, stderr=subprocess.PIPE, timeout=60
    )
    os.close(write_end)
    assert proc.stderr == b"" and proc.returncode == 1


# the regexes the plain console once used, kept here as the oracle of its set and scanner
_TAG_RE = __import__("re").compile(
    r"\[(?:/|(?:bold|dim|italic|underline|red|green|yellow|blue|cyan|magenta|white)"
    r"(?: (?:bold|dim|red|green|yellow|blue|cyan|magenta|white))*)\]"
)
_NARROW_RE = __import__("re").compile(
    "[\x20-\x7e\u00a7\u00b7\u2013\u2014\u2018\u2019\u201c\u201d\u2026\u2190\u2192]*"
)
tag_text = st.lists(
    st.one_of(
        st.sampled_from(
            ["[", "]", "[/]", "[bold]", "[dim]", "[bold red]", "[italic]", "[red italic]", "[]"]
        ),
        st.sampled_from(["bold", "red", " ", "  ", "/", "x", "{}", "\\", "[[", "]]"]),
        st.text(max_size=4),
    ),
    max_size=12,
).map("".join)


@given(template=tag_text)
def test_untagged_is_the_tag_regex_s_sub(template: str) -> None:
    assert _plain.untagged(template) == _TAG_RE.sub("", template)


@given(cell=st.one_of(st.text(), tag_text, st.text(st.sampled_from(list("a ·→“\t日é\x7f")))))
def test_single_width_is_the_narrow_regex_s_fullmatch(cell: str) -> None:
    assert _plain.single_width(cell) == bool(_NARROW_RE.fullmatch(cell))
