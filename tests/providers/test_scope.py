"""Host scope normalisation (SPEC §6.6): deep links become host sessions, bad ones are refused unechoed."""

from __future__ import annotations

import pytest

from dcx.core.errors import InvalidInput
from dcx.providers.scope import normalise_scope


@pytest.mark.parametrize(
    ("link", "scope"),
    [
        ("codex://threads/t-123", "host-session:codex:t-123"),
        ("CODEX://THREADS/019a.b_c-d", "host-session:codex:019a.b_c-d"),
        ("Codex://Threads/Abc", "host-session:codex:Abc"),
        ("codex://threads/" + "a" * 128, "host-session:codex:" + "a" * 128),
    ],
)
def test_codex_thread_links_are_normalised(link: str, scope: str) -> None:
    assert normalise_scope(link) == scope


@pytest.mark.parametrize(
    "link",
    [
        "codex://threads/t-1?x=1",
        "codex://threads/t-1#frag",
        "codex://threads/t%2D1",
        "codex://threads/t-1/extra",
        "codex://threads/t-1/",
        "codex://threads/new",
        "codex://threads/NEW",
        "codex://threads/",
        "codex://threads/-leading-dash",
        "codex://threads/" + "a" * 129,
        "codex://thread/t-1",
        "codex://user@threads/t-1",
        "codex:/threads/t-1",
        "codex:threads/t-1",
        "codex://threads/t 1",
    ],
)
def test_invalid_codex_links_are_refused_without_echo(link: str) -> None:
    with pytest.raises(InvalidInput) as err:
        normalise_scope(link, field="--scope")
    assert err.value.exit_code == 2 and err.value.field == "--scope"
    rendered = f"{err.value.message} {err.value.hint}"
    assert "t-1" not in rendered and "threads/" not in rendered.replace("codex://threads/<id>", "")


@pytest.mark.parametrize(
    "scope", ["", "source:docs", "source:a,b", "viking://resources/x", "host-session:codex:t-1"]
)
def test_other_scopes_pass_through_unchanged(scope: str) -> None:
    assert normalise_scope(scope) == scope


def test_overlong_scope_is_rejected() -> None:
    with pytest.raises(InvalidInput):
        normalise_scope("s" * 2049)
