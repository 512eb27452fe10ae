"""Terminal safety through a real pseudo-terminal (SPEC §3.4.1, issue 12).

Canaries are planted in every place foreign text reaches the terminal from:
file content, a file name, recall summaries, an event summary, fields of
packets read back from disk (show, diff, verify, audit), a private value shown
by ``--reveal`` and an error message quoting a file name. The real ``dcx``
process runs on a pty with colour on (so rich writes its own SGR styling);
the oracle is the captured byte stream itself:

- every ESC in it starts one of dcx's own sequences (rich's SGR styling
  ``ESC [ digits m``; the progress bar's cursor hide/show, erase line, line up);
  no BEL, no raw C1 CSI, no U+202E;
- the planted markup prints as itself: ``[bold red]MARKUP[/]`` and ``:warning:``
  are in the text, and no ⚠ emoji was made of them;
- the planted controls are there in their visible form (``\\x1b]0;PWNED``).
"""

from __future__ import annotations

import json
import os
import pty
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dcx.core.canonical import packet_ref, pretty_bytes
from tests.support.cycle import D
from tests.support.pty import read_all

CTRL = "\x1b]0;PWNED\x07\x1b[2J\x9b31m\u202e"
MARK = "[bold red]MARKUP[/] :warning: [link=x]LINK[/link]"
VISIBLE_CTRL = "\\x1b]0;PWNED\\x07\\x1b[2J\\x9b31m\\u202e"
# dcx's own: rich's SGR styling, and the progress bar's hide/show cursor, erase line, line up.
OWN = re.compile(rb"\x1b\[(?:[0-9;]*m|\?25[lh]|2K|[0-9]*A)")
EXE = shutil.which("dcx", path=str(Path(sys.executable).parent)) or "dcx"


def on_pty(*args: str, cwd: Path) -> tuple[int, bytes]:
    """Run the installed dcx with stdout and stderr on one pty; every byte it wrote."""
    leader, follower = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env.update(TERM="xterm-256color", COLUMNS="400", LINES="50", FORCE_COLOR="1")
    proc = subprocess.Popen(
        [EXE, *args], cwd=cwd, stdin=subprocess.DEVNULL, stdout=follower, stderr=follower, env=env
    )
    os.close(follower)
    out = read_all(leader, proc, args)
    return proc.wait(timeout=30), out


def assert_safe(out: bytes, *, shows: tuple[str, ...] = ()) -> str:
    """The terminal-safety oracle; returns the text without dcx's styling."""
    bare = OWN.sub(b"", out)
    assert b"\x1b" not in bare, f"a foreign ESC reached the terminal: {bare!r}"
    assert b"\x07" not in bare, "a BEL reached the terminal"
    text = bare.decode("utf-8")
    assert "\x9b" not in text and "\u202e" not in text, (
        "a C1 or reordering character reached the terminal"
    )
    assert "\u26a0" not in text, "planted :warning: became an emoji"
    flat = re.sub(r"\s*\r?\n\s*", " ", text)
    for expected in shows:
        assert expected in flat, f"{expected!r} not shown as itself in {flat!r}"
    return text


def forge(root: Path, kind: str, prefix: str, ref_field: str, edit) -> str:
    """A stored packet changed as a hostile merge would, with a ref that recomputes."""
    folder = root / ".decision-context" / "packets" / kind
    packet = json.loads(next(folder.glob("*.json")).read_text())
    packet.pop(ref_field)
    edit(packet)
    ref = packet_ref(prefix, packet, ref_field)
    packet[ref_field] = ref
    (folder / f"{ref}.json").write_bytes(pretty_bytes(packet))
    return ref


@pytest.fixture
def hostile(cycled: Path) -> Path:
    """The cycled example with canaries in a document, its name, an event and packets."""
    docs = cycled / "docs"
    (docs / f"evil{CTRL}.md").write_text(
        f"# Rollback {CTRL} {MARK}\n\nRoll back the catalog cache TTL when origin p99 latency "
        f"stays high {CTRL}{MARK}\n\tindented line about the zanzibar quokka rollback\n"
    )
    events = cycled / ".decision-context" / "events.jsonl"
    event = json.loads(events.read_text().splitlines()[0])
    event.update(event_id="dcx-event-" + "e" * 32, summary=f"hostile {CTRL} {MARK}")
    with events.open("a") as handle:
        handle.write(json.dumps(event) + "\n")
    return cycled


