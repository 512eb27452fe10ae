"""``dcx.core.forks.fork_map``: parts done by forked children, joined in order.

Oracle: the plain loop ``[work(part) for part in parts]``, and the process ids that did
each part (``os.getpid()`` in the answer): the first part here, every other in a child.
"""

from __future__ import annotations

import os
import sys
import threading

import pytest

from dcx.core import forks
from dcx.core.forks import fork_map

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="forks only on Linux")


def squares(part: list[int]) -> tuple[int, list[int]]:
    return os.getpid(), [n * n for n in part]


def test_parts_are_joined_in_order_and_done_by_children() -> None:
    parts = [[1, 2], [3], [4, 5, 6], []]
    answers = fork_map(squares, parts)
    assert [a[1] for a in answers] == [squares(p)[1] for p in parts]
    pids = [a[0] for a in answers]
    assert pids[0] == os.getpid()
    assert len(set(pids[1:])) == 3 and os.getpid() not in pids[1:]


def test_a_failing_child_has_its_part_done_here() -> None:
    parent = os.getpid()

    def fails_in_a_child(part: list[int]) -> tuple[int, list[int]]:
        if os.getpid() != parent and part == [3]:
            raise RuntimeError("a child fails")
        return squares(part)

    answers = fork_map(fails_in_a_child, [[1], [3], [4]])
    assert [a[1] for a in answers] == [[1], [9], [16]]
    assert answers[1][0] == parent and answers[2][0] != parent


def test_an_answer_marshal_cannot_write_is_done_here() -> None:
    class Odd:
        pass

    parent = os.getpid()
    answers = fork_map(lambda part: (os.getpid(), Odd() if os.getpid() != parent else part), [1, 2])
    assert answers == [(parent, 1), (parent, 2)]


def test_an_error_here_is_raised_and_the_children_are_reaped(monkeypatch) -> None:
    started: list[int] = []
    real = forks._fork

    def spying(work, part):
        child = real(work, part)
        assert child is not None
        started.append(child[0])
        return child

    monkeypatch.setattr(forks, "_fork", spying)

    def boom(part: int) -> int:
        raise ValueError("here first")

    with pytest.raises(ValueError, match="here first"):
        fork_map(lambda part: part, [0, 1, 2], here=boom)
    for pid in started:  # reaped: no such child any more
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


def test_no_fork_while_other_threads_run() -> None:
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not forks.can_fork()
        pids = {a[0] for a in fork_map(squares, [[1], [2], [3]])}
        assert pids == {os.getpid()}
    finally:
        stop.set()
        thread.join()
