"""Leaf rules of dcx.core: the one exact-read policy rule, whole writes, and the packet envelope."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dcx.core import fsutil
from dcx.core.envelope import PacketContext, PacketSpec
from dcx.core.errors import InvalidInput
from dcx.core.fields import Token
from dcx.core.vocab import READ_POLICIES, policy_reads


def test_policy_reads_is_the_spec_table() -> None:
    # SPEC §5.3, written out: always reads everything, material_change all but deletions, never none
    table = {
        ("always", False): True,
        ("always", True): True,
        ("material_change", False): True,
        ("material_change", True): False,
        ("never", False): False,
        ("never", True): False,
    }
    assert {
        (p, d): policy_reads(p, deleted=d) for p in READ_POLICIES for d in (False, True)
    } == table


def test_locked_append_survives_partial_writes(tmp_path: Path, monkeypatch) -> None:
    real_write = os.write
    calls = []

    def dribble(fd: int, data) -> int:  # the kernel may take fewer bytes than given
        calls.append(len(data))
        return real_write(fd, bytes(data[:3]))

    monkeypatch.setattr(os, "write", dribble)
    log = tmp_path / "log.jsonl"
    fsutil.locked_append(log, lambda lines: b'{"a": "first line"}')
    fsutil.locked_append(log, lambda lines: b'{"b": "second"}\n')
    monkeypatch.undo()
    assert log.read_bytes() == b'{"a": "first line"}\n{"b": "second"}\n'
    assert len(calls) > 2


def test_write_all_refuses_a_write_that_makes_no_progress(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(os, "write", lambda fd, data: 0)
    fd = os.open(tmp_path / "f", os.O_WRONLY | os.O_CREAT)
    try:
        with pytest.raises(OSError):
            fsutil.write_all(fd, b"data")
    finally:
        os.close(fd)


SPEC = PacketSpec(
    kind="thing",
    schema_version="dcx_thing_v0",
    prefix="dcx-thing",
    ref_field="thing_ref",
    decision_scoped=True,
    fields={"name": Token()},
)
CTX = PacketContext("goal-a", "0123abcd", "d-1")


@pytest.mark.parametrize("key", ["schema_version", "goal_id", "key_id", "decision_id", "thing_ref"])
def test_values_cannot_override_the_envelope(key: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        SPEC.build(CTX, {"name": "n", key: "goal-b"})
    assert (caught.value.code, caught.value.field) == ("envelope_field", key)


def test_the_envelope_comes_from_the_context() -> None:
    packet = SPEC.build(CTX, {"name": "n"})
    assert (packet["goal_id"], packet["key_id"], packet["decision_id"]) == (
        "goal-a",
        "0123abcd",
        "d-1",
    )
    assert SPEC.check_stored(packet) == packet
