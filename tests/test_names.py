"""One rule for actor names (issue 12 §5; SPEC §8.4, §10): a reference model beside the module."""

from __future__ import annotations

import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from dcx.names import actor_key, same_actor


def reference(name: str) -> str:
    """SPEC, read literally: NFKC, then case folding, then drop - _ . and white space."""
    text = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())
    return "".join(ch for ch in text if ch not in "-_." and not ch.isspace())


def test_the_issue_spellings_are_one_actor() -> None:
    for spelling in (
        "AGENT-X",
        "agent_x",
        "agent-x.",
        "Agent X",
        "\uff41\uff47\uff45\uff4e\uff54\uff0d\uff58",
        "agent\u00a0x",
        "AGENT.X",
    ):
        assert same_actor(spelling, "agent-x"), spelling
    for other in ("agent-y", "agent-xx", "agentx2", "bgent-x"):
        assert not same_actor(other, "agent-x"), other


def test_case_folding_is_full_folding() -> None:
    assert same_actor("STRASSE", "straße") and same_actor("ΣΊΣΥΦΟΣ", "σίσυφος")


@given(st.text(max_size=40))
def test_matches_the_reference_model(name: str) -> None:
    assert actor_key(name) == reference(name)
