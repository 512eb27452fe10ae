"""The example after one full decision cycle, built once per session and copied per test.

The cycle (the story of `make demo`, from ``cycle_fixture``): `dcx index`; an
authority edit after indexing, so one recalled claim goes stale; `prepare --auto-rebase` with a query; propose and outcome from the
example's own JSON files; writeback; commit; feedback. Fixed clock and key
(conftest), so every ref, and so every snapshot, is reproducible.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLE, FIXED_NOW, install_key
from cycle_fixture import QUERY, D, stale_runbook

QUERY_SUMMARY = "TTL rollback criteria"

_TEMPLATES: dict[str, Path] = {}


class Runner:
    """The typer app in-process, with an explicit environment (usable outside a test's own)."""

    def __init__(self, root: Path, env: Mapping[str, str] | None = None) -> None:
        from typer.testing import CliRunner

        from dcx.cli.app import build_app

        self.app = build_app()
        self.runner = CliRunner()
        self.root = root
        unset: dict[str, str | None] = {name: None for name in os.environ if name.startswith("DCX_")}
        self.env = {**unset, "DCX_NOW": FIXED_NOW, "DCX_AGENT_ID": "agent-a", "COLUMNS": "120", "NO_COLOR": "1",
                    "TERM": "dumb", **(env or {})}

    def __call__(self, *args: str, ok: bool = True) -> Any:
        result = self.runner.invoke(self.app, ["-C", str(self.root), *args], env=self.env, catch_exceptions=False)
        if ok:
            assert result.exit_code == 0, (args, result.stdout, result.stderr)
        return result

    def json(self, *args: str) -> dict[str, Any]:
        return json.loads(self(*args, "--format", "json").stdout)


def copy_example(dest: Path, key: bytes | None = None) -> Path:
    shutil.copytree(EXAMPLE, dest, ignore=shutil.ignore_patterns("private", "*.lock"))
    if key is None:
        install_key(dest)
    else:
        install_key(dest, key)
    return dest


def run_cycle(root: Path, decision_id: str = D, *, edit_authority: bool = True,
              env: Mapping[str, str] | None = None) -> dict[str, str]:
    """One full cycle on ``root``; returns the refs and the event id by kind."""
    dcx = Runner(root, env)
    dcx("index")
    if edit_authority:
        stale_runbook(root)
    prepared = dcx.json("prepare", "--decision-id", decision_id, "--auto-rebase", "--query", QUERY,
                        "--query-summary", QUERY_SUMMARY)["data"]["assembly"]
    proposal = dcx.json("propose", "--decision-id", decision_id, "--from", str(root / "proposal.json"))
    outcome = dcx.json("outcome", "--decision-id", decision_id, "--from", str(root / "outcome.json"))
    event = dcx.json("writeback", "--decision-id", decision_id, "--kind", "validation",
                     "--summary", "TTL kept at 90 s")["data"]["event"]
    commit = dcx.json("commit", "--decision-id", decision_id, "--event-id", event["event_id"])
    feedback = dcx.json("feedback", "--decision-id", decision_id)
    return {
        "assembly": prepared["assembly_ref"],
        "evidence": prepared["evidence"]["packet_ref"],
        "proposal": proposal["data"]["proposal"]["packet_ref"],
        "outcome": outcome["data"]["outcome"]["packet_ref"],
        "event": event["event_id"],
        "commit": commit["data"]["receipt"]["receipt_ref"],
        "feedback": feedback["data"]["feedback"]["feedback_ref"],
    }


@pytest.fixture(scope="session")
def _cycle_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if "cycle" not in _TEMPLATES:
        base = tmp_path_factory.mktemp("cycle-template")
        home = base / "home"
        home.mkdir()
        root = copy_example(base / "example")
        run_cycle(root, env={"HOME": str(home)})
        _TEMPLATES["cycle"] = root
    return _TEMPLATES["cycle"]


@pytest.fixture
def cycled(_cycle_template: Path, tmp_path: Path) -> Path:
    """A private copy of the example after one full cycle (see the module docstring)."""
    dest = tmp_path / "example"
    shutil.copytree(_cycle_template, dest, symlinks=True)
    return dest


def packet_files(root: Path) -> dict[str, Path]:
    """ref -> file of every stored packet."""
    return {p.stem: p for p in sorted((root / ".decision-context" / "packets").glob("*/*.json"))}


OWNER = "storefront-platform-lead"


def run_review_cycle(root: Path, decision_id: str = D, *, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The gated story on ``root``: prepare, propose, a person's approve gate, review (which
    commits), then an observed outcome and feedback. Every packet kind is stored once."""
    from cycle_helpers import verified_outcome

    dcx = Runner(root, env)
    dcx("index")
    stale_runbook(root)
    prepared = dcx.json("prepare", "--decision-id", decision_id, "--auto-rebase", "--query", QUERY,
                        "--query-summary", QUERY_SUMMARY)["data"]["assembly"]
    evidence_ref = prepared["evidence"]["packet_ref"]
    proposal = dcx.json("propose", "--decision-id", decision_id, "--from", str(root / "proposal.json"))
    gate = dcx.json("gate", "--decision-id", decision_id, "--approve", "--by", OWNER,
                    "--summary", "Keep the 90 s TTL; watch origin p99")["data"]["event"]
    settled = dcx.json("review", "--decision-id", decision_id, "--gate-event", gate["event_id"])["data"]
    observed = root / "outcome-observed.json"
    observed.write_text(json.dumps(verified_outcome(evidence_ref)))
    outcome = dcx.json("outcome", "--decision-id", decision_id, "--from", str(observed))
    feedback = dcx.json("feedback", "--decision-id", decision_id)
    return {
        "assembly": prepared["assembly_ref"],
        "evidence": evidence_ref,
        "proposal": proposal["data"]["proposal"]["packet_ref"],
        "gate": gate["event_id"],
        "review": settled["review"]["packet_ref"],
        "event": settled["event"]["event_id"],
        "commit": settled["commit"]["receipt_ref"],
        "outcome": outcome["data"]["outcome"]["packet_ref"],
        "feedback": feedback["data"]["feedback"]["feedback_ref"],
    }


@pytest.fixture(scope="session")
def _review_template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    if "review" not in _TEMPLATES:
        base = tmp_path_factory.mktemp("review-template")
        home = base / "home"
        home.mkdir()
        root = copy_example(base / "example")
        refs = run_review_cycle(root, env={"HOME": str(home)})
        _TEMPLATES["review"] = root
        _REVIEW_REFS.update(refs)
    return _TEMPLATES["review"], dict(_REVIEW_REFS)


_REVIEW_REFS: dict[str, str] = {}


@pytest.fixture
def reviewed(_review_template: tuple[Path, dict[str, str]], tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A private copy of the example after the gated story (see ``run_review_cycle``), and its refs."""
    template, refs = _review_template
    dest = tmp_path / "example"
    shutil.copytree(template, dest, symlinks=True)
    return dest, refs
