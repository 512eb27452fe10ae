from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from dcx.evidence.authority import confirms, normalise, too_short

DOC = "# Runbook\r\n\r\nUse this when origin p99 latency stays above 400 ms   \r\nfor 10 minutes after a TTL change.\r\n"


def test_exact_text_with_normalised_line_endings_confirms() -> None:
    claim = (
        "Use this when origin p99 latency stays above 400 ms\nfor 10 minutes after a TTL change."
    )
    assert confirms(claim, DOC)


def test_changed_authority_does_not_confirm() -> None:
    claim = (
        "Use this when origin p99 latency stays above 400 ms\nfor 10 minutes after a TTL change."
    )
    moved = DOC.replace("400 ms", "600 ms")
    assert not confirms(claim, moved)


def test_short_claims_never_confirm() -> None:
    assert too_short("TTL is 90 s")
    assert not confirms("TTL is 90 s", "TTL is 90 s and more text here")


def test_line_share_rule_for_three_or_more_lines() -> None:
    lines = [f"step {i}: do the thing number {i} carefully" for i in range(60)]
    authority = "\n".join(lines)
    shuffled_claim = "\n".join(reversed(lines))  # not a substring, every line present
    assert confirms(shuffled_claim, authority)
    one_missing = "\n".join([*lines[:-1], "a line that is nowhere in the authority text"])
    assert confirms(one_missing, authority)  # 59/60 = 98.3%
    two_missing = "\n".join(
        [*lines[:-2], "one line that is nowhere", "another line that is nowhere"]
    )
    assert not confirms(two_missing, authority)  # 58/60 = 96.7%


@given(st.text(min_size=0, max_size=200))
def test_normalise_is_idempotent(text: str) -> None:
    assert normalise(normalise(text)) == normalise(text)


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=45, max_size=300))
def test_any_long_text_confirms_itself(text: str) -> None:
    if not too_short(text):
        assert confirms(text, "prefix\n" + text + "\nsuffix")
