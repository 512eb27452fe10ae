"""``gc_paused``: no cyclic collection inside, the collector's own state after (even on error)."""

from __future__ import annotations

import gc

import pytest

from dcx.core.gcpause import gc_paused


@pytest.fixture(autouse=True)
def _restore_gc():
    was = gc.isenabled()
    yield
    (gc.enable if was else gc.disable)()


def test_paused_inside_and_restored_after() -> None:
    gc.enable()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():  # nested: still paused, and the outer block re-enables
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_disabled_collector_stays_disabled() -> None:
    gc.disable()
    with gc_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_restored_when_the_block_raises() -> None:
    gc.enable()
    with pytest.raises(ValueError), gc_paused():
        raise ValueError("boom")
    assert gc.isenabled()
