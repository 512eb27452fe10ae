"""Fuzzed inputs: every case ends in success or a clean InvalidInput naming a field.

CI runs about 2,000 cases per target (over 10,000 in all, counted by the
reliability report); `--hypothesis-profile=deep` runs 20,000 per target.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import Any

import pytest
import tomlkit
from hypothesis import given, settings
from hypothesis import strategies as st

from dcx.core.errors import DcxError, InvalidInput
from dcx.core.workspace import Workspace
from dcx.packets import outcome, proposal, rebase
from dcx.state import events
from dcx.state.profile import load_profile, load_registry
from tests.support.cycle import OUTCOME, PROPOSAL
from tests.support.figures import record
from tests.support.fuzz import examples, json_leaf, json_value, mutate

CASES = settings(max_examples=examples(2000))
COUNTER: dict[str, int] = {}


UNEXPECTED: dict[str, int] = {}


@contextlib.contextmanager
def case(name: str) -> Iterator[None]:
    """Count one generated case, and any exception other than a clean refusal (a traceback)."""
    COUNTER[name] = COUNTER.get(name, 0) + 1
    try:
        yield
    except Exception as exc:
        if not isinstance(exc, InvalidInput):
            UNEXPECTED[name] = UNEXPECTED.get(name, 0) + 1
        raise


def _clean_failure(exc: DcxError) -> None:
    assert isinstance(exc, InvalidInput)
    assert exc.message and "\n" not in exc.message
    assert exc.field or ": " in exc.message


@pytest.mark.parametrize(
    ("shape", "base"),
    [(proposal.INPUT, PROPOSAL), (outcome.INPUT, OUTCOME)],
    ids=["proposal", "outcome"],
)
@CASES
@given(data=st.data())
def test_fuzz_decision_inputs(shape, base, data) -> None:
    with case(shape.title):
        doc = json.loads(json.dumps(mutate(base, data), allow_nan=True))
        try:
            clean = shape.check(doc)
        except InvalidInput as exc:
            _clean_failure(exc)
            return
        assert clean == shape.check(clean)  # normalisation is idempotent


REBASE_BASE = {
    "semantic_no_change": False,
    "changed_facts": [
        {
            "fact_id": "f1",
            "summary": "TTL lowered",
            "change_ref": {"source_id": "docs", "path": "a.md"},
        }
    ],
    "recalled_claims": [
        {"claim_id": "c1", "summary": "Rollback at 400 ms", "provider_ref": "provider-" + "a" * 32}
    ],
    "stale_or_rejected_claims": [
        {"claim_id": "c2", "summary": "Old TTL", "reason_code": "stale_authority_revision"}
    ],
    "conflicts": [
        {
            "conflict_id": "k1",
            "summary": "Owners disagree",
            "change_refs": ["source-change-" + "b" * 32],
            "conflict_rule": "canonical_revision_wins",
            "status": "open",
        }
    ],
}


@CASES
@given(data=st.data())
def test_fuzz_rebase_input(data) -> None:
    with case("rebase"):
        doc = mutate(REBASE_BASE, data)
        try:
            rebase.INPUT.check(json.loads(json.dumps(doc, allow_nan=True)))
        except InvalidInput as exc:
            _clean_failure(exc)


@CASES
@given(
    line=st.one_of(
        json_value,
        st.builds(
            lambda v: {**v, "event_id": "dcx-event-" + "0" * 32},
            st.dictionaries(st.text(max_size=10), json_leaf, max_size=6),
        ),
    )
)
def test_fuzz_event_lines(line) -> None:
    with case("event"):
        if isinstance(line, dict):
            assert events.id_recomputes(line) in (True, False)
            # a line holding its own (string) id is found by it; any other id is not looked up
            own = line.get("event_id")
            found = events.find_event([line], own, "events.jsonl") if isinstance(own, str) else None
            assert found is None or found is line
        try:
            events.EVENT.check(line)
        except InvalidInput as exc:
            _clean_failure(exc)


PROFILE_BASE = {
    "schema_version": "decision_context_profile_v0",
    "goal_id": "goal-test",
    "enabled": True,
    "enabled_agents": ["agent-a"],
    "context_provider": {
        "provider": "bm25",
        "namespace": "decision-context",
        "max_results": 4,
        "timeout_seconds": 10,
    },
    "bounds": {"timeout_seconds": 30, "max_read_bytes": 1048576},
    "commit": {"allow_self_confirmation": False, "external_event_logs": []},
}
REGISTRY_BASE = {
    "schema_version": "decision_source_registry_v0",
    "bindings": [{"provider_id": "files", "adapter": "local-file"}],
    "sources": [
        {
            "source_id": "docs",
            "provider_id": "files",
            "source_kind": "document",
            "priority": "p0",
            "evidence_level": "s1",
            "objectives": ["latency"],
            "scan_mode": "incremental",
            "exact_read_policy": "always",
            "freshness_seconds": 3600,
            "locator": {"path": "docs", "include": ["**/*.md"]},
        }
    ],
}
toml_leaf = st.one_of(
    st.booleans(),
    st.integers(min_value=-(2**62), max_value=2**62),
    st.floats(allow_nan=False),
    st.text(max_size=30),
)


def _toml_safe(value: Any) -> Any:
    """tomlkit cannot write None or mixed nesting everywhere: coerce to TOML-able values."""
    if value is None:
        return "null"
    if isinstance(value, dict):
        return {str(k) or "k": _toml_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_toml_safe(v) for v in value]
    if isinstance(value, float) and value != value:
        return 0.0
    return value


@pytest.mark.parametrize("which", ["profile", "registry"])
@CASES
@given(data=st.data())
def test_fuzz_profile_and_registry_toml(tmp_path_factory, which, data) -> None:
    with case(which):
        root = tmp_path_factory.mktemp("fz")
        dc = root / ".decision-context"
        dc.mkdir()
        (dc / "workspace.toml").write_text(
            'schema_version = "dcx_workspace_v0"\ngoal_id = "goal-test"\n'
        )
        base = PROFILE_BASE if which == "profile" else REGISTRY_BASE
        doc = _toml_safe(mutate(base, data))
        if data.draw(st.integers(0, 19)) == 0:
            text = data.draw(st.text(max_size=200))  # not even TOML
        else:
            try:
                text = tomlkit.dumps(doc)
            except Exception:
                return
        (dc / ("profile.toml" if which == "profile" else "sources.toml")).write_text(text)
        ws = Workspace(root)
        before = sorted(p.name for p in dc.rglob("*"))
        try:
            (load_profile if which == "profile" else load_registry)(ws)
        except InvalidInput as exc:
            assert exc.message.startswith(".decision-context/")
            assert "\n" not in exc.message
        assert sorted(p.name for p in dc.rglob("*")) == before  # reading never writes


def test_fuzz_case_count_reported() -> None:
    """Runs last in this module: the CI-sized run covers at least 10,000 cases (bench/reliability.py prints them)."""
    total = sum(COUNTER.values())
    if total:
        record(
            "fuzz",
            "inputs",
            {"cases": total, "by_target": dict(COUNTER), "tracebacks": sum(UNEXPECTED.values())},
        )
        assert total >= 10_000, COUNTER
