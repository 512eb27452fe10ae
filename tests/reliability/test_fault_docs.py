"""The fault hook is documented as it is (SPEC §3.5): every step the code names, and every step the
crash tests kill at, has its row in docs/reliability.md; the hook lives only where the spec allows."""

from __future__ import annotations

import re
import subprocess
import sys

from test_crash_commit import STEPS
from test_crash_review import STEPS as REVIEW_STEPS

from tests.multihost.test_multihost_cursors import STEPS as MIGRATION_STEPS
from tests.support.workspace import REPO

DOC = (REPO / "docs" / "reliability.md").read_text()
ROWS = set(re.findall(r"^\| `([a-z_.@0-9]+)` \|", DOC, flags=re.M))


def test_every_fault_step_in_the_code_is_documented() -> None:
    named = {}
    for path in (REPO / "dcx").rglob("*.py"):
        for step in re.findall(r'fault_point\("([^"]+)"\)', path.read_text()):
            named[step] = path.relative_to(REPO).as_posix()
    assert named, "no fault steps found: the search is broken"
    assert set(named) <= ROWS, set(named) - ROWS
    # read only by the atomic writer, the commit path and the cursor migration it starts with
    assert set(named.values()) == {
        "dcx/core/fsutil.py",
        "dcx/ops/commit.py",
        "dcx/state/cursors.py",
    }, named


def test_every_step_the_crash_tests_use_is_documented() -> None:
    own = {step for step in REVIEW_STEPS if step.startswith("review.")}
    migration = {
        step.split("@")[0] for step in MIGRATION_STEPS
    }  # SPEC §16: the per-agent cursor migration
    assert set(STEPS) | own | migration == ROWS
    # the review's n-th atomic writes are the same two steps, documented in its own table
    assert {step.split("@")[0] for step in REVIEW_STEPS} <= ROWS | {
        "atomic_write.before_replace",
        "atomic_write.after_replace",
    }


def test_the_nth_hit_form_crashes_at_the_nth_hit_only(tmp_path) -> None:
    script = (
        "import sys\nfrom dcx.core.fsutil import fault_point\n"
        "for i in range(3):\n    fault_point('demo.step')\n    print(i, flush=True)\n"
    )
    for wanted, printed in (
        ("demo.step", ""),
        ("demo.step@2", "0\n"),
        ("demo.step@3", "0\n1\n"),
        ("demo.step@4", "0\n1\n2\n"),
        ("other.step", "0\n1\n2\n"),
    ):
        out = subprocess.run(
            [sys.executable, "-c", script],
            env={"DCX_FAULT_POINT": wanted, "PATH": ""},
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )
        assert out.stdout == printed, (wanted, out.stdout)
        assert out.returncode == (0 if wanted in ("demo.step@4", "other.step") else -9), wanted
