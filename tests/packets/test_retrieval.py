"""``context_provider_retrieval_v0``: keyed refs, ranks, constant flags, nothing private."""

from __future__ import annotations

from pathlib import Path

import pytest

from dcx.core.canonical import canonical_bytes
from dcx.core.clock import FixedClock
from dcx.core.envelope import PacketContext
from dcx.core.errors import InvalidInput
from dcx.core.workspace import Workspace
from dcx.evidence.recall import run_recall
from dcx.packets import retrieval
from dcx.state.keys import Key
from dcx.state.profile import ContextProviderConfig, Profile
from dcx.state.refmap import RefMinter
from tests.support.recall import ScriptedProvider, answer, item, request
from tests.support.workspace import FIXED_KEY

CANARIES = ("CANARY-QUERY", "CANARY-SCOPE", "CANARY-CONTENT", "CANARY-RESOURCE")


def _profile() -> Profile:
    return Profile(
        "goal-test",
        True,
        ("agent-a",),
        ContextProviderConfig(provider="bm25"),
        30,
        1 << 20,
        1 << 26,
        False,
        (),
        {},
    )


def _run(tmp_path: Path, provider: ScriptedProvider, key: bytes = FIXED_KEY, **req):
    ws = Workspace(tmp_path)
    minter = RefMinter(ws, Key(key), record=False)
    return run_recall(
        ws,
        _profile(),
        request(**req),
        minter=minter,
        clock=FixedClock("2026-11-29T18:00:00Z"),
        provider=provider,
    )


def _ctx(decision_id: str | None = None, key: bytes = FIXED_KEY) -> PacketContext:
    return PacketContext(goal_id="goal-test", key_id=Key(key).key_id, decision_id=decision_id)


def _canary_run(tmp_path: Path):
    def respond(req):
        return answer(
            req,
            (
                item(
                    1, resource_ref="CANARY-RESOURCE/one", content="CANARY-CONTENT one", score=2.5
                ),
                item(
                    2, resource_ref="CANARY-RESOURCE/two", content="CANARY-CONTENT two", score=None
                ),
            ),
        )

    return _run(
        tmp_path, ScriptedProvider(respond), query="CANARY-QUERY text", scope_ref="CANARY-SCOPE"
    )


def test_receipt_snapshot(tmp_path: Path, snapshot_json) -> None:
    run = _canary_run(tmp_path)
    assert run.receipt(_ctx()) == snapshot_json(name="one_off")
    assert run.receipt(_ctx("decision-1")) == snapshot_json(name="bound_to_a_decision")


def test_receipt_never_holds_query_scope_content_or_resource_refs(tmp_path: Path) -> None:
    run = _canary_run(tmp_path)
    body = canonical_bytes(run.receipt(_ctx())).decode()
    for canary in CANARIES:
        assert canary not in body
    assert [i.content for i in run.retrieval.items] == [
        "CANARY-CONTENT one",
        "CANARY-CONTENT two",
    ]  # in-process only


def test_provider_refs_are_keyed_and_stable(tmp_path: Path) -> None:
    first = _canary_run(tmp_path).provider_refs
    assert first == _canary_run(tmp_path).provider_refs
    assert all(ref.startswith("provider-") for ref in first)
    other = _run(
        tmp_path,
        ScriptedProvider(lambda r: answer(r, (item(1, resource_ref="CANARY-RESOURCE/one"),))),
        key=bytes(32),
    )
    assert other.provider_refs[0] != first[0]


def test_rank_keeps_provider_order_after_canonical_sorting(tmp_path: Path) -> None:
    run = _canary_run(tmp_path)
    packet = run.receipt(_ctx())
    by_rank = sorted(packet["results"], key=lambda r: r["rank"])
    assert [r["provider_ref"] for r in by_rank] == list(run.provider_refs)
    assert packet["result_count"] == 2 and packet["ok"] is True


def test_unavailable_receipt_and_constant_flags(tmp_path: Path) -> None:
    run = _run(tmp_path, ScriptedProvider(raises=OSError("CANARY-CONTENT at /home/alice")))
    packet = run.receipt(_ctx())
    assert (packet["status"], packet["reason_code"], packet["ok"], packet["results"]) == (
        "unavailable",
        "provider_retrieval_failed",
        False,
        [],
    )
    assert packet["fail_open"] is True
    assert not any(
        packet[k]
        for k in (
            "external_writes_performed",
            "raw_provider_payload_captured",
            "raw_content_captured",
            "credentials_captured",
        )
    )
    assert "CANARY" not in canonical_bytes(packet).decode()
    retrieval.SPEC.check_stored(packet)


def test_stored_receipt_rejects_tampering(tmp_path: Path) -> None:
    packet = _canary_run(tmp_path).receipt(_ctx())
    tampered = {**packet, "result_count": 1}
    with pytest.raises(InvalidInput):
        retrieval.SPEC.check_stored(tampered)
    with pytest.raises(InvalidInput):
        retrieval.SPEC.check_stored({**packet, "content": "x"})
