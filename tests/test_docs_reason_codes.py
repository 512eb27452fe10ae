"""Every exit code and every error or reason code the code can emit is documented in docs/.

Codes are collected from the source, not listed by hand, so a new one fails
this test until it is documented:

- ``code=`` / ``reason_code=`` keyword arguments that are string literals;
- string literals given to refusal helpers (``_refuse("cursor_moved", …)``, ``failed(…)``,
  ``bad(path, msg, "too_many_items")``, ``draft.reject(…, "…")``);
- literal values of ``"reason_code"``/``"code"`` keys in dict displays;
- checkpoint dispositions (``return PRESERVE, "scan_incomplete"``);
- module-level reason constants (``*_REASON*``, ``STALE = "…"`` in the
  assembler and the source port) and the tables that map to reason codes
  (recall hints, extension process and doctor reasons, readiness actions,
  feedback ineligibility reasons).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from dcx.core.errors import ExitCode
from tests.support.workspace import REPO

DCX = REPO / "dcx"
DOCS = "\n".join(p.read_text() for p in sorted((REPO / "docs").glob("*.md")))
TOKEN = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$")
HELPERS = re.compile(r"^(_?refuse\w*|bad|reject|problem|failed)$")
# Modules whose module-level string constants are reason codes (statuses excluded by name).
CONSTANT_MODULES = {"assembler.py", "sources/base.py", "sources/mcp_source.py"}
NOT_REASONS = {
    "COMPLETED",
    "NO_CHANGE",
    "FAILED",
    "UNAVAILABLE",
    "VERIFIED",
    "DELETED",
    "READY",
    "PRESERVE",
}
# Built with an f-string: `f"{kind_name}_missing"` in ops/writeback.py.
COMPUTED = {"evidence_missing", "proposal_missing", "outcome_missing"}


def _literal(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and TOKEN.match(node.value):
        return node.value
    return None


def collect(path: Path) -> set[str]:
    rel = path.relative_to(DCX).as_posix()
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if (
            isinstance(node, ast.keyword)
            and node.arg in ("code", "reason_code")
            and _literal(node.value)
        ):
            found.add(node.value.value)  # type: ignore[attr-defined]
        elif isinstance(node, ast.Call):
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", "")
            if HELPERS.match(name):
                found.update(v for v in map(_literal, node.args) if v)
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if (
                    isinstance(key, ast.Constant)
                    and key.value in ("reason_code", "code")
                    and _literal(value)
                ):
                    found.add(value.value)  # type: ignore[attr-defined]
        elif (
            isinstance(node, ast.Tuple)
            and len(node.elts) == 2
            and isinstance(node.elts[0], ast.Name)
            and node.elts[0].id in ("READY", "PRESERVE")
            and _literal(node.elts[1])
        ):
            found.add(node.elts[1].value)  # type: ignore[attr-defined]
    if rel in CONSTANT_MODULES:
        for node in ast.parse(path.read_text()).body:
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
            ):
                name = node.targets[0].id
                if name.isupper() and name not in NOT_REASONS and _literal(node.value):
                    found.add(node.value.value)  # type: ignore[attr-defined]
    return found


def emitted_codes() -> set[str]:
    from dcx.extensions.doctor import FAILURES
    from dcx.packets.advisory import NEXT_ACTIONS
    from dcx.packets.feedback import INELIGIBLE
    from dcx.providers.extension import PROCESS_REASONS
    from dcx.providers.reasons import HINTS

    codes = set(COMPUTED)
    for path in sorted(DCX.rglob("*.py")):
        codes |= collect(path)
    codes |= set(HINTS) | set(PROCESS_REASONS.values()) | set(FAILURES.values()) | set(INELIGIBLE)
    codes |= set(NEXT_ACTIONS) | {v for v in NEXT_ACTIONS.values() if v}
    return codes


def test_the_collector_finds_codes_of_every_family() -> None:
    codes = emitted_codes()
    for sample in (
        "cursor_moved",
        "rebase_refs_stale",
        "too_many_items",
        "scan_incomplete",
        "baseline_adopted",
        "stale_authority_revision",
        "exact_read_not_text",
        "index_missing",
        "doctor_exit_nonzero",
        "no_current_source_revision",
        "event_id_conflict",
        "kind_mismatch",
        "packet_corrupt",
    ):
        assert sample in codes, sample
    assert len(codes) > 120


def test_every_code_is_documented() -> None:
    missing = sorted(code for code in emitted_codes() if f"`{code}`" not in DOCS)
    assert not missing, f"document these codes in docs/ (exit-codes.md tables): {missing}"


def test_every_exit_code_is_documented() -> None:
    table = (REPO / "docs" / "exit-codes.md").read_text()
    for code in ExitCode:
        assert re.search(rf"^\| {int(code)} \|", table, re.M), (
            f"exit code {int(code)} ({code.name})"
        )
