"""Things a command fixed on its own and must say (SPEC §3.5 v4: "fixed and said").

Core and state code never print; they ``note`` what they repaired (a private
key's loose mode) and the faces add the notes to the command's warnings
(``drain``). One process, one command: the list is emptied on every drain.
"""

from __future__ import annotations

_notes: list[str] = []


def note(text: str) -> None:
    if text not in _notes:
        _notes.append(text)


def drain() -> list[str]:
    out = list(_notes)
    _notes.clear()
    return out
