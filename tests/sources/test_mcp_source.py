"""The mcp adapter through the plane API (SPEC §15.1), against a real MCP server.

The server is ``tests.support.mcp_server`` — the MCP SDK's own low-level server over stdio,
started by dcx for each session — whose resources are the files of a temp folder. The oracle
(``tests.support.mcpsource.model``) hashes the files itself and diffs two states in Python; it
never asks dcx or the server what changed.
"""

from __future__ import annotations

import base64
import os
import time
from pathlib import Path

import blake3
import pytest

from dcx.core.clock import FixedClock
from dcx.sources.plane import exact_read_scan, read_complete, scan_source
from tests.support.mcpsource import PREFIX, SID, diff, model, needs_sdk, register
from tests.support.sources import plane
from tests.support.workspace import write_tree

pytestmark = needs_sdk
CLOCK = FixedClock("2026-11-29T18:00:00Z")


def scan(root: Path, cursor: str | None = None, **profile):
    _ws, _prof, registry, providers = plane(root, **profile)
    source = registry.source(SID)
    result = scan_source(providers, source, cursor_before=cursor, clock=CLOCK)
    return result, providers


def got(result) -> list[tuple[str, str, str]]:
    return [(i.resource_ref, i.change, i.revision) for i in result.items]


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    folder = tmp_path / "notes"
    write_tree(
        folder,
        {
            "a.md": "alpha\n",
            "b.md": "beta\n",
            "sub": {"c.md": "gamma ünïcode\n", "d.txt": "delta\n"},
            "e.md": "epsilon\n",
            "logo.bin": b"\x89PNG\x00\xff\xfe",
        },
    )
    return folder


def test_scans_follow_the_model_across_adds_changes_and_removals(fresh_ws, notes):
    register(fresh_ws, notes, "--page-size", "2")  # 6 resources: three pages
    first, _ = scan(fresh_ws)
    assert first.status == "completed", first.reason_code
    assert got(first) == diff({}, model(notes))
    assert first.telemetry.skipped_binary == 1  # logo.bin is a blob: skipped and counted
    before = model(notes)

    (notes / "a.md").write_text("alpha, changed\n")
    (notes / "b.md").unlink()
    (notes / "sub" / "f.md").write_text("zeta\n")
    (notes / "e.md").write_bytes(b"\xff\xfe not text")  # text that became a blob: no longer held
    second, _ = scan(fresh_ws, first.cursor_after)
    assert second.status == "completed"
    assert got(second) == diff(before, model(notes))

    third, _ = scan(fresh_ws, second.cursor_after)
    assert third.status == "no_change" and third.items == ()
    assert third.cursor_after == second.cursor_after


def test_prefix_and_include_select_resources(fresh_ws, notes):
    register(fresh_ws, notes, include=("sub/**",), prefix=PREFIX)
    result, _ = scan(fresh_ws)
    assert [i.resource_ref for i in result.items] == [PREFIX + "sub/c.md", PREFIX + "sub/d.txt"]
    register(fresh_ws, notes, prefix="notes://elsewhere/")
    result, _ = scan(fresh_ws)
    assert result.status == "no_change" and result.items == ()


def test_max_changes_caps_in_uri_order_and_the_next_scan_resumes(fresh_ws, notes):
    register(fresh_ws, notes, extra="max_changes = 2\n")
    want = diff({}, model(notes))
    first, _ = scan(fresh_ws)
    assert got(first) == want[:2] and first.telemetry.result_cap_applied
    second, _ = scan(fresh_ws, first.cursor_after)
    assert got(second) == want[2:4] and second.telemetry.result_cap_applied
    third, _ = scan(fresh_ws, second.cursor_after)
    assert got(third) == want[4:] and not third.telemetry.result_cap_applied


def test_server_versions_are_revisions_and_spare_the_reads(fresh_ws, notes):
    """With ``_meta.version`` on every resource a scan only lists: the server crashes on its
    4th request, and three pages of two are all the scan asks for."""
    register(fresh_ws, notes, "--versions", "--page-size", "2", "--crash-after", "4")
    result, _ = scan(fresh_ws)
    assert result.status == "completed", result.reason_code
    import hashlib

    def version_revision(path: Path) -> str:
        version = hashlib.sha256(path.read_bytes()).hexdigest()
        return "v:" + blake3.blake3(version.encode()).hexdigest()

    files = sorted(p for p in notes.rglob("*") if p.is_file())
    assert got(result) == [
        (PREFIX + p.relative_to(notes).as_posix(), "added", version_revision(p)) for p in files
    ]


