"""The retrieval bounds (SPEC §6.1): rejected, never truncated; providers fail open."""

from __future__ import annotations

import json
import math

import pytest

from dcx.core.errors import InvalidInput
from dcx.evidence.recall import build_request
from dcx.providers.base import RetrievalItem, unavailable
from dcx.providers.validate import (
    admit,
    check_request,
    effective_timeout,
    guarded_retrieve,
    item_problem,
)
from dcx.state.profile import ContextProviderConfig
from tests.support.recall import ScriptedProvider, answer, item, request

GOOD = {
    "namespace": "decision-context",
    "scope_ref": "",
    "query": "roll back the TTL",
    "query_summary": "TTL rollback",
    "max_results": 4,
    "timeout_seconds": 10,
}


def _rejects(field: str, **bad: object) -> InvalidInput:
    with pytest.raises(InvalidInput) as err:
        check_request(**{**GOOD, **bad})
    assert err.value.field == field
    assert err.value.message.startswith(f"{field}:")
    assert err.value.exit_code == 2
    return err.value


@pytest.mark.parametrize("value", [0, 9, 1.5, True, "4", None])
def test_max_results_out_of_bounds_is_rejected(value: object) -> None:
    _rejects("max_results", max_results=value)


@pytest.mark.parametrize("value", [0.5, math.nan, math.inf, -math.inf, 121, 0, True, "10"])
def test_timeout_out_of_bounds_is_rejected(value: object) -> None:
    _rejects("timeout_seconds", timeout_seconds=value)


@pytest.mark.parametrize("value", [1, 1.5, 120, 119.99])
def test_timeout_fractions_within_bounds_pass(value: float) -> None:
    check_request(**{**GOOD, "timeout_seconds": value})


@pytest.mark.parametrize(
    "summary",
    [
        "notes in /home/alice/plans.md",
        "see ~/notes",
        "key ghp_" + "a" * 36,
        "api_key=abc123",
        "x" * 221,
        "",
        "a\x00b",
    ],
)
def test_query_summary_must_be_public_safe_and_bounded(summary: str) -> None:
    _rejects("query_summary", query_summary=summary)


def test_other_request_bounds_name_their_field() -> None:
    _rejects("namespace", namespace="n" * 121)
    _rejects("scope_ref", scope_ref="s" * 2049)
    _rejects("query", query="q" * 1001)
    _rejects("query", query="   ")
    check_request(**{**GOOD, "query": "q" * 1000, "scope_ref": "s" * 2048})


def test_rejection_never_echoes_the_private_query_or_scope() -> None:
    error = _rejects("query", query="CANARY-QUERY " * 100)
    assert "CANARY" not in error.message
    error = _rejects("scope_ref", scope_ref="CANARY-SCOPE" * 200)
    assert "CANARY" not in error.message


def test_labels_rename_fields_for_the_cli() -> None:
    with pytest.raises(InvalidInput) as err:
        check_request(**{**GOOD, "max_results": 9}, labels={"max_results": "--max-results"})
    assert err.value.field == "--max-results"


def test_effective_timeout_is_the_shortest_limit() -> None:
    assert effective_timeout(None, 10) == 10
    assert effective_timeout(2.5, 10) == 2.5
    assert effective_timeout(30, 10) == 10
    assert effective_timeout(30, 10, 4) == 4


def test_build_request_applies_the_profile_gates() -> None:
    cp = ContextProviderConfig(
        provider="bm25",
        max_results=3,
        timeout_seconds=5,
        max_content_chars=999,
        scope_ref="source:docs",
    )
    req = build_request(
        cp,
        scope_ref=None,
        query="q",
        query_summary="s",
        max_results=8,
        timeout_seconds=60,
        observed_at="2026-11-29T18:00:00Z",
    )
    assert (req.scope_ref, req.max_results, req.timeout_seconds, req.max_content_chars) == (
        "source:docs",
        3,
        5.0,
        999,
    )
    req = build_request(
        cp,
        scope_ref="codex://threads/t-1",
        query="q",
        query_summary="s",
        max_results=None,
        timeout_seconds=1.5,
        observed_at="2026-11-29T18:00:00Z",
    )
    assert (req.scope_ref, req.max_results, req.timeout_seconds) == (
        "host-session:codex:t-1",
        3,
        1.5,
    )


# -- provider side -------------------------------------------------------------


def test_a_valid_answer_passes_unchanged() -> None:
    req = request()
    good = answer(req, (item(1), item(2)))
    result = guarded_retrieve(ScriptedProvider(good), req, deadline=0)
    assert result == good


