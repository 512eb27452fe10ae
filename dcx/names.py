"""One rule for comparing actor names (SPEC §8.4 self-confirmation, §10 ``gate --by``).

Two names are the same actor when they are equal after Unicode NFKC, case
folding and removing ``-``, ``_``, ``.`` and white space: ``AGENT-X``,
``agent_x``, ``agent-x.`` and full-width ``agent-x`` are all ``agent-x``.
A leaf module (only the standard library) so any command can use it cheaply.
"""

from __future__ import annotations

import re
import unicodedata

_DROP = re.compile(r"[-_.\s]+")


def actor_key(name: str) -> str:
    """The comparison key of an actor name."""
    text = unicodedata.normalize("NFKC", name).casefold()
    # case folding can produce characters NFKC would change again (e.g. U+1E9E)
    text = unicodedata.normalize("NFKC", text)
    return _DROP.sub("", text)


def same_actor(a: str | None, b: str | None) -> bool:
    """True when both name the same actor (a missing name matches nobody)."""
    if not a or not b:
        return False
    return actor_key(a) == actor_key(b)