def test_exact_reads_verify_text_and_see_what_changed_since(fresh_ws, notes):
    register(fresh_ws, notes)
    result, providers = scan(fresh_ws)
    reads = exact_read_scan(providers, result, clock=CLOCK)
    assert read_complete(result, reads)
    for uri, read in reads.items():
        assert read.status == "verified"
        assert read.content == (notes / uri[len(PREFIX) :]).read_text()

    (notes / "a.md").write_text("changed after the scan\n")
    (notes / "b.md").unlink()
    reads = exact_read_scan(providers, result, clock=CLOCK)
    assert reads[PREFIX + "a.md"].reason_code == "exact_read_revision_mismatch"
    assert reads[PREFIX + "b.md"].reason_code == "exact_read_revision_mismatch"
    assert reads[PREFIX + "e.md"].status == "verified"
    assert not read_complete(result, reads)


def test_a_removal_is_verified_by_a_listing_and_big_text_is_oversize(fresh_ws, notes):
    register(fresh_ws, notes)
    first, _ = scan(fresh_ws)
    (notes / "b.md").unlink()
    (notes / "a.md").write_text("x" * 5000)
    second, providers = scan(fresh_ws, first.cursor_after, max_read_bytes=1000)
    reads = exact_read_scan(providers, second, clock=CLOCK)
    assert reads[PREFIX + "b.md"].status == "deleted"
    assert reads[PREFIX + "a.md"].status == "oversize"
    assert read_complete(second, reads)


def test_versioned_reads_compare_the_version(fresh_ws, notes):
    register(fresh_ws, notes, "--versions")
    result, providers = scan(fresh_ws)
    (notes / "e.md").write_text("epsilon, newer\n")
    reads = exact_read_scan(providers, result, clock=CLOCK)
    assert reads[PREFIX + "a.md"].status == "verified"
    assert reads[PREFIX + "logo.bin"].status == "binary"  # a terminal outcome, as for files
    assert reads[PREFIX + "e.md"].reason_code == "exact_read_revision_mismatch"


# -- fail-open ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flags", "reason", "timeout"),
    [
        (("--page-size", "2", "--crash-after", "2"), "mcp_server_exited", 120),  # mid-listing
        (("--malformed",), "mcp_protocol_error", 120),
        # a deadline far below the server's 60 s: whether it passes during the start or the
        # answer, the reason is the same, so the test waits for nothing but this deadline
        (("--slow", "60"), "mcp_timeout", 1),
        (("--hang-after-list",), "mcp_timeout", 1),
    ],
)
def test_a_failing_server_is_unavailable_and_moves_no_cursor(
    fresh_ws, notes, flags, reason, timeout
):
    register(fresh_ws, notes, *flags, timeout=timeout)
    result, _ = scan(fresh_ws)
    assert (result.status, result.reason_code) == ("unavailable", reason)
    assert result.items == () and result.cursor_after is None


def test_a_server_that_does_not_start(fresh_ws, notes, tmp_path):
    register(fresh_ws, notes)
    text = (fresh_ws / ".decision-context" / "sources.toml").read_text()
    missing = str(tmp_path / "no-such-server")
    import json
    import sys

    text = text.replace(json.dumps(sys.executable), json.dumps(missing), 1)
    (fresh_ws / ".decision-context" / "sources.toml").write_text(text)
    result, _ = scan(fresh_ws)
    assert (result.status, result.reason_code) == ("unavailable", "mcp_start_failed")


def test_a_line_over_the_cap_stops_the_server(fresh_ws, notes):
    register(fresh_ws, notes, "--huge", str(3 << 20))
    result, _ = scan(fresh_ws, max_scan_bytes=1000)  # cap: 2 x 1000 + 1 MiB
    assert (result.status, result.reason_code) == ("unavailable", "mcp_output_too_large")


def test_text_over_max_scan_bytes_is_skipped_unhashed(fresh_ws, notes):
    register(fresh_ws, notes, "--huge", "600000")
    result, _ = scan(fresh_ws, max_scan_bytes=500000)
    assert result.status == "completed"
    assert PREFIX + "huge.md" not in [i.resource_ref for i in result.items]
    assert result.telemetry.skipped_oversize == 1


# -- the subprocess boundary ------------------------------------------------------------------


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie still answers kill(0); its state says it is dead
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _gone(pid: int) -> bool:
    """The process ended (allowing its reaper a moment: the check, not a timing, decides)."""
    for _ in range(100):
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


