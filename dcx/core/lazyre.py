"""Regular expressions compiled on first use, not at import.

Compiling a pattern costs far more than most uses of it (a character class
with Unicode ranges, or a case-blind one, tens to hundreds of microseconds),
and a process pays for every ``re.compile`` at module level whether the
pattern runs or not: `dcx status` and the read-only commands import modules
whose checks they never reach (issue 18). A :class:`LazyPattern` holds the
source and flags and compiles the first time it is asked to match.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

TYPE_CHECKING = False  # typing stays unimported at run time (~16 M instructions; issue 18)
if TYPE_CHECKING:
    from typing import Any


class LazyPattern:
    """``re.compile(pattern, flags)``, deferred; the ``re.Pattern`` methods dcx uses."""

    __slots__ = ("_compiled", "flags", "pattern")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags
        self._compiled: re.Pattern[str] | None = None

    def compiled(self) -> re.Pattern[str]:
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(self.pattern, self.flags)
        return compiled

    def search(self, string: str) -> re.Match[str] | None:
        return self.compiled().search(string)

    def match(self, string: str) -> re.Match[str] | None:
        return self.compiled().match(string)

    def fullmatch(self, string: str) -> re.Match[str] | None:
        return self.compiled().fullmatch(string)

    def finditer(self, string: str) -> Iterator[re.Match[str]]:
        return self.compiled().finditer(string)

    def findall(self, string: str) -> list[Any]:
        return self.compiled().findall(string)

    def sub(self, repl: str | Callable[[re.Match[str]], str], string: str) -> str:
        return self.compiled().sub(repl, string)

    def __repr__(self) -> str:
        return f"LazyPattern({self.pattern!r}, {self.flags!r})"
