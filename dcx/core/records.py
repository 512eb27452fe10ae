"""``NamedTuple`` for dcx's record classes, without its per-field cost at import.

``typing.NamedTuple`` type-checks every field's annotation when the class is
made; under ``from __future__ import annotations`` each annotation is a string,
and checking it builds a ``ForwardRef``, which compiles it: about 0.4 M
instructions a field, ~15-20 M for the records `dcx status` and `dcx log`
import (issue 18). This ``NamedTuple`` makes the same class the same way
(``collections.namedtuple``, the defaults, the methods, properties and
docstring of the class body) and keeps the annotations as the strings they
are; nothing in dcx evaluates them at run time. Type checkers see
``typing.NamedTuple`` itself. tests/core/test_records.py compares the two.

Write ``from dcx.core.records import NamedTuple`` and ``class X(NamedTuple):``
as with typing's; only the class form is supported.
"""

from __future__ import annotations

import collections

TYPE_CHECKING = False  # typing stays unimported at run time (~16 M instructions; issue 18)
if TYPE_CHECKING:
    from typing import Any

# as typing's NamedTupleMeta: names a class body may not define, and names it does not copy
_PROHIBITED = frozenset(
    {
        "__new__",
        "__init__",
        "__slots__",
        "__getnewargs__",
        "_fields",
        "_field_defaults",
        "_make",
        "_replace",
        "_asdict",
        "_source",
    }
)
_SPECIAL = frozenset({"__module__", "__name__", "__annotations__"})


class _RecordMeta(type):
    def __new__(
        mcls, typename: str, bases: tuple[type, ...], ns: dict[str, Any]
    ) -> Any:  # the namedtuple class, not an instance of this metaclass
        if any(base is not _Record for base in bases):
            raise TypeError("a record class inherits from NamedTuple only")
        types: dict[str, Any] = ns.get("__annotations__", {})
        default_names: list[str] = []
        for field_name in types:
            if field_name in ns:
                default_names.append(field_name)
            elif default_names:
                raise TypeError(
                    f"Non-default namedtuple field {field_name} cannot follow default field"
                    f"{'s' if len(default_names) > 1 else ''} {', '.join(default_names)}"
                )
        defaults = [ns[name] for name in default_names]
        make: Any = collections.namedtuple  # fields known only at run time
        record = make(typename, list(types), defaults=defaults, module=ns["__module__"])
        record.__annotations__ = record.__new__.__annotations__ = dict(types)
        for key in ns:
            if key in _PROHIBITED:
                raise AttributeError("Cannot overwrite NamedTuple attribute " + key)
            if key not in _SPECIAL and key not in record._fields:
                setattr(record, key, ns[key])
        return record


_Record = type.__new__(_RecordMeta, "NamedTuple", (), {})

if TYPE_CHECKING:
    from typing import NamedTuple as NamedTuple
else:

    def NamedTuple(typename, fields=None, /, **kwargs):  # typing's name
        raise TypeError("dcx.core.records.NamedTuple supports the class form only")

    NamedTuple.__mro_entries__ = lambda bases: (_Record,)