# with --slow, 1 s: the session is cut short in the start or in the answer alike
@pytest.mark.parametrize(("flags", "timeout"), [((), 120), (("--slow", "60"), 1)])
def test_the_server_and_its_children_never_outlive_the_session(
    fresh_ws, notes, tmp_path, flags, timeout
):
    pidfile, childfile = tmp_path / "server.pid", tmp_path / "child.pid"
    register(
        fresh_ws,
        notes,
        "--pidfile",
        str(pidfile),
        "--spawn-child",
        str(childfile),
        *flags,
        timeout=timeout,
    )
    result, _ = scan(fresh_ws)
    assert result.status == ("unavailable" if flags else "completed")
    assert _gone(int(pidfile.read_text()))
    assert _gone(int(childfile.read_text()))


def test_the_server_sees_only_the_allow_list_and_the_locator_env(
    fresh_ws, notes, tmp_path, monkeypatch
):
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "dcx-test-secret-value")
    monkeypatch.setenv("SHELL", "/bin/sh")
    monkeypatch.setenv("USER", "someone")
    dump = tmp_path / "env.txt"
    register(fresh_ws, notes, "--env-dump", str(dump), env={"NOTES_TOKEN": "given-by-the-locator"})
    result, _ = scan(fresh_ws)
    assert result.status == "completed"
    names = set(dump.read_text().split())
    allowed = {"PATH", "HOME", "LANG", "TMPDIR", "NOTES_TOKEN"}
    assert {"NOTES_TOKEN", "HOME", "PATH"} <= names
    assert {n for n in names if not n.startswith("LC_")} <= allowed


def test_base64_blob_bytes_are_what_is_hashed(fresh_ws, tmp_path):
    """A blob's revision would be blake3 of the decoded bytes: a blob that turns into text of the
    same bytes is still a change from 'no resource' to a text resource (blobs are not held)."""
    notes = tmp_path / "notes"
    write_tree(notes, {"x.md": b"\xff\xfe"})
    register(fresh_ws, notes)
    first, _ = scan(fresh_ws)
    assert first.status == "no_change" and first.telemetry.skipped_binary == 1
    (notes / "x.md").write_text(base64.b64encode(b"\xff\xfe").decode())
    second, _ = scan(fresh_ws, first.cursor_after)
    assert got(second) == diff({}, model(notes))


def test_a_deadline_during_the_reads_reports_what_was_found_and_the_next_scan_resumes(
    fresh_ws, tmp_path
):
    """One listing and the first window of reads answer at once, every later read takes 60 s:
    the scan reports the changes it found (capped, noted ``mcp_timeout``), and a scan from that
    cursor, with the server answering again, reports exactly the rest."""
    notes = tmp_path / "notes"
    write_tree(notes, {f"n{i:02d}.md": f"note {i}\n" for i in range(40)})
    window = 16  # dcx's reads in flight (dcx.sources.mcp_source.WINDOW), read first
    want = diff({}, model(notes))
    # the deadline: three times what the whole scan takes now, with the server answering at
    # once (its start, the listing and every read: more than the stalled scan must do in
    # time), measured on this machine at this moment, so load stretches both alike
    register(fresh_ws, notes, timeout=40)
    started = time.monotonic()
    calibration, _ = scan(fresh_ws)
    whole = time.monotonic() - started
    assert calibration.status == "completed" and got(calibration) == want, calibration.reason_code
    deadline = round(3 * whole + 2, 1)
    register(fresh_ws, notes, "--slow", "60", "--slow-after", str(1 + window), timeout=deadline)
    first, _ = scan(fresh_ws)
    assert (first.status, first.reason_code) == ("completed", "mcp_timeout")
    assert first.telemetry.result_cap_applied
    assert got(first) == want[:window]
    register(fresh_ws, notes)
    second, _ = scan(fresh_ws, first.cursor_after)
    assert got(second) == want[window:] and not second.telemetry.result_cap_applied


def test_command_env_and_prefix_join_the_private_values(fresh_ws, notes):
    from dcx.core.workspace import Workspace
    from dcx.state.privacy import collect

    register(
        fresh_ws, notes, env={"NOTES_TOKEN": "tok-private-value-1234"}, prefix="wiki://ops-private/"
    )
    found = collect(Workspace(fresh_ws))
    assert found.find("see tok-private-value-1234 here") is not None
    assert found.find("under wiki://ops-private/ now") is not None
    assert found.find(f"ran {notes} again") is not None  # an argument of the command
