"""Each settings file is parsed once per process and again as soon as it changes (SPEC §3.6).

The oracle for what a fresh read holds is tomllib on the file's bytes; the cache is
only allowed to save the parse, never to answer for a file that was written since.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

from dcx.core.workspace import find_workspace
from dcx.state import profile as settings


def test_an_unchanged_profile_is_parsed_once(example: Path, monkeypatch) -> None:
    ws = find_workspace(str(example))
    parses: list[str] = []
    real = settings.read_profile

    def counting(path: Path, display: str) -> settings.Profile:
        parses.append(display)
        return real(path, display)

    monkeypatch.setattr(settings, "read_profile", counting)
    first = settings.load_profile(ws)
    assert settings.load_profile(ws) is first
    assert settings.load_profile(find_workspace(str(example))) is first
    assert parses == [".decision-context/profile.toml"]


def test_a_rewritten_profile_is_read_again(example: Path) -> None:
    ws = find_workspace(str(example))
    before = settings.load_profile(ws)
    assert before is not None and before.enabled
    text = ws.profile.read_text()
    # same inode, same size and the same modification time: only the content (and ctime) differ
    stat = ws.profile.stat()
    changed = text.replace("enabled = true", "enabled = false", 1).replace(
        "# Example", "#Example", 1
    )
    assert len(changed) == len(text)
    ws.profile.write_text(changed)
    os.utime(ws.profile, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert ws.profile.stat().st_size == stat.st_size and ws.profile.stat().st_ino == stat.st_ino
    after = settings.load_profile(ws)
    assert after is not None
    assert after.enabled is tomllib.loads(ws.profile.read_text())["enabled"] is False


def test_a_replaced_registry_is_read_again(example: Path) -> None:
    ws = find_workspace(str(example))
    before = settings.load_registry(ws)
    text = ws.sources.read_text()
    spare = ws.sources.with_name("sources.toml.new")
    spare.write_text(text + "\n# replaced\n")
    spare.replace(ws.sources)  # a new inode, as every dcx write makes
    after = settings.load_registry(ws)
    assert after is not before and after == before  # read again; the same sources
    assert [s.source_id for s in after.sources] == [
        s["source_id"] for s in tomllib.loads(ws.sources.read_text())["sources"]
    ]


def test_workspace_toml_is_parsed_once_and_again_after_it_is_rewritten(example: Path) -> None:
    ws = find_workspace(str(example))
    first = ws.settings
    assert find_workspace(str(example)).settings is first
    assert first == tomllib.loads(ws.workspace_toml.read_text())
    spare = ws.workspace_toml.with_name("workspace.toml.new")
    spare.write_text(ws.workspace_toml.read_text() + "require_signatures = true\n")
    spare.replace(ws.workspace_toml)
    assert ws.settings["require_signatures"] is True
    assert ws.settings == tomllib.loads(ws.workspace_toml.read_text())
