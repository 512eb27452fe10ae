"""This workspace's private values, found in text with one multi-pattern matcher (SPEC §3.4, §9).

The list ``dcx audit`` checks every public string against, and that public
writers refuse text holding (SPEC §3.4): the goal root's absolute path, the
key, resolved absolute locators and relative ones of at least two segments
and eight characters, cursor values, string values of provider and adapter
config, and the private values behind minted refs (indexed file paths,
revisions, provider resource refs). Values shorter than eight characters are
left out: they would match ordinary words.

The matcher is an Aho-Corasick automaton (``pyahocorasick``, C): one pass over
a string finds any of thousands of values, where a loop of substring searches
costs values x strings. Built on first use: commands that check no text
(``dcx status``) never load the values or import the library.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dcx.core.fsutil import read_bytes
from dcx.core.workspace import Workspace

MIN_LENGTH = 8
# Provider config keys whose values are public by design: an installed extension's id
# is named in its receipts and readiness records.
PUBLIC_CONFIG_KEYS = frozenset({"extension_id"})


class PrivateValues:
    """value → label, and :meth:`find`: the label of the first value a text holds."""

    def __init__(self) -> None:
        self.values: dict[str, str] = {}
        self._automaton: Any = None

    def add(self, value: Any, label: str) -> None:
        if isinstance(value, str) and len(value) >= MIN_LENGTH:
            self.values.setdefault(value, label)
            self._automaton = None

    def __len__(self) -> int:
        return len(self.values)

    def _built(self) -> Any:
        if self._automaton is None:
            import ahocorasick

            automaton = ahocorasick.Automaton()
            for value, label in self.values.items():
                automaton.add_word(value, label)
            automaton.make_automaton()
            self._automaton = automaton
        return self._automaton

    def find(self, text: str) -> str | None:
        if not self.values or len(text) < MIN_LENGTH:
            return None
        for _, label in self._built().iter(text):
            return label
        return None


def _config_strings(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _config_strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _config_strings(item)
    elif isinstance(value, str):
        yield value


def collect(ws: Workspace) -> PrivateValues:
    """Every private value this workspace knows (never raises for a broken profile or registry)."""
    from dcx.core.public import without_private_values

    # reading the registry checks its tokens with the detector: not against the list being made
    with without_private_values():
        return _collect(ws)


def _collect(ws: Workspace) -> PrivateValues:
    from dcx.core.errors import DcxError
    from dcx.state.profile import load_profile, load_registry

    found = PrivateValues()
    found.add(str(ws.root.resolve()), "goal root path")
    with contextlib.suppress(OSError):
        from dcx.state.keys import read_secret

        found.add(read_secret(ws).hex(), "workspace key")
    try:
        registry = load_registry(ws)
        profile = load_profile(ws)
    except DcxError:
        registry, profile = None, None
    if profile is not None:
        _add_profile(found, profile)
    if registry is not None:
        _add_registry(found, ws, registry)
    _add_cursors(found, ws)
    _add_ref_map(found, ws)
    return found


def _add_profile(found: PrivateValues, profile: Any) -> None:
    """The context provider's private config values and its scope ref."""
    config = {
        k: v for k, v in profile.context_provider.config.items() if k not in PUBLIC_CONFIG_KEYS
    }
    for text in _config_strings(config):
        found.add(text, "provider config value")
    if profile.context_provider.scope_ref:
        found.add(profile.context_provider.scope_ref, "scope ref")


def _add_registry(found: PrivateValues, ws: Workspace, registry: Any) -> None:
    """Adapter config values, and each source's locator: paths, git refs, an mcp server's argv."""
    for binding in registry.bindings:
        for text in _config_strings(binding.config):
            found.add(text, "adapter config value")
    for source in registry.sources:
        if "command" in source.locator:  # an mcp server (SPEC §15.1): argv, env values, prefix
            command = source.locator["command"]
            for text in [*command, " ".join(command), *source.locator["env"].values()]:
                found.add(text, "mcp server command or env value")
            found.add(source.locator["uri_prefix"], "mcp uri prefix")
            continue
        raw = source.locator.get("repo") or source.locator["path"]
        found.add(os.path.realpath(ws.root / raw), "locator")
        if len(raw) >= 8 and len(Path(raw).parts) >= 2:
            found.add(raw, "locator")
        if source.locator.get("repo") is not None:
            found.add(source.locator["ref"], "git ref")


def _add_cursors(found: PrivateValues, ws: Workspace) -> None:
    """Every cursor value, and the git commit ids inside one."""
    from dcx.state.cursors import all_cursor_files

    for cursor_file in all_cursor_files(ws).values():  # the shared file and each agent's (SPEC §16)
        try:
            cursors = json.loads(read_bytes(cursor_file)).get("cursors", {})
            for value in cursors.values():
                found.add(value, "cursor value")
                if isinstance(value, str) and value.startswith("git:"):  # the commit ids inside it
                    for part in value.split(":")[1:]:
                        if len(part) in (40, 64):
                            found.add(part, "git commit id")
        except (OSError, ValueError, AttributeError):
            pass


def _add_ref_map(found: PrivateValues, ws: Workspace) -> None:
    """The private values behind the goal's opaque refs."""
    from dcx.state.refmap import all_private_values

    with contextlib.suppress(Exception):  # a missing or locked ref map is no private value
        for _, fields in all_private_values(ws):
            for field in fields[1:]:  # fields[0] is a source id or provider name: public tokens
                found.add(field, "private value behind an opaque ref")


class LazyPrivateValues:
    """Collected on the first :meth:`find`: bound for every command, paid only by writers."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self._values: PrivateValues | None = None

    def find(self, text: str) -> str | None:
        if len(text) < MIN_LENGTH:
            return None
        if self._values is None:
            self._values = collect(self.ws)
        return self._values.find(text)
