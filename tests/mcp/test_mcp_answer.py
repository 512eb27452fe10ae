"""The tool-call boundary (dcx.mcp.answer) in-process: what an unexpected failure may show and log."""

from __future__ import annotations

from pathlib import Path

from dcx.core.fields import Text
from dcx.core.result import Result
from dcx.core.workspace import Workspace
from dcx.mcp import answer
from dcx.mcp.tools import Session, tool

SECRET = "the recalled runbook says: roll back above 400 ms"


def _boom(session: Session, args: dict) -> Result:
    raise RuntimeError(SECRET)


def test_an_internal_error_shows_the_type_only_and_logs_the_stack_without_messages(
    example: Path,
) -> None:
    ws = Workspace(example.resolve())
    broken = tool(
        "broken",
        "A tool whose op fails unexpectedly (test only).",
        {"note": Text(optional=True)},
        _boom,
    )
    one = answer.call(Session(ws, None), broken, {"note": "hello"})
    assert one.is_error
    assert one.structured["code"] == "internal_error" and one.structured["exit_code"] == 5
    assert one.structured["message"] == "internal error (RuntimeError)"
    assert SECRET not in one.text
    logs = list(ws.log_dir.glob("internal-mcp-*.log"))
    assert len(logs) == 1 and one.structured["hint"] == f"the traceback is in {ws.rel(logs[0])}"
    logged = logs[0].read_text()
    assert "_boom" in logged and "builtins.RuntimeError (message not logged)" in logged
    assert SECRET not in logged
    assert oct(logs[0].stat().st_mode & 0o777) == "0o600"


def test_arguments_that_are_not_an_object_are_refused_before_the_op(example: Path) -> None:
    called = []
    probe = tool(
        "probe",
        "Records that it ran (test only).",
        {},
        lambda s, a: called.append(a) or Result("probe", {}),
    )
    ws = Workspace(example.resolve())
    one = answer.call(Session(ws, None), probe, ["not", "an", "object"])
    assert one.is_error and one.structured["code"] == "invalid_type" and called == []
    assert not answer.call(Session(ws, None), probe, None).is_error and called == [{}]


def test_event_log_paths_stay_inside_the_goal_root(example: Path, tmp_path: Path) -> None:
    from dcx.mcp.tools import BY_NAME

    ws = Workspace(example.resolve())
    outside = tmp_path / "outside.jsonl"
    outside.write_text("")
    (example / "escape.jsonl").symlink_to(outside)
    commit = BY_NAME["commit"]
    base = {"decision_id": "d1", "event_id": "dcx-event-" + "0" * 32}
    for path, code in (
        ("escape.jsonl", "path_outside_root"),
        (str(outside), "path_outside_root"),
        ("../outside.jsonl", "path_outside_root"),
        ("a\x00b", "invalid_input"),
    ):
        one = answer.call(Session(ws, None), commit, {**base, "event_log": path})
        assert one.is_error and one.structured["code"] == code, (path, one.structured)
        assert str(tmp_path) not in one.text