def test_completed_empty_differs_from_unavailable() -> None:
    req = request()
    empty = guarded_retrieve(ScriptedProvider(answer(req)), req, deadline=0)
    assert (empty.status, empty.reason_code, empty.ok, empty.items) == ("completed", None, True, ())
    down = guarded_retrieve(
        ScriptedProvider(unavailable(req, "bm25", "index_missing")), req, deadline=0
    )
    assert (down.status, down.reason_code, down.ok) == ("unavailable", "index_missing", False)


def test_a_provider_that_raises_fails_open_without_its_text() -> None:
    req = request()
    result = guarded_retrieve(
        ScriptedProvider(raises=RuntimeError("CANARY /home/alice/secret.md")), req, deadline=0
    )
    assert (result.status, result.reason_code, result.items) == (
        "unavailable",
        "provider_retrieval_failed",
        (),
    )
    assert "CANARY" not in repr(result)


@pytest.mark.parametrize(
    ("label", "broken"),
    [
        (
            "nine items",
            lambda r: answer(r._replace(max_results=8), tuple(item(i) for i in range(1, 10))),
        ),
        ("16001-char content", lambda r: answer(r, (item(1, content="c" * 16001),))),
        ("home path summary", lambda r: answer(r, (item(1, summary="from /home/alice/notes.md"),))),
        ("token summary", lambda r: answer(r, (item(1, summary="ghp_" + "x" * 36),))),
        ("long summary", lambda r: answer(r, (item(1, summary="s" * 221),))),
        ("NaN score", lambda r: answer(r, (item(1, score=math.nan),))),
        ("inf score", lambda r: answer(r, (item(1, score=math.inf),))),
        ("text score", lambda r: answer(r, (item(1, score="0.9"),))),
        ("bool score", lambda r: answer(r, (item(1, score=True),))),
        ("long resource ref", lambda r: answer(r, (item(1, resource_ref="r" * 513),))),
        ("duplicate refs", lambda r: answer(r, (item(1), item(1)))),
        (
            "items when unavailable",
            lambda r: answer(r, (item(1),), status="unavailable", reason_code="x"),
        ),
        ("reason when completed", lambda r: answer(r, reason_code="odd")),
        ("no reason when unavailable", lambda r: answer(r, status="unavailable")),
        ("unknown status", lambda r: answer(r, status="partial")),
        ("other provider name", lambda r: answer(r, provider="openviking")),
        ("echo mismatch", lambda r: answer(r, query_summary="something else")),
        (
            "content budget",
            lambda r: answer(r._replace(max_content_chars=10), (item(1, content="c" * 11),)),
        ),
        ("not a retrieval", lambda r: {"status": "completed"}),
        (
            "unsafe readiness",
            lambda r: answer(r, provider_readiness={"next_action": "see /home/alice"}),
        ),
    ],
)
def test_a_contract_violation_becomes_provider_contract_invalid(label: str, broken) -> None:
    req = request(max_results=8)
    bad = broken(req)
    tight = req._replace(max_content_chars=10) if label == "content budget" else req
    result = guarded_retrieve(ScriptedProvider(bad), tight, deadline=0)
    assert (result.status, result.reason_code, result.items) == (
        "unavailable",
        "provider_contract_invalid",
        (),
    ), label
    assert "/home/alice" not in repr(result)


def test_9_items_for_max_8_is_a_violation_but_8_pass() -> None:
    req = request(max_results=8)
    assert guarded_retrieve(
        ScriptedProvider(answer(req, tuple(item(i) for i in range(1, 9)))), req, deadline=0
    ).ok
    nine = answer(req, tuple(item(i) for i in range(1, 10)))
    assert (
        guarded_retrieve(ScriptedProvider(nine), req, deadline=0).reason_code
        == "provider_contract_invalid"
    )


def test_item_problems_are_named() -> None:
    assert item_problem(item(1)) is None
    assert item_problem(item(1, content="c" * 16000)) is None
    assert item_problem(item(1, content="c" * 16001)) == "content"
    assert item_problem(item(1, summary="mail bob@example.com")) == "summary_unsafe"
    assert item_problem(item(1, score=None)) is None


def test_admit_drops_what_cannot_pass_and_counts_it() -> None:
    req = request(max_results=2, max_content_chars=30)
    candidates = [
        item(1, content="c" * 16001),  # too long: dropped
        item(2, summary="/home/alice"),  # unsafe: dropped
        item(3, content="x" * 20),
        item(4, content="y" * 20),  # over the remaining budget: dropped
        item(5, content="z" * 5),
        item(6, content="w"),  # valid, but the limit is reached: cap applied
    ]
    kept, dropped, capped = admit(candidates, req)
    assert [i.resource_ref for i in kept] == ["res-3", "res-5"]
    assert (dropped, capped) == (3, True)


def test_retrieval_items_are_plain_tuples_with_no_extra_fields() -> None:
    assert RetrievalItem._fields == ("resource_ref", "summary", "content", "score")
    json.dumps(item(1))  # serialisable as a plain array
