"""Test isolation by construction, and the fixtures every test may ask for.

Every test runs in its own temp directory with a fresh HOME, a fixed clock,
pinned terminal width and no inherited DCX_* settings, so touching a real
home or the repository's own example fails loudly instead of passing quietly.

Only fixtures (and the hypothesis profiles) live here; the helpers they use, and that
tests import, are in ``tests/support/`` (``from tests.support.<module> import ...``).
"""

from __future__ import annotations

import os
import shutil
import signal
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from syrupy.extensions.json import JSONSnapshotExtension

from tests.support.cli import CliResult, in_process
from tests.support.cycle import run_cycle, run_review_cycle
from tests.support.shared import once
from tests.support.sources import install_plugin
from tests.support.workspace import (
    FIXED_CHAIN_NONCE,
    FIXED_NOW,
    copy_example,
    install_key,
    write_tree,
)

# Ctrl-C as a terminal sends it: a suite started in the background (`make test &`, nohup, a
# CI runner) inherits SIGINT ignored, and so would every dcx it starts, which then never
# sees the interrupt the exit-130 tests send; the default handler again, for them all.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# Hypothesis profiles: "ci" (default) keeps `make test` CI-sized; "deep" is the
# knob for long fuzz runs: `pytest --hypothesis-profile=deep tests/fuzz`.
_quiet = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
settings.register_profile("ci", deadline=None, suppress_health_check=_quiet, print_blob=True)
settings.register_profile("deep", deadline=None, suppress_health_check=_quiet, max_examples=20_000)
settings.load_profile(os.environ.get("DCX_HYPOTHESIS_PROFILE", "ci"))

# The files that take longest (`pytest --durations`: a minute or more each, mostly waiting on
# real servers, subprocesses and deadlines) run first: under `--dist loadfile` a file is whole
# on one worker, and one of these taken last leaves the other workers idle until it ends.
HEAVY_FIRST = (
    "tests/model/",
    "tests/fuzz/",
    "tests/reliability/test_crash_commit.py",
    "tests/sources/test_mcp_source.py",
    "tests/cli/test_mcp_source_cli.py",
    "tests/multihost/test_multihost_signatures.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Heavy files first, every file's own order kept (a stable sort)."""

    def heavy(item: pytest.Item) -> bool:
        return item.nodeid.startswith(HEAVY_FIRST)

    items.sort(key=lambda item: not heavy(item))


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("DCX_"):
            monkeypatch.delenv(name)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("DCX_NOW", FIXED_NOW)
    monkeypatch.setenv(
        "DCX_CHAIN_NONCE", FIXED_CHAIN_NONCE
    )  # the evidence's random chain nonce, fixed
    monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("TERM", "dumb")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    from dcx.core import public

    public.bind_private_values(None)  # an in-process CLI run binds its workspace's values


@pytest.fixture
def snapshot_json(snapshot):
    return snapshot.use_extension(JSONSnapshotExtension)


@pytest.fixture
def tree() -> Callable[[Path, Mapping[str, Any]], None]:
    return write_tree


@pytest.fixture
def example(tmp_path: Path) -> Path:
    """A fresh copy of the bundled example goal with the fixed test key."""
    return copy_example(tmp_path / "example")


@pytest.fixture
def fresh_ws(tmp_path: Path) -> Path:
    """An initialised, still default-off workspace with the fixed key."""
    from dcx.ops.init import init

    root = tmp_path / "goal"
    root.mkdir()
    install_key(root)
    init(root=root, goal_id="goal-test", agent_id="agent-a")
    return root


@pytest.fixture
def dcx() -> Callable[..., CliResult]:
    """Run the typer app in-process (typer's runner), stdout and stderr apart."""
    return in_process()


# -- the example after a whole story, built once per test run and copied per test --------


def _story(run: Callable[..., Any]) -> Callable[[Path], Any]:
    def build(target: Path) -> Any:
        home = target / "home"
        home.mkdir(parents=True)
        root = copy_example(target / "example")
        return run(root, env={"HOME": str(home)})

    return build


@pytest.fixture(scope="session")
def _cycle_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target, _ = once(tmp_path_factory, "cycle-template", _story(run_cycle))
    return target / "example"


@pytest.fixture
def cycled(_cycle_template: Path, tmp_path: Path) -> Path:
    """A private copy of the example after one full cycle (``tests.support.cycle.run_cycle``)."""
    dest = tmp_path / "example"
    shutil.copytree(_cycle_template, dest, symlinks=True)
    return dest


@pytest.fixture(scope="session")
def _review_template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    target, refs = once(tmp_path_factory, "review-template", _story(run_review_cycle))
    return target / "example", refs


@pytest.fixture
def reviewed(
    _review_template: tuple[Path, dict[str, str]], tmp_path: Path
) -> tuple[Path, dict[str, str]]:
    """A private copy of the example after the gated story (``run_review_cycle``), and its refs."""
    template, refs = _review_template
    dest = tmp_path / "example"
    shutil.copytree(template, dest, symlinks=True)
    return dest, dict(refs)


@pytest.fixture(scope="session")
def example_plugin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example source plugin (fixtures/plugins/) pip-installed once per test run into a
    folder of its own (never the venv), for ``PYTHONPATH`` or ``sys.path``; read only."""
    target, _ = once(tmp_path_factory, "example-plugin", lambda t: str(install_plugin(t / "site")))
    return target / "site"
