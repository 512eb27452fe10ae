"""Lazy patterns and the printable fast paths of ``visible``/``json_safe``/``unsafe_class`` (issue 18).

The fast paths skip a regex when ``str.isprintable`` holds; that is exact only if
every character the regex matches is one ``isprintable`` refuses. The oracle is
the regex itself, over every code point, and the plain regex-only functions they
replaced, over generated text.
"""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from dcx.core import public, terminal
from dcx.core.lazyre import LazyPattern

SKIPPED = {
    "terminal._UNSAFE_LINE": terminal._UNSAFE_LINE,
    "terminal._UNSAFE_BLOCK": terminal._UNSAFE_BLOCK,
    "terminal._JSON_EXTRA": terminal._JSON_EXTRA,
    "public._CONTROL_RE": public._CONTROL_RE,
    "public._INVISIBLE_RE": public._INVISIBLE_RE,
}


def test_every_character_the_skipped_patterns_match_is_not_printable() -> None:
    everything = "".join(map(chr, range(0x110000)))
    for name, lazy in SKIPPED.items():
        matched = lazy.compiled().findall(everything)
        assert matched, name  # not vacuous
        printable = [hex(ord(c)) for c in matched if c.isprintable()]
        assert printable == [], name
    # and newline, which json_safe drops before asking, is not one they hold
    assert not terminal._JSON_EXTRA.search("\n")


def _old_visible(text: str, block: bool = False) -> str:
    return (
        (terminal._UNSAFE_BLOCK if block else terminal._UNSAFE_LINE)
        .compiled()
        .sub(terminal._escape, text)
    )


texty = st.one_of(
    st.text(),
    st.text(st.sampled_from(list("ab ·\n\t\x1b\x7f\x85\u200b\u2028\u202e\ufeff日\u0301"))),
)


@given(text=texty, block=st.booleans())
def test_visible_is_the_regex_s(text: str, block: bool) -> None:
    assert terminal.visible(text, block=block) == _old_visible(text, block)


@given(text=texty)
def test_json_safe_is_the_regex_s(text: str) -> None:
    def escape(m: re.Match[str]) -> str:  # UTF-16 code units: a surrogate pair beyond the BMP
        units = m.group().encode("utf-16-be")
        return "".join(f"\\u{units[i : i + 2].hex()}" for i in range(0, len(units), 2))

    expected = terminal._JSON_EXTRA.compiled().sub(escape, text)
    assert terminal.json_safe(text) == expected


@given(text=texty)
def test_unsafe_class_control_and_invisible_as_before(text: str) -> None:
    if public._CONTROL_RE.compiled().search(text):
        assert public.unsafe_class(text) == "control_character"
    elif public._INVISIBLE_RE.compiled().search(text):
        assert public.unsafe_class(text) == "invisible_character"
    else:
        assert public.unsafe_class(text) not in ("control_character", "invisible_character")


@given(text=st.text(st.sampled_from(list("aZ09-_.:/ \n[]x"))))
def test_a_lazy_pattern_answers_as_re_compile(text: str) -> None:
    for source, flags in ((r"[a-z]+", 0), (r"^(\w)(\d)?", re.IGNORECASE), (r"x|(\[)", 0)):
        lazy, eager = LazyPattern(source, flags), re.compile(source, flags)
        assert lazy.pattern == eager.pattern and lazy.flags == flags
        for method in ("search", "match", "fullmatch"):
            got, want = getattr(lazy, method)(text), getattr(eager, method)(text)
            assert (got and got.group()) == (want and want.group())
        assert lazy.findall(text) == eager.findall(text)
        assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in eager.finditer(text)]
        assert lazy.sub("-", text) == eager.sub("-", text)


def test_importing_the_core_compiles_none_of_them() -> None:
    import subprocess
    import sys

    code = (
        "import re\ncompiled = []\nreal = re.compile\n"
        "re.compile = lambda p, f=0: compiled.append(p) or real(p, f)\n"
        "import dcx.core.public, dcx.core.terminal\n"
        "print(len(compiled))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "0"


ref_like = st.one_of(
    st.text(max_size=60),
    st.builds(
        lambda p, sep, h: p + sep + h,
        st.sampled_from(
            ["decision-evidence", "source-change", "decision", "x", "", "source-change-"]
        ),
        st.sampled_from(["-", "", "--", "_"]),
        st.text(st.sampled_from(list("0123456789abcdefA\n")), min_size=30, max_size=34),
    ),
)


@given(value=st.one_of(ref_like, st.integers(), st.none()))
def test_a_ref_field_accepts_what_its_regex_fullmatches(value: object) -> None:
    from dcx.core.errors import InvalidInput
    from dcx.core.fields import Ref

    for prefixes in (
        "decision-evidence",
        ("source-change", "decision-evidence"),
        ("x", "decision"),
    ):
        rule = Ref(prefixes)
        want = isinstance(value, str) and len(value) <= 160 and re.fullmatch(rule.regex, value)
        try:
            got = rule.check(value, "f") == value
        except InvalidInput:
            got = False
        assert got == bool(want), (prefixes, value)
