"""Plugin source adapters: entry point, declaration, worker subprocess, fail-open (SPEC §5.1, §5.2).

The example plugin in fixtures/plugins/ is pip-installed into a temp dir
(never into the shared venv) and found through PYTHONPATH / sys.path.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from dcx.core.clock import FixedClock
from dcx.sources.plane import exact_read_scan, scan_sources, select_sources
from tests.support.bounds import cut_short
from tests.support.cli import run_dcx
from tests.support.sources import binding_block, configure, install_plugin, plane, source_block

CLOCK = FixedClock("2026-11-29T18:00:00Z")
NOTES = {"notes": [{"id": "n1", "text": "first note"}, {"id": "n2", "text": "second note"}]}


@pytest.fixture
def plugin_dir(example_plugin: Path) -> Path:
    return example_plugin


@pytest.fixture
def with_plugin(plugin_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.syspath_prepend(str(plugin_dir))  # entry points are read from sys.path
    return plugin_dir


def _registry(
    root: Path,
    tree,
    mode: str | None = None,
    *,
    timeout: float = 30,
    adapter: str = "example-notes",
    config: str | None = None,
) -> None:
    """A local-file p0 source and a p1 plugin source (max_changes 1 under ``overflow``)."""
    tree(root, {"docs": {"a.md": "alpha"}, "notes": {"inbox.json": json.dumps(NOTES)}})
    if config is None:
        config = f'{{ mode = "{mode}" }}' if mode else ""
    configure(
        root,
        binding_block()
        + binding_block("inbox", adapter, config)
        + source_block("source:docs", '"docs"')
        + source_block(
            "source:inbox",
            '"notes/inbox.json"',
            provider_id="inbox",
            priority="p1",
            extra="max_changes = 1\n" if mode == "overflow" else "",
        ),
        timeout=timeout,
    )


def _scan_all(root: Path):
    _ws, _profile, registry, providers = plane(root)
    scans = scan_sources(providers, select_sources(registry), committed={}, clock=CLOCK)
    return {s.source_id: s for s in scans}, providers


def test_declared_plugin_scans_end_to_end_in_a_subprocess_dcx(
    fresh_ws: Path, tree, plugin_dir: Path
) -> None:
    _registry(fresh_ws, tree)
    env = {"PYTHONPATH": str(plugin_dir), "DCX_AGENT_ID": "agent-a"}
    out = run_dcx("-C", str(fresh_ws), "scan", "--format", "json", env=env)
    assert out.exit_code == 0, out.stderr
    receipts = {r["source_id"]: r for r in out.json()["data"]["receipts"]}
    inbox = receipts["source:inbox"]
    assert (inbox["status"], inbox["changed_count"], inbox["provider_version"]) == (
        "completed",
        2,
        "0.1.0",
    )
    assert receipts["source:docs"]["status"] == "completed"
    # commit the plugin's own cursor: the next scan starts after it
    (fresh_ws / ".decision-context/private/cursors.json").write_text(
        json.dumps({"schema_version": "dcx_cursors_v0", "cursors": {"source:inbox": "seq:2"}})
    )
    again = run_dcx(
        "-C", str(fresh_ws), "scan", "--source", "source:inbox", "--format", "json", env=env
    )
    assert again.json()["data"]["receipts"][0]["status"] == "no_change"


def test_plugin_exact_read_verifies_and_detects_a_change(
    fresh_ws: Path, tree, with_plugin: Path
) -> None:
    _registry(fresh_ws, tree)
    scans, providers = _scan_all(fresh_ws)
    inbox = scans["source:inbox"]
    reads = exact_read_scan(providers, inbox, clock=CLOCK)
    assert {k: (r.status, r.content) for k, r in reads.items()} == {
        "n1": ("verified", "first note"),
        "n2": ("verified", "second note"),
    }
    changed = {"notes": [{"id": "n1", "text": "rewritten"}, NOTES["notes"][1]]}
    (fresh_ws / "notes" / "inbox.json").write_text(json.dumps(changed))
    reads = exact_read_scan(providers, inbox, clock=CLOCK)
    assert (reads["n1"].status, reads["n1"].reason_code) == (
        "failed",
        "exact_read_revision_mismatch",
    )


@pytest.mark.parametrize(
    ("mode", "reason"),
    [
        ("raise", "provider_scan_failed"),
        ("foreign", "provider_contract_invalid"),
        ("overflow", "provider_contract_invalid"),
        ("bad_cursor", "provider_contract_invalid"),
        ("impostor", "runtime_provider_identity_mismatch"),
    ],
)
def test_misbehaving_plugin_is_unavailable_and_the_other_source_completes(
    fresh_ws: Path, tree, with_plugin: Path, mode: str, reason: str
) -> None:
    _registry(fresh_ws, tree, mode)
    scans, _ = _scan_all(fresh_ws)
    inbox = scans["source:inbox"]
    assert (inbox.status, inbox.reason_code, inbox.items, inbox.cursor_after) == (
        "unavailable",
        reason,
        (),
        None,
    )
    assert scans["source:docs"].status == "completed"


def test_hanging_plugin_is_stopped_at_its_timeout(fresh_ws: Path, tree, with_plugin: Path) -> None:
    _registry(fresh_ws, tree, "hang", timeout=1.5)
    started = time.monotonic()
    scans, _ = _scan_all(fresh_ws)
    elapsed = time.monotonic() - started
    assert (scans["source:inbox"].status, scans["source:inbox"].reason_code) == (
        "unavailable",
        "scan_timeout",
    )
    assert scans["source:docs"].status == "completed"
    assert cut_short(elapsed, 1.5)  # never the plugin's hour


def test_plugin_printing_to_stdout_does_not_break_the_protocol(
    fresh_ws: Path, tree, with_plugin: Path
) -> None:
    _registry(fresh_ws, tree, "noisy")
    scans, _ = _scan_all(fresh_ws)
    assert scans["source:inbox"].status == "completed" and len(scans["source:inbox"].items) == 2


@pytest.mark.parametrize("config", ['{ mode = "bogus" }', '{ mode = "normal", api_url = "x" }'])
def test_bad_plugin_config_is_a_configuration_failure(
    fresh_ws: Path, tree, with_plugin: Path, config: str
) -> None:
    _registry(fresh_ws, tree, config=config)
    scans, _ = _scan_all(fresh_ws)
    assert (scans["source:inbox"].status, scans["source:inbox"].reason_code) == (
        "unavailable",
        "provider_configuration_failed",
    )


def test_undeclared_or_missing_adapter_is_unavailable(
    fresh_ws: Path, tree, with_plugin: Path
) -> None:
    _registry(fresh_ws, tree, adapter="not-installed-anywhere")
    scans, _ = _scan_all(fresh_ws)
    assert (scans["source:inbox"].status, scans["source:inbox"].reason_code) == (
        "unavailable",
        "source_provider_adapter_unavailable",
    )
    assert scans["source:docs"].status == "completed"


def test_plugin_exception_text_never_reaches_output_or_public_files(
    dcx, fresh_ws: Path, tree, with_plugin: Path
) -> None:
    _registry(fresh_ws, tree, "raise")
    out = dcx("-C", str(fresh_ws), "scan", "--agent-id", "agent-a", "--format", "json")
    assert out.exit_code == 0 and out.json()["status"] == "partial"
    assert "CANARY-PLUGIN-EXCEPTION" not in out.stdout + out.stderr
    for path in (fresh_ws / ".decision-context").rglob("*"):
        if path.is_file():
            assert b"CANARY-PLUGIN-EXCEPTION" not in path.read_bytes(), path


def test_plugin_worker_honours_pythondontwritebytecode(
    fresh_ws: Path, tree, tmp_path: Path
) -> None:
    """Issue 11: the worker's allow-listed environment keeps PYTHONDONTWRITEBYTECODE, so a plugin
    (and dcx itself, imported by the worker) writes no bytecode next to its source."""
    site = install_plugin(tmp_path / "fresh-site")
    for cache in site.rglob("__pycache__"):  # whatever the install compiled
        import shutil

        shutil.rmtree(cache)
    _registry(fresh_ws, tree)
    env = {"PYTHONPATH": str(site), "DCX_AGENT_ID": "agent-a", "PYTHONDONTWRITEBYTECODE": "1"}
    out = run_dcx("-C", str(fresh_ws), "scan", "--format", "json", env=env)
    assert out.exit_code == 0, out.stderr
    receipts = {r["source_id"]: r for r in out.json()["data"]["receipts"]}
    assert receipts["source:inbox"]["status"] == "completed"
    assert list(site.rglob("*.pyc")) == []


def test_a_baseline_adopts_every_note_of_a_capped_plugin(
    fresh_ws: Path, tree, with_plugin: Path
) -> None:
    """Issue 11: a baseline pages through max_changes until the plugin's current state, within the deadline."""
    tree(
        fresh_ws,
        {
            "docs": {"a.md": "alpha"},
            "notes": {
                "inbox.json": json.dumps(
                    {"notes": [{"id": f"n{i}", "text": f"note {i}"} for i in range(5)]}
                )
            },
        },
    )
    configure(
        fresh_ws,
        binding_block()
        + binding_block("inbox", "example-notes", "")
        + source_block(
            "source:inbox",
            '"notes/inbox.json"',
            provider_id="inbox",
            priority="p1",
            extra="max_changes = 2\n",
        ),
    )
    _ws, _profile, registry, providers = plane(fresh_ws)
    (inbox,) = scan_sources(
        providers, select_sources(registry), committed={}, clock=CLOCK, adopt=True
    )
    assert inbox.status == "completed" and len(inbox.items) == 2
    assert (inbox.telemetry.result_cap_applied, inbox.telemetry.adopted_unlisted_count) == (
        False,
        3,
    )
    (again,) = scan_sources(
        providers,
        select_sources(registry),
        committed={"source:inbox": inbox.cursor_after},
        clock=CLOCK,
    )
    assert again.status == "no_change"
