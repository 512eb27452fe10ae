"""Golden terminal output at 40, 80 and 120 columns on a real pty, and piped (issue 18).

The oracle beside the snapshots is what a person needs from a screen: no line
is wider than the terminal; every source id, reason code and short ref the
JSON holds is on screen whole (tables fold cells, they never cut them with
"…"); piped, no line is hard-wrapped (each is as long as its content).
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import shutil
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from tests.support.pty import read_all

EXE = shutil.which("dcx", path=str(Path(sys.executable).parent)) or "dcx"
COMMANDS = (("sources",), ("scan",), ("log",), ("status",))


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env.update(TERM="xterm-256color", NO_COLOR="1", DCX_AGENT_ID="agent-a")
    return env


def on_pty(args: tuple[str, ...], root: Path, width: int) -> str:
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, width, 0, 0))
    proc = subprocess.Popen(
        [EXE, "-C", str(root), *args],
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=subprocess.DEVNULL,
        env=_env(),
    )
    os.close(follower)
    out = read_all(leader, proc, args)
    proc.wait(timeout=30)
    text = out.decode().replace("\r\n", "\n")
    return re.sub(
        r"\x1b\[[0-9;]*m", "", text
    )  # styling (NO_COLOR keeps bold and dim) is not layout


def piped(args: tuple[str, ...], root: Path) -> str:
    return subprocess.run(
        [EXE, "-C", str(root), *args], capture_output=True, text=True, env=_env(), timeout=60
    ).stdout


def tokens_shown(args: tuple[str, ...], root: Path) -> set[str]:
    """Source ids, reason codes and short refs that the JSON of the same command holds."""
    data = json.loads(piped((*args, "--format", "json"), root))["data"]
    found: set[str] = set()

    def walk(value, key=""):
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, k)
        elif isinstance(value, list):
            for v in value:
                walk(v, key)
        elif isinstance(value, str) and key in (
            "source_id",
            "reason_code",
            "short_ref",
            "decision_id",
        ):
            found.add(value)

    walk(data)
    return found


@pytest.fixture
def scanned(cycled: Path) -> Path:
    (cycled / "docs" / "origin-rate-limits.md").write_text(
        "# Origin rate limits\nNow 2500 rps at peak.\n"
    )
    assert (
        subprocess.run([EXE, "-C", str(cycled), "scan"], capture_output=True, env=_env()).returncode
        == 0
    )
    return cycled


@pytest.mark.parametrize("width", [40, 80, 120])
@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a))
def test_terminal_widths(scanned: Path, args: tuple[str, ...], width: int, snapshot) -> None:
    text = on_pty(args, scanned, width)
    lines = text.splitlines()
    assert all(len(line) <= width for line in lines), [line for line in lines if len(line) > width]
    assert "…" not in text, "a cell was cut"
    # a token longer than the space it gets folds across lines; joined, it is whole
    joined = re.sub(r"\s+", "", text)
    for token in tokens_shown(args, scanned):
        assert re.sub(r"\s+", "", token) in joined, f"{token!r} is not on screen at {width} columns"
    if width >= 80:
        for token in tokens_shown(args, scanned):
            if len(token) <= 24:
                assert token in text, f"{token!r} is split at {width} columns"
    assert text == snapshot


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a))
def test_piped_output_is_never_hard_wrapped(scanned: Path, args: tuple[str, ...], snapshot) -> None:
    text = piped(args, scanned)
    wide = on_pty(args, scanned, 400)
    # piped == a terminal wide enough for every line: nothing was wrapped to fit 80 columns
    assert text.rstrip() == "\n".join(line.rstrip() for line in wide.splitlines()).rstrip() or [
        line.rstrip() for line in text.splitlines()
    ] == [line.rstrip() for line in wide.splitlines()]
    for token in tokens_shown(args, scanned):
        assert token in text
    assert text == snapshot


def test_writeback_piped_keeps_the_event_id_on_its_line(cycled: Path) -> None:
    out = piped(
        (
            "writeback",
            "--decision-id",
            "ttl-2026-12",
            "--kind",
            "todo_add",
            "--summary",
            "watch the p99 of the origin for a month after the change and report back",
        ),
        cycled,
    )
    event_lines = [line for line in out.splitlines() if "dcx-event-" in line]
    assert event_lines and all(re.search(r"dcx-event-[0-9a-f]{32}", line) for line in event_lines)


@pytest.mark.parametrize("width", [40, 52, 64, 80, 100])
def test_log_keeps_its_rail_and_its_refs_whole(scanned: Path, width: int) -> None:
    """Every line of a decision's chain starts with the rail; every short ref is on one line."""
    text = on_pty(("log",), scanned, width)
    refs = [
        link["short_ref"]
        for row in json.loads(piped(("log", "--format", "json"), scanned))["data"]["decisions"]
        for link in row["chain"]
    ]
    assert refs
    lines = text.splitlines()
    for ref in refs:
        assert any(ref in line for line in lines), (ref, width)
    chain = lines[lines.index(next(line for line in lines if line.startswith("* "))) :]
    body = [
        line for line in chain[1 : chain.index("|") + 1] if not line.startswith(("* ", "complete"))
    ]
    assert body and all(line.startswith("|") for line in body), (width, body)
    assert all(line == line.rstrip() for line in lines)