def test_packet_fields_read_back_show_diff(hostile: Path) -> None:
    def markup(packet):
        packet["recommended_decision"]["summary"] = f"rec {MARK}"

    original = next((hostile / ".decision-context/packets/proposal").glob("*.json")).stem
    ref = forge(hostile, "proposal", "decision-proposal", "packet_ref", markup)
    code, out = on_pty("show", ref, cwd=hostile)
    assert code == 0, out
    assert_safe(out, shows=(MARK,))
    code, out = on_pty("diff", original, ref, cwd=hostile)
    assert code == 0, out
    assert_safe(out, shows=(MARK,))


def test_hostile_keys_in_show_verify_audit(hostile: Path) -> None:
    def evil_key(packet):
        packet[f"evil{CTRL}{MARK}"] = "x"

    ref = forge(hostile, "proposal", "decision-proposal", "packet_ref", evil_key)
    code, out = on_pty("show", ref, cwd=hostile)
    assert code == 1
    assert_safe(out, shows=("\\x1b]0;PWNED", "[bold red]MARKUP["))
    code, out = on_pty("verify", cwd=hostile)
    assert code == 1, out
    assert_safe(out, shows=("\\x1b]0;PWNED",))
    code, out = on_pty("audit", cwd=hostile)
    assert code == 1, out
    text = assert_safe(out)
    assert "<key " in text and "PWNED" not in text, (
        "audit names an unsafe key by its place, never its text"
    )


def test_event_summary_in_log(hostile: Path) -> None:
    code, out = on_pty("log", cwd=hostile)
    assert code == 0, out
    assert_safe(out, shows=(VISIBLE_CTRL, "[bold red]MARKUP[/]"))
    code, out = on_pty("log", "--format", "json", cwd=hostile)
    assert code == 0, out
    assert_safe(out, shows=("\\u001b]0;PWNED\\u0007", "\\u009b31m\\u202e"))
    summaries = [
        link["status"] for row in json.loads(out)["data"]["decisions"] for link in row["chain"]
    ]
    assert any(CTRL in s for s in summaries), "JSON escapes, and still carries the exact text"


def test_content_and_file_names_in_prepare_show_content_and_recall(hostile: Path) -> None:
    assert subprocess.run([EXE, "index"], cwd=hostile, capture_output=True).returncode == 0
    code, out = on_pty(
        "prepare",
        "--decision-id",
        "d2",
        "--show-content",
        "--query",
        "roll back the catalog cache TTL",
        "--query-summary",
        "TTL rollback",
        cwd=hostile,
    )
    assert code == 0, out
    text = assert_safe(out, shows=(f"evil{VISIBLE_CTRL}.md", MARK, f"high {VISIBLE_CTRL}"))
    assert "\\x09" not in text and "\\x0a" not in text, (
        "newline and tab inside a content block stay as they are"
    )
    assert re.search(r"\n[ \t]+indented line", text), "the tab (rich expands it) still indents"
    code, out = on_pty(
        "recall",
        "--scope",
        "",
        "--query",
        "zanzibar quokka",
        "--query-summary",
        "TTL rollback",
        cwd=hostile,
    )
    assert code == 0, out
    assert_safe(out, shows=(MARK, VISIBLE_CTRL))


def test_reveal_of_a_hostile_private_value(hostile: Path) -> None:
    from dcx.core.workspace import Workspace
    from dcx.state.keys import load_key
    from dcx.state.refmap import RefMinter
    from tests.support.cycle import seed_evidence

    ws = Workspace(hostile)
    with RefMinter(ws, load_key(ws)) as minter:
        change = minter.change_ref("source:authority:docs", f"evil{CTRL}{MARK}.md")
    ref = seed_evidence(
        hostile,
        "d9",
        source_revisions=[
            {
                "source_ref": change,
                "revision": change.replace("source-change", "source-revision"),
                "observed_at": "2026-11-29T18:00:00Z",
                "freshness": "current",
                "changed": True,
            }
        ],
    )
    code, out = on_pty("show", ref, "--reveal", cwd=hostile)
    assert code == 0, out
    assert_safe(out, shows=(f"evil{VISIBLE_CTRL}{MARK}.md",))


def test_error_quoting_a_file_name(hostile: Path) -> None:
    code, out = on_pty(
        "propose", "--decision-id", D, "--from", f"missing{CTRL}[bold]B[red]R.json", cwd=hostile
    )
    assert code == 2, out
    assert_safe(out, shows=(f"missing{VISIBLE_CTRL}[bold]B[red]R.json",))
