"""CLI conventions (SPEC §3.6): help with examples, import budget, the installed script."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import run_dcx
from tests.support.workspace import REPO


def _commands() -> list[list[str]]:
    from typer.main import get_command

    from dcx.cli.app import build_app

    group = get_command(build_app())
    found: list[list[str]] = []

    def walk(cmd, path):
        subs = getattr(cmd, "commands", None)
        if subs:
            for name, sub in subs.items():
                walk(sub, [*path, name])
        else:
            found.append(path)

    walk(group, [])
    return found


@pytest.mark.parametrize("path", _commands(), ids=lambda p: " ".join(p))
def test_every_command_help_has_a_description_and_an_example(dcx, path) -> None:
    result = dcx(*path, "--help")
    assert result.exit_code == 0
    assert "Example: dcx" in result.stdout
    assert "--format" in result.stdout


def test_ops_never_import_typer_or_rich() -> None:
    for path in (REPO / "dcx" / "ops").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                assert not name.startswith(("typer", "rich", "dcx.cli")), (
                    f"{path.name} imports {name}"
                )


# ahocorasick, dcx.state.privacy: the detector's and the private-value matcher's
# machinery, loaded on the first text checked (issue 12); status checks none.
HEAVY = (
    "typer",
    "rich",
    "tomlkit",
    "portalocker",
    "dcx.providers",
    "dcx.sources",
    "dcx.extensions",
    "ahocorasick",
    "detect_secrets",
    "dcx.state.privacy",
    "dcx.mcp",
    "mcp",
    "mcp_types",
    "pydantic",
    "anyio",
)


@pytest.mark.parametrize(
    "args", [["--version"], ["status", "--format", "json"], ["status"], ["--no-color", "status"]]
)
def test_startup_paths_import_nothing_heavy(example: Path, args) -> None:
    stderr = _after_command(
        example,
        args,
        f"heavy = sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r} or m.startswith({HEAVY!r}))\n"
        "print('HEAVY', heavy, file=sys.stderr)\n",
    )
    assert "HEAVY []" in stderr, stderr


def _after_command(example: Path, args: list[str], report: str, **env: str) -> str:
    """The stderr of a fresh interpreter that ran ``dcx -C example ARGS`` and then ``report``
    (Python that prints what it found in ``sys.modules``)."""
    code = (
        "import sys\n"
        "from dcx.cli import main\n"
        "try:\n"
        f"    main({['-C', str(example), *args]!r})\n"
        "except SystemExit:\n"
        "    pass\n"
    ) + report
    run_env = {**os.environ, **env}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=run_env
    ).stderr


# Every command runs from its declaration without typer (SPEC §3.6); piped, its text is
# written without rich too (dcx/cli/_layout.py). Only help and usage errors build the typer app.
PIPED_SHAPES = [
    ["log"],
    ["log", "--format", "json"],
    ["log", "--limit", "2", "--decision-id", "d"],
    ["show", "decision-source-manifest"],
    ["show", "decision-source-manifest", "--format", "json"],
    ["show", "nope"],
    ["verify"],
    ["verify", "--format", "json", "--wait", "1"],
    ["sources"],
    ["sources", "--format=json"],
    ["scan"],
    ["index"],
    ["recall", "--scope", "", "--query", "catalog TTL", "--query-summary", "TTL"],
    ["prepare", "--decision-id", "d", "--auto-rebase"],
    ["audit"],
    ["gc", "--dry-run"],
    ["ext", "list"],
]


@pytest.mark.parametrize("args", PIPED_SHAPES, ids=" ".join)
def test_commands_run_without_typer_and_piped_without_rich(example: Path, args) -> None:
    loaded = _loaded(example, args)
    assert loaded["exit"] in ("0", "2", "None"), loaded
    assert loaded["modules"] == "[]", loaded


@pytest.mark.parametrize(
    "args", [["log", "--bogus"], ["log", "--limit", "0"], ["prepare"], ["log", "--help"]]
)
def test_help_and_usage_errors_are_typer_s(example: Path, args) -> None:
    loaded = _loaded(example, args)
    assert loaded["exit"] in ("0", "2"), loaded
    assert "typer" in loaded["modules"], loaded


def _loaded(example: Path, args: list[str]) -> dict[str, str]:
    code = (
        "import sys\n"
        "from dcx.cli import main\n"
        "code = None\n"
        "try:\n"
        f"    main({['-C', str(example), *args]!r})\n"
        "except SystemExit as exc:\n"
        "    code = exc.code\n"
        "print('EXIT', code, file=sys.stderr)\n"
        "print('LOADED', sorted({m.split('.')[0] for m in sys.modules} & {'typer', 'rich', 'click'}), file=sys.stderr)\n"
    )
    env = {**os.environ, "DCX_AGENT_ID": "agent-a"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    tail = proc.stderr.rsplit("EXIT ", 1)[-1]
    exit_code, _, rest = tail.partition("\n")
    return {
        "exit": exit_code.strip(),
        "modules": rest.rsplit("LOADED ", 1)[-1].strip(),
        "stderr": proc.stderr,
    }


def test_installed_console_script_end_to_end(tmp_path: Path) -> None:
    root = tmp_path / "goal"
    root.mkdir()
    assert run_dcx("--version").stdout.startswith("dcx ")
    init = run_dcx("init", "--goal-id", "g", cwd=root)
    assert init.exit_code == 0, init.stderr
    status = run_dcx("status", "--format", "json", cwd=root)
    assert status.exit_code == 0 and status.json()["data"]["activation"]["status"] == "disabled"
    missing = run_dcx("status", cwd=tmp_path)
    assert missing.exit_code == 3 and "Traceback" not in missing.stderr


def test_no_color_env_removes_ansi(tmp_path: Path, example: Path) -> None:
    out = run_dcx("-C", str(example), "status", env={"NO_COLOR": "1", "TERM": "xterm-256color"})
    assert "\x1b[" not in out.stdout


def test_json_output_is_exactly_one_document(dcx, example: Path) -> None:
    import json

    for args in (["status"], ["sources"], ["verify"]):
        result = dcx("-C", str(example), *args, "--format", "json")
        json.loads(result.stdout)  # raises if anything else was printed
        assert result.stdout.count('"schema_version": "dcx_result_v0"') == 1


# A writing command takes a lock and signs: neither may cost a scan of every installed
# distribution (portalocker 4 reads its own version through importlib.metadata on import;
# entry points are read only when a source names a plug-in adapter, which the example's
# do not).
@pytest.mark.parametrize(
    "args",
    [["scan"], ["prepare", "--decision-id", "d", "--auto-rebase"], ["index"]],
    ids=" ".join,
)
def test_writing_commands_read_no_package_metadata(example: Path, args) -> None:
    stderr = _after_command(
        example,
        args,
        "print('LOCKED', 'portalocker' in sys.modules, file=sys.stderr)\n"
        "print('METADATA', 'importlib.metadata' in sys.modules, file=sys.stderr)\n",
        DCX_AGENT_ID="agent-a",
    )
    assert "LOCKED True" in stderr, stderr  # the command did take its lock
    assert "METADATA False" in stderr, stderr
