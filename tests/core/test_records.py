"""dcx.core.records.NamedTuple against typing.NamedTuple (the oracle): the same classes, made cheaper.

Each class body is defined twice, once per NamedTuple, and everything a caller can
observe is compared: fields, defaults, docstring, names, instances (equality,
repr, hashing, pickling, _replace, _asdict, _make), methods and properties, and
the errors for a bad body.
"""

from __future__ import annotations

import pickle
import typing
from typing import Any

import pytest

from dcx.core import records


def _bodies(base: Any) -> dict[str, type]:
    class Plain(base):
        a: int
        b: str

    class Defaults(base):
        """A docstring."""

        ident: str
        count: int = 0
        tags: tuple[str, ...] = ()
        note: str | None = None

        @property
        def label(self) -> str:
            return f"{self.ident}:{self.count}"

        def bumped(self) -> Defaults:
            return self._replace(count=self.count + 1)

        @classmethod
        def of(cls, ident: str) -> Defaults:
            return cls(ident)

        LIMIT = 3

    class Empty(base):
        pass

    return {"Plain": Plain, "Defaults": Defaults, "Empty": Empty}


TYPING = _bodies(typing.NamedTuple)
OURS = _bodies(records.NamedTuple)


@pytest.mark.parametrize("name", sorted(TYPING))
def test_the_class_is_typing_s(name: str) -> None:
    want, got = TYPING[name], OURS[name]
    assert got._fields == want._fields
    assert got._field_defaults == want._field_defaults
    assert got.__doc__ == want.__doc__
    assert (got.__name__, got.__qualname__, got.__module__) == (
        want.__name__,
        want.__qualname__,
        want.__module__,
    )
    assert got.__bases__ == want.__bases__ == (tuple,)
    assert issubclass(got, tuple)
    assert set(got.__annotations__) == set(want.__annotations__)
    own = {k for k in vars(want) if not k.startswith("__")}
    assert own == {k for k in vars(got) if not k.startswith("__")}


def test_instances_behave_as_typing_s() -> None:
    want, got = TYPING["Defaults"], OURS["Defaults"]
    a, b = want("x", 2, ("t",)), got("x", 2, ("t",))
    assert tuple(a) == tuple(b) and a == b and hash(a) == hash(b)
    assert repr(a) == repr(b)
    assert a._asdict() == b._asdict()
    assert tuple(a._replace(note="n")) == tuple(b._replace(note="n"))
    assert tuple(want._make(["y", 1, (), None])) == tuple(got._make(["y", 1, (), None]))
    assert a.label == b.label and tuple(a.bumped()) == tuple(b.bumped())
    assert tuple(want.of("z")) == tuple(got.of("z")) and got.LIMIT == want.LIMIT == 3
    assert type(got.of("z")) is got
    with pytest.raises(AttributeError):
        b.count = 5  # type: ignore[misc]


def test_module_level_records_pickle() -> None:
    from dcx.chains import Entry

    entry = Entry("evidence", "decision-evidence-" + "0" * 32, "2026-01-01T00:00:00Z", None)
    assert pickle.loads(pickle.dumps(entry)) == entry


def test_a_bad_body_is_refused_as_typing_refuses_it() -> None:
    for base in (typing.NamedTuple, records.NamedTuple):
        with pytest.raises(TypeError, match="Non-default namedtuple field b cannot follow"):

            class Late(base):  # type: ignore[misc]
                a: int = 0
                b: int

        with pytest.raises(AttributeError, match="Cannot overwrite NamedTuple attribute _asdict"):

            class Over(base):  # type: ignore[misc]
                a: int

                def _asdict(self) -> dict[str, Any]:
                    return {}

    with pytest.raises(TypeError):
        records.NamedTuple("Functional", [("a", int)])  # the functional form is typing's only


def test_the_read_paths_records_are_ours() -> None:
    """The modules `dcx status` and `dcx log` import make their records without typing's checks."""
    from dcx.chains import Entry
    from dcx.core.envelope import PacketContext
    from dcx.state.store import StoredPacket

    for record in (Entry, PacketContext, StoredPacket):
        assert all(isinstance(v, str) for v in record.__annotations__.values()), record
