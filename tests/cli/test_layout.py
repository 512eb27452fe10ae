"""The layout model (dcx/cli/_layout.py): what a page writes piped, and on a terminal through rich.

Piped, the expected text is written out by hand from the rules (columns padded to
their widest cell, the last never padded, no wrapping, no colour); on a terminal
the oracle is rich's own rendering, read back through a real Console.
"""

from __future__ import annotations

import io
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from dcx.cli._layout import Page, plain_text, styled, write_rich

REF = "decision-context-assembly-0fa5b1785a83aac9866dc1765cb9fb03"


def test_a_piped_page_is_plain_text_without_trailing_spaces() -> None:
    page = Page()
    page.line(styled("[bold]{}[/]  {}", "Context assembly", REF))
    page.grid([("chain", "a → b"), ("authority", "granted no")], styles=("dim",), gap=2)
    page.blank()
    page.table(["source", "status", "n"], [["source:docs", "ok", 12], ["s", None, 3]], right=[2])
    page.panel("complete\nevery source read")
    page.rule("recall")
    page.write("raw\n")
    assert plain_text(page) == (
        f"Context assembly  {REF}\n"
        "chain      a → b\n"
        "authority  granted no\n"
        "\n"
        "source       status   n\n"
        "───────────────────────\n"
        "source:docs  ok      12\n"
        "s            -        3\n"
        "complete\n"
        "every source read\n"
        "── recall ──\n"
        "raw\n"
    )


def test_a_long_row_is_never_wrapped_when_piped() -> None:
    page = Page()
    page.table(["ref", "summary"], [[REF, "word " * 60]])
    lines = plain_text(page).splitlines()
    assert lines[2].startswith(REF + "  word")
    assert len(lines) == 3


@given(value=st.text(max_size=40))
def test_a_value_is_never_read_as_a_tag_nor_reaches_the_terminal_raw(value: str) -> None:
    page = Page()
    page.line(styled("[bold]{}[/] · {}", value, value))
    text = plain_text(page)
    hidden = ("Cc", "Cf", "Zl", "Zp")  # what SPEC §3.4.1 makes visible
    assert not [c for c in text.rstrip("\n") if unicodedata.category(c) in hidden]
    if value.isprintable():
        assert text == f"{value} · {value}\n"


def test_styled_keeps_dcx_s_tags_and_leaves_other_brackets() -> None:
    spans = styled("[bold]{}[/] [1] [cyan]{}[/]", "[red]x[/]", "y").spans
    assert spans == (("[red]x[/]", "bold"), (" [1] ", ""), ("y", "cyan"))


def test_on_a_terminal_rich_lays_the_page_out_and_folds_a_table_that_does_not_fit() -> None:
    from rich.console import Console

    page = Page(terminal=True)
    page.line(styled("[bold]{}[/]", "[not markup]"))
    page.table(["source", "summary"], [["source:authority:docs", "a long prose cell " * 6]])
    out = io.StringIO()
    write_rich(page, Console(file=out, width=60, no_color=True, markup=False, emoji=False))
    lines = out.getvalue().splitlines()
    assert lines[0] == "[not markup]"
    assert all(len(line) <= 60 for line in lines)
    assert any("source:authority:docs" in line for line in lines)  # the token stays whole


def test_below_narrow_a_table_prints_one_record_per_block() -> None:
    from rich.console import Console

    page = Page(terminal=True)
    page.table(["source", "status", "reason"], [["a", "ok", "-"], ["b", "failed", "timeout"]])
    out = io.StringIO()
    write_rich(page, Console(file=out, width=40, no_color=True))
    blocks = out.getvalue().strip().split("\n\n")
    assert len(blocks) == 2 and blocks[1].split()[:2] == ["source", "b"]
