"""The printable fast paths of ``visible``/``json_safe``/``unsafe_class`` (SPEC §3.4.1).

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


# The reference model, from SPEC §3.4.1 (v4): C0 and C1 controls, ESC, DEL, every format
# character and the line and paragraph separators are made visible; newline and tab stay
# inside content blocks. Written over code points, not with dcx's helpers.
def _hidden(c: str) -> bool:
    import unicodedata

    return unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")


def _shown(c: str) -> str:
    code = ord(c)
    return (
        f"\\x{code:02x}"
        if code < 0x100
        else (f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
    )


def _old_visible(text: str, block: bool = False) -> str:
    return "".join(_shown(c) if _hidden(c) and not (block and c in "\n\t") else c for c in text)


def test_every_character_made_visible_is_one_isprintable_refuses() -> None:
    """So the printable fast path (return the text as it is) is exact."""
    hidden = [chr(code) for code in range(0x110000) if _hidden(chr(code))]
    assert len(hidden) > 200  # not vacuous: C0, C1, DEL, the Cf blocks, U+2028/9
    assert [hex(ord(c)) for c in hidden if c.isprintable()] == []


texty = st.one_of(
    st.text(),
    st.text(
        st.sampled_from(
            [
                *"ab ·\n\t\x1b\x7f\x85\u200b\u2028\u202e\ufeff日\u0301\xad\u061c\u180e\xa0",
                "\U000e0041",
            ]
        )
    ),
)


@given(text=texty, block=st.booleans())
def test_visible_is_the_model_s(text: str, block: bool) -> None:
    assert terminal.visible(text, block=block) == _old_visible(text, block)


@given(text=texty)
def test_json_safe_escapes_inside_json_strings_and_means_the_same(text: str) -> None:
    import json

    raw = json.dumps({"k": text}, ensure_ascii=False)
    safe = terminal.json_safe(raw)
    assert json.loads(safe) == {"k": text}
    assert not any(_hidden(c) for c in safe.replace("\n", ""))


@given(text=texty)
def test_unsafe_class_control_and_invisible_as_before(text: str) -> None:
    if re.search(public._CONTROL_RE, text):  # the detector's own classes (SPEC §3.4)
        assert public.unsafe_class(text) == "control_character"
    elif re.search(public._INVISIBLE_RE, text):
        assert public.unsafe_class(text) == "invisible_character"
    else:
        assert public.unsafe_class(text) not in ("control_character", "invisible_character")


def test_importing_the_core_compiles_no_detector_pattern() -> None:
    """Only the token pattern is compiled at import; the detector's wait for a text that needs them."""
    import subprocess
    import sys

    code = (
        "import re\ncompiled = []\nreal = re.compile\n"
        "re.compile = lambda p, f=0: compiled.append(p) or real(p, f)\n"
        "import dcx.core.public, dcx.core.terminal\n"
        "print(compiled)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == repr([public.TOKEN_RE.pattern])


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
