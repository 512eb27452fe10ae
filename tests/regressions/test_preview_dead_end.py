"""Issue 11 §3: a preview `prepare` is no dead end: status, log and commit say what to run instead."""

from __future__ import annotations

from pathlib import Path

from tests.support.cycle import D, through_writeback


def _preview(dcx, root: Path) -> None:
    assert dcx("-C", str(root), "index").exit_code == 0
    result = dcx("-C", str(root), "prepare", "--decision-id", D, "--format", "json")
    assert result.exit_code == 0 and result.json()["data"]["summary"]["preview"] is True


def test_status_and_log_say_the_assembly_is_a_preview(dcx, example: Path) -> None:
    _preview(dcx, example)
    for verb in ("status", "log"):
        rows = dcx("-C", str(example), verb, "--format", "json").json()["data"]
        row = (rows["workspace"]["decisions"] if verb == "status" else rows["decisions"])[0]
        assert row["next_step"] == "prepare", verb
        assert "preview" in row["next_hint"] and "--auto-rebase" in row["next_hint"], verb
        text = dcx("-C", str(example), verb).stdout
        assert "preview" in text and "propose" not in text, (verb, text)


def test_status_of_a_real_assembly_still_suggests_propose(dcx, example: Path) -> None:
    assert dcx("-C", str(example), "prepare", "--decision-id", D, "--baseline").exit_code == 0
    row = dcx("-C", str(example), "status", "--format", "json").json()["data"]["workspace"][
        "decisions"
    ][0]
    assert row["next_step"] == "propose" and row["next_hint"] is None


def test_nothing_to_commit_after_a_preview_has_a_hint(dcx, example: Path) -> None:
    _preview(dcx, example)
    event_id = through_writeback(dcx, example)
    result = dcx(
        "-C", str(example), "commit", "--decision-id", D, "--event-id", event_id, "--format", "json"
    )
    assert result.exit_code == 1
    error = result.json()["error"]
    assert error["code"] == "nothing_to_commit"
    assert "preview" in error["hint"] and "--auto-rebase" in error["hint"]


def test_propose_on_a_preview_warns_at_once(dcx, example: Path) -> None:
    """The proposal is still written (it is advisory), but the agent hears now, not at `commit`,
    that this chain can never be committed; a real assembly's proposal gets no such warning."""
    from tests.support.workspace import REPO

    _preview(dcx, example)
    args = (
        "-C",
        str(example),
        "propose",
        "--decision-id",
        D,
        "--from",
        str(REPO / "fixtures" / "cycle" / "proposal.json"),
    )
    out = dcx(*args, "--format", "json")
    assert out.exit_code == 0
    warned = [w for w in out.json()["warnings"] if w.startswith("preview_assembly")]
    assert len(warned) == 1 and "--auto-rebase" in warned[0]
    assert "preview" in dcx(*args).stderr
    assert dcx("-C", str(example), "prepare", "--decision-id", D, "--baseline").exit_code == 0
    again = dcx(*args, "--format", "json").json()
    assert not [w for w in again["warnings"] if w.startswith("preview_assembly")]
