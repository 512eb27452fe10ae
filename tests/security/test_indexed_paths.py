"""Every path the bm25 index holds is one of this workspace's private values from the first
`dcx index` on (SPEC §3.4 v4), scanned or not.

The attack: a goal that was indexed but never scanned. A merged event line (as a hostile or
careless host would bring) names ``docs/ops-notes.md``; `dcx audit` must find it, and a public
writer must refuse the same text. The oracle is the file name the test itself created.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.recall import enable

NOTES = "docs/ops-notes.md"


def _indexed_never_scanned(root: Path, dcx) -> None:
    (root / "docs").mkdir()
    (root / NOTES).write_text("# ops notes\n\nthe pager rota and the rollback drill\n")
    (root / "docs" / "readme.md").write_text("# readme\n\nnothing private here\n")
    enable(root)
    done = dcx("-C", str(root), "index", "--format", "json", env={"DCX_AGENT_ID": "agent-a"})
    assert done.exit_code == 0, done.stdout + done.stderr
    assert not list((root / ".decision-context" / "packets").rglob("*.json")), "nothing was scanned"


def test_audit_finds_an_indexed_path_that_was_never_scanned(fresh_ws: Path, dcx) -> None:
    _indexed_never_scanned(fresh_ws, dcx)
    events = fresh_ws / ".decision-context" / "events.jsonl"
    line = {"event_id": "dcx-event-" + "0" * 32, "goal_id": "goal-test", "summary": f"see {NOTES}"}
    with events.open("a") as handle:
        handle.write(json.dumps(line) + "\n")
    audit = dcx("-C", str(fresh_ws), "audit", "--format", "json")
    assert audit.exit_code == 1, audit.stdout
    findings = json.loads(audit.stdout)["data"]["findings"]
    assert [
        f for f in findings if f["file"].endswith("events.jsonl") and f["field"].endswith("summary")
    ], findings
    assert NOTES not in audit.stdout, "audit never prints what it found"


def test_the_writers_detector_refuses_an_indexed_path(fresh_ws: Path, dcx) -> None:
    """What every public writer binds (``Globals.ws``: this workspace's private values)."""
    from dcx.core import public
    from dcx.core.errors import UnsafeText
    from dcx.core.workspace import Workspace
    from dcx.state.privacy import LazyPrivateValues

    _indexed_never_scanned(fresh_ws, dcx)
    public.bind_private_values(LazyPrivateValues(Workspace(fresh_ws)))
    try:
        with pytest.raises(UnsafeText) as refused:
            public.check_text(f"as {NOTES} says", field="summary")
        assert NOTES not in refused.value.message
        public.check_text("as the ops notes say", field="summary")  # the words alone pass
    finally:
        public.bind_private_values(None)
