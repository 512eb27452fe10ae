"""A newcomer's first hour: output that says where things came from and behaves as
a shell user expects — hits name their file, scans say what they skipped, a reader
that leaves early is not an error, help and completion say what they mean."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import run_dcx

DCX = [sys.executable, "-m", "dcx"]
QUERY = ("--query", "purge queue rollback drill", "--query-summary", "rollback drill")


def _goal(example: Path) -> Path:
    assert run_dcx("-C", str(example), "index").exit_code == 0
    return example


def _files(root: Path) -> set[str]:
    return {p.name for p in (root / "docs").rglob("*.md")}


def test_recall_text_names_each_hit_s_file_and_the_json_never_does(example: Path) -> None:
    root = _goal(example)
    text = run_dcx("-C", str(root), "recall", *QUERY)
    assert text.exit_code == 0, text.stderr
    hits = re.findall(r"^\[\d\] (\S+) \(source:authority:docs\) · ", text.stdout, flags=re.M)
    assert hits and set(hits) <= _files(root)  # real files of the source, one per hit line
    as_json = run_dcx("-C", str(root), "recall", *QUERY, "--format", "json")
    assert as_json.exit_code == 0
    assert not any(name in as_json.stdout for name in hits)


def test_prepare_claim_lines_say_which_file_they_came_from(example: Path) -> None:
    root = _goal(example)
    out = run_dcx("-C", str(root), "prepare", "--decision-id", "drill-1", "--auto-rebase", *QUERY)
    assert out.exit_code == 0, out.stderr
    claims = [line for line in out.stdout.splitlines() if line.startswith("  accepted ")]
    assert claims, out.stdout
    for line in claims:
        found = re.search(r" · from (\S+) \(source:authority:docs\)$", line)
        assert found and found.group(1) in _files(root), line
    as_json = run_dcx(
        "-C", str(root), "prepare", "--decision-id", "drill-2", "--auto-rebase", *QUERY,
        "--format", "json",
    )  # fmt: skip
    assert as_json.exit_code == 0 and " · from " not in as_json.stdout
    assert "locations" not in as_json.json()["data"]


def test_scan_text_says_what_it_skipped(example: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("# not part of the goal\n")
    (example / "docs" / "linked.md").symlink_to(outside)
    out = run_dcx("-C", str(example), "scan")
    assert out.exit_code == 0, out.stderr
    assert (
        "skipped: source:authority:docs: 1 symlink(s) leaving the source, not followed"
        in out.stdout
    )
    (example / "docs" / "linked.md").unlink()
    assert "skipped:" not in run_dcx("-C", str(example), "scan").stdout


@pytest.mark.parametrize("args", [("status",), ("status", "--format", "json"), ("log",)])
def test_a_reader_that_left_is_exit_0_and_quiet(example: Path, args: tuple[str, ...]) -> None:
    """`dcx … | head -1`: the pipe is closed before dcx writes, as when head has its line."""
    proc = _to_a_reader_that_left(example, args)
    assert proc.returncode == 0 and proc.stderr == b""


def _to_a_reader_that_left(example: Path, args: tuple[str, ...]) -> subprocess.CompletedProcess:
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run(
            [*DCX, "-C", str(example), *args],
            stdout=write,
            stderr=subprocess.PIPE,
            timeout=60,
            check=False,
        )
    finally:
        os.close(write)


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("status", "--format", "json", "--no-such-flag"), 2),  # typer's usage error, as JSON
        (("show", "decision-proposal-" + "0" * 32, "--format", "json"), 1),  # packet_missing
    ],
    ids=["usage-error", "refusal"],
)
def test_a_reader_that_left_an_error_is_the_errors_code_and_quiet(
    example: Path, args: tuple[str, ...], code: int
) -> None:
    """A JSON error written to a reader that left: the error's own code, no traceback."""
    proc = _to_a_reader_that_left(example, args)
    assert (proc.returncode, proc.stderr) == (code, b"")


def test_no_color_is_accepted_after_the_command(example: Path) -> None:
    before = run_dcx("-C", str(example), "--no-color", "status")
    after = run_dcx("-C", str(example), "status", "--no-color")
    assert after.exit_code == 0, after.stderr
    assert after.stdout == before.stdout
    assert run_dcx("-C", str(example), "log", "--no-color", "--format", "json").json()["ok"]


def test_no_color_after_the_command_removes_colour_on_a_terminal(example: Path) -> None:
    from tests.support.pty import read_all

    def on_a_pty(*args: str) -> bytes:
        import pty

        leader, follower = pty.openpty()
        env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
        proc = subprocess.Popen(
            [*DCX, "-C", str(example), *args],
            stdout=follower,
            stderr=follower,
            env={**env, "COLUMNS": "100", "TERM": "xterm-256color"},
        )
        os.close(follower)
        out = read_all(leader, proc, args)  # closes the leader
        assert proc.wait(timeout=60) == 0, out
        return out

    colour = re.compile(rb"\x1b\[[0-9;]*3[0-7]m")
    assert colour.search(on_a_pty("status"))  # the control: a terminal gets colour
    assert not colour.search(on_a_pty("status", "--no-color"))


@pytest.mark.parametrize(
    ("shell", "marker"),
    [
        ("bash", "complete -o default -F _dcx_completion dcx"),
        ("zsh", "#compdef dcx"),
        ("fish", "complete --command dcx"),
    ],
)
def test_show_completion_prints_the_named_shell_s_script(shell: str, marker: str) -> None:
    proc = subprocess.run(
        [*DCX, "--show-completion", shell], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert marker in proc.stdout
    others = {"bash": "complete -o default", "zsh": "#compdef", "fish": "complete --command"}
    assert not any(m in proc.stdout for s, m in others.items() if s != shell)


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_the_bash_script_completes_a_command_name(tmp_path: Path) -> None:
    """The printed script, sourced by a real bash, completes `dcx sta` to `status`."""
    script = subprocess.run(
        [*DCX, "--show-completion", "bash"], capture_output=True, text=True, timeout=60, check=True
    ).stdout
    shim = tmp_path / "dcx"
    shim.write_text(f'#!/bin/sh\nexec {sys.executable} -m dcx "$@"\n')
    shim.chmod(0o755)
    probe = (
        f"{script}\nCOMP_WORDS=(dcx sta); COMP_CWORD=1; COMP_LINE='dcx sta'; COMP_POINT=7\n"
        "_dcx_completion dcx sta dcx; printf '%s\\n' \"${COMPREPLY[@]}\"\n"
    )
    out = subprocess.run(
        ["bash", "-c", probe],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}"},
    )
    assert "status" in out.stdout.split(), (out.stdout, out.stderr)


def test_top_level_help_keeps_sentences_whole_and_hides_count_defaults() -> None:
    proc = subprocess.run(
        [*DCX, "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "COLUMNS": "80"},
    )
    assert proc.returncode == 0
    assert "[default: 0]" not in proc.stdout
    listing = proc.stdout.split("Commands:", 1)[1].split("\n\n", 1)[0]
    # one entry per command, its first sentence whole (the wrapped lines rejoined)
    entries = re.split(r"\n  (?=\S)", listing.strip())
    assert len(entries) >= 30
    for entry in entries:
        words = " ".join(entry.split()[1:])
        assert words.endswith(".") and "..." not in words, entry
    assert "init Create .decision-context/ here (or in -C PATH), overwriting nothing." in (
        " ".join(listing.split())
    )
