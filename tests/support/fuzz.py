"""Hypothesis building blocks shared by the fuzz tests: arbitrary JSON, and mutations of a valid document."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import strategies as st

json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**60), max_value=2**60),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
)
json_value = st.recursive(
    json_leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=12,
)


# built once: a strategy made afresh at every draw costs more than the draw itself
_ACTION = st.sampled_from(("keep", "keep", "keep", "mutate", "drop", "replace"))
_ONE_IN_TEN = st.integers(0, 9)
_ONE_IN_FOUR = st.integers(0, 3)
_NEW_KEY = st.text(min_size=1, max_size=10)


def mutate(base: Any, data: st.DataObject, depth: int = 0) -> Any:
    """Randomly keep, drop, replace or add keys and items of a valid document."""
    if isinstance(base, dict):
        out = {}
        for key, value in base.items():
            action = data.draw(_ACTION)
            if action == "keep":
                out[key] = value
            elif action == "mutate" and depth < 4:
                out[key] = mutate(value, data, depth + 1)
            elif action == "replace":
                out[key] = data.draw(json_value)
        if data.draw(_ONE_IN_TEN) == 0:
            out[data.draw(_NEW_KEY)] = data.draw(json_value)
        return out
    if isinstance(base, list):
        items = [mutate(v, data, depth + 1) if depth < 4 else v for v in base]
        if data.draw(st.booleans()):
            items.append(data.draw(json_value))
        return items
    if data.draw(_ONE_IN_FOUR) == 0:
        return data.draw(json_value)
    return base


def _leaves(value: Any, path: tuple = ()) -> list[tuple]:
    if isinstance(value, dict):
        return [leaf for key, item in value.items() for leaf in _leaves(item, (*path, key))]
    if isinstance(value, list):
        return [leaf for i, item in enumerate(value) for leaf in _leaves(item, (*path, i))]
    return [path]


plausible_text = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-",
    min_size=1,
    max_size=60,
).filter(lambda t: t.strip() != "")


def nudge(base: Any, data: st.DataObject) -> Any:
    """A valid document with one leaf changed to a plausible value of its type: mostly still valid,
    so the success path is fuzzed too (heavy mutation alone almost never passes)."""
    out = copy.deepcopy(base)
    leaves = _leaves(out)
    if not leaves:
        return out
    path = data.draw(st.sampled_from(leaves))
    target = out
    for key in path[:-1]:
        target = target[key]
    old = target[path[-1]]
    if isinstance(old, bool):
        new: Any = data.draw(st.booleans())
    elif isinstance(old, int):
        new = data.draw(st.integers(0, 3))
    elif isinstance(old, float):
        new = data.draw(st.floats(0, 1))
    elif isinstance(old, str):
        new = data.draw(plausible_text)
    else:
        new = old
    target[path[-1]] = new
    return out


def deep() -> bool:
    """True under the deep profile (``DCX_HYPOTHESIS_PROFILE=deep`` or ``pytest --hypothesis-profile=deep``).

    Explicit ``@settings(max_examples=...)`` overrides a profile, so CI-sized
    counts must be chosen through ``examples`` for the deep knob to work.
    """
    from hypothesis import settings

    return settings.default.max_examples == settings.get_profile("deep").max_examples


def examples(ci: int, deep_count: int = 20_000) -> int:
    """``max_examples`` for a fuzz target: ``ci`` in the default profile, ``deep_count`` under deep."""
    return deep_count if deep() else ci
