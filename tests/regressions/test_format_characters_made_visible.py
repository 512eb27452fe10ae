"""Every Unicode format character reaches a terminal in its visible form (SPEC §3.4.1 v4).

Found while writing the layout tests: ``visible`` escaped only the bidi and
zero-width characters SPEC §3.4 lists, so a soft hyphen (U+00AD), the Arabic
letter mark (U+061C), the Mongolian vowel separator (U+180E), the interlinear
annotation characters (U+FFF9-FFFB) and the tag characters (U+E0000-E007F)
reached the terminal raw. The oracle is the byte stream of a real ``dcx`` on a
pty: none of those characters is in it, and each one's escape is.
"""

from __future__ import annotations

import json
import os
import pty
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path

from tests.support.pty import read_all

EXE = shutil.which("dcx", path=str(Path(sys.executable).parent)) or "dcx"
FORMAT = ["\u00ad", "\u061c", "\u180e", "\u206a", "\ufff9", "\ufffb", "\U000e0001", "\U000e0041"]
SHOWN = [
    "\\xad",
    "\\u061c",
    "\\u180e",
    "\\u206a",
    "\\ufff9",
    "\\ufffb",
    "\\U000e0001",
    "\\U000e0041",
]


def on_pty(*args: str, cwd: Path) -> bytes:
    leader, follower = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env.update(TERM="xterm-256color", COLUMNS="400", LINES="50", DCX_AGENT_ID="agent-a")
    proc = subprocess.Popen(
        [EXE, *args], cwd=cwd, stdin=subprocess.DEVNULL, stdout=follower, stderr=follower, env=env
    )
    os.close(follower)
    out = read_all(leader, proc, args)
    assert proc.wait(timeout=30) == 0, out
    return out


def test_the_oracle_lists_format_characters() -> None:
    assert all(unicodedata.category(c) == "Cf" for c in FORMAT)


def test_recalled_content_and_a_file_name_show_every_format_character_escaped(
    example: Path,
) -> None:
    planted = "".join(FORMAT)
    (example / "docs" / f"hidden{planted}.md").write_text(
        f"# Quokka notes\n\nThe zanzibar quokka rollback{planted} stays advisory.\n"
    )
    assert subprocess.run([EXE, "index"], cwd=example, capture_output=True).returncode == 0
    out = on_pty(
        "recall", "--scope", "", "--query", "zanzibar quokka", "--query-summary", "q", cwd=example
    )
    text = out.decode("utf-8")
    for char, shown in zip(FORMAT, SHOWN, strict=True):
        assert char not in text, f"U+{ord(char):04X} reached the terminal"
        assert shown in text, f"{shown} is not on screen"
    recall = [EXE, "recall", "--scope", "", "--query", "zanzibar quokka", "--query-summary", "q"]
    data = json.loads(
        subprocess.run(
            [*recall, "--format", "json"],
            cwd=example,
            capture_output=True,
            text=True,
            env={**os.environ, "DCX_AGENT_ID": "agent-a"},
        ).stdout
    )
    content = "".join(row["content"] for row in data["data"]["results"])
    assert planted in content, "JSON escapes them and still carries the exact text"
