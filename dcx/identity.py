"""Who confirmed a decision: the self-confirmation comparison (SPEC §8.4, §10).

A person's gate (``dcx gate --by``) and an outcome's ``accepted_by`` may not
name the acting agent unless the profile allows self-confirmation. Names are
compared after NFKC, case folding and removing ``-``, ``_``, ``.`` and
spaces, so ``Agent-A``, ``agent_a`` and full-width ``agent.a`` are one actor. A leaf
module (stdlib only) so every writer of a confirmation can share it.
"""

from __future__ import annotations

import unicodedata

_DROPPED = str.maketrans("", "", "-_. ")


def normalise_actor(name: str) -> str:
    """The comparison form of an actor name (never stored: packets keep what was given)."""
    return unicodedata.normalize("NFKC", name).casefold().translate(_DROPPED)


def same_actor(a: str | None, b: str | None) -> bool:
    """True when both name the same actor under the normalised comparison."""
    if not a or not b:
        return False
    return normalise_actor(a) == normalise_actor(b)
