"""Every code example in docs/ is executed, so the docs cannot drift from the tool.

- ```console blocks: each `$ …` line runs, in page order, in a fresh copy of
  the example goal named `catalog/` (dcx finds the workspace from the current
  directory, as for a user; `cd DIR` lines move it), with DCX_AGENT_ID=agent-a,
  the fixed DCX_NOW, the stand-in Obelisk CLI on PATH and, for pages that name
  `packages/`, the repository's `packages/` linked in. `# exit N` after a
  command is its expected exit code (default 0); `# not run: why` skips a line
  that cannot run here, with the reason on the page. Plain `dcx …` lines run
  in-process (fast); anything with shell syntax runs in bash. Lines under a
  command that do not start with `$ ` are output it must print: each matches
  one line of the real output, `…` standing for any text.
- Variables: `$EVENT_ID` is the last event's id in the current workspace;
  `$ASSEMBLY`, `$EVIDENCE`, `$PROPOSAL`, … the packet of that kind the page's
  commands wrote last, and `$PREVIOUS_SCAN` … the one before.
- ```json and ```toml blocks must parse; JSON documents whose schema_version
  has a schema in docs/schemas/ must validate against it.
- No other code blocks: ```text for diagrams, nothing indented.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.support.workspace import FIXED_CHAIN_NONCE, FIXED_NOW, REPO, copy_example

DOCS = REPO / "docs"
FENCE = re.compile(r"^```([A-Za-z]*)[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)
LANGS = {"console", "json", "toml", "text"}
EXIT = re.compile(r"#\s*exit\s+(\d+)\b")
NOT_RUN = re.compile(r"#\s*not run:\s*(\S.*)$")
VAR = re.compile(r"\$([A-Z][A-Z_]*)")
SHELL = set("|&;<>()$`*")
FAKE_OBELISK = REPO / "fixtures" / "obelisk" / "bin"


def pages() -> list[Path]:
    return sorted(DOCS.glob("*.md"))


def blocks(page: Path) -> list[tuple[str, str, int]]:
    text = page.read_text()
    return [
        (m.group(1), m.group(2), text.count("\n", 0, m.start()) + 1) for m in FENCE.finditer(text)
    ]


def console_lines(page: Path) -> list[tuple[int, str]]:
    return [(line, command) for line, command, _ in console_steps(page)]


def console_steps(page: Path) -> list[tuple[int, str, list[str]]]:
    """(line number, command, expected output lines) of every `$ ` line of the page's console blocks."""
    out: list[tuple[int, str, list[str]]] = []
    for lang, body, line in blocks(page):
        if lang != "console":
            continue
        for i, row in enumerate(body.splitlines()):
            if row.startswith("$ "):
                out.append((line + i + 1, row[2:], []))
            elif row.strip() and out and out[-1][0] > line:
                out[-1][2].append(row)
    return out


def shows(output: str, expected: str) -> bool:
    pattern = ".*".join(re.escape(part) for part in expected.strip().split("…"))
    return any(re.fullmatch(pattern, row.strip()) for row in output.splitlines())


PAGES_WITH_COMMANDS = [p.name for p in pages() if console_lines(p)]


def test_every_code_block_is_runnable_or_data() -> None:
    for page in pages():
        text = page.read_text()
        for lang, _, line in blocks(page):
            assert lang in LANGS, (
                f"{page.name}:{line}: fence language {lang!r} (use console, json, toml or text)"
            )
        outside = FENCE.sub("", text)
        indented = [row for row in outside.splitlines() if re.match(r"^( {4}|\t)(\$ )?dcx ", row)]
        assert not indented, (
            f"{page.name}: indented example(s), make them ```console blocks: {indented}"
        )
    assert {"commands.md", "decision-cycle.md", "git.md"} <= set(PAGES_WITH_COMMANDS)


def test_data_blocks_parse_and_match_their_schemas() -> None:
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    from scripts import schemas

    known = schemas.all_schemas()
    registry = Registry().with_resources(
        [(f"{name}.schema.json", Resource.from_contents(body)) for name, body in known.items()]
    )
    validated = 0
    for page in pages():
        for lang, body, line in blocks(page):
            where = f"{page.name}:{line}"
            if lang == "toml":
                tomllib.loads(body)
            elif lang == "json":
                doc = json.loads(body)
                name = doc.get("schema_version") if isinstance(doc, dict) else None
                if name in known:
                    errors = list(
                        Draft202012Validator(known[name], registry=registry).iter_errors(doc)
                    )
                    assert not errors, f"{where}: {errors[0].message}"
                    validated += 1
    assert validated >= 4


class Session:
    """One page's console session: a fresh example, its variables, its working directory."""

    def __init__(self, root: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        from typer.testing import CliRunner

        from dcx.cli.app import build_app

        self.root = root
        self.cwd = root
        self.monkeypatch = monkeypatch
        self.app = build_app()
        self.runner = CliRunner()
        bin_dir = str(Path(sys.executable).parent)
        self.env = {
            "DCX_AGENT_ID": "agent-a",
            "DCX_NOW": FIXED_NOW,
            "DCX_CHAIN_NONCE": FIXED_CHAIN_NONCE,
            "HOME": str(home),
            "COLUMNS": "120",
            "NO_COLOR": "1",
            "TERM": "dumb",
            "PATH": os.pathsep.join([bin_dir, str(FAKE_OBELISK), os.environ.get("PATH", "")]),
        }
        self.history: dict[str, list[str]] = {}

    def workspace(self) -> Path:
        """The goal root dcx would find from the current directory."""
        here = self.cwd
        while not (here / ".decision-context").is_dir() and here != here.parent:
            here = here.parent
        return here / ".decision-context"

    def packets(self) -> set[Path]:
        return set((self.workspace() / "packets").glob("*/*.json"))

    def variables(self) -> dict[str, str]:
        out: dict[str, str] = {}
        events = self.workspace() / "events.jsonl"
        lines = events.read_text().splitlines() if events.exists() else []
        if lines:
            out["EVENT_ID"] = json.loads(lines[-1])["event_id"]
        for kind, refs in self.history.items():
            out[kind.upper()] = refs[-1]
            if len(refs) > 1:
                out[f"PREVIOUS_{kind.upper()}"] = refs[-2]
        return out

    def run(self, command: str) -> tuple[int, str]:
        before = self.packets()
        variables = self.variables()
        if re.fullmatch(r"cd \S+", command):
            self.cwd = (self.cwd / command[3:]).resolve()
            return 0, ""
        expanded = VAR.sub(lambda m: variables.get(m.group(1), m.group(0)), command)
        if expanded.startswith("dcx ") and not SHELL & set(expanded):
            self.monkeypatch.chdir(self.cwd)
            result = self.runner.invoke(
                self.app,
                shlex.split(expanded, comments=True)[1:],
                env=self.env,
                catch_exceptions=False,
            )
            code, output = result.exit_code, result.stdout + result.stderr
        else:
            proc = subprocess.run(
                ["bash", "-c", command],
                cwd=self.cwd,
                env={**os.environ, **self.env, **variables},
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
            code, output = proc.returncode, proc.stdout + proc.stderr
        for path in sorted(self.packets() - before):
            self.history.setdefault(path.parent.name, []).append(path.stem)
        return code, output


def _prepare(root: Path, home: Path, *, packages: bool) -> None:
    copy_example(root)
    if packages:  # repository-relative paths in the docs resolve
        (root / "packages").symlink_to(REPO / "packages")
    (home / ".fake-obelisk").mkdir(parents=True)


@pytest.mark.parametrize("page", PAGES_WITH_COMMANDS)
def test_console_examples_run(page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, home = tmp_path / "catalog", tmp_path / "home"
    _prepare(
        root, home, packages=any("packages/" in line for _, line in console_lines(DOCS / page))
    )
    session = Session(root, home, monkeypatch)
    for line_no, line, shown in console_steps(DOCS / page):
        skip = NOT_RUN.search(line)
        if skip:
            assert len(skip.group(1)) > 10, f"{page}:{line_no}: say why it cannot run"
            continue
        expected = int(EXIT.search(line).group(1)) if EXIT.search(line) else 0
        code, output = session.run(line)
        assert code == expected, (
            f"{page}:{line_no}: `{line}` exited {code}, expected {expected}\n{output[-2000:]}"
        )
        for row in shown:
            assert shows(output, row), (
                f"{page}:{line_no}: `{line}` did not print {row!r}\n{output[-2000:]}"
            )


def test_the_runner_catches_a_wrong_exit_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The harness itself can fail: a bad ref is exit 2, not 0; variables are filled from earlier steps."""
    root, home = tmp_path / "catalog", tmp_path / "home"
    _prepare(root, home, packages=False)
    session = Session(root, home, monkeypatch)
    assert session.run("dcx show decision-evidence-")[0] == 2  # nothing stored yet
    assert session.run("dcx sources --write")[0] == 0
    assert session.variables()["MANIFEST"].startswith("decision-source-manifest-")
    assert session.run("dcx show $MANIFEST | head -1")[0] == 0
    code, output = session.run("dcx show $MANIFEST")
    assert code == 0 and shows(output, "Source manifest  decision-source-manifest-…")
    assert not shows(output, "Source manifest  decision-evidence-…")


def sections(page: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    current = ""
    for row in page.read_text().splitlines():
        if row.startswith("## "):
            current = row[3:].strip()
        out[current] = out.get(current, "") + row + "\n"
    return out


def _options(command: Any) -> list[str]:
    return [
        opt
        for param in command.params
        for opt in getattr(param, "opts", [])
        if opt.startswith("--")
    ]


def test_every_command_and_flag_is_documented() -> None:
    """Each command of `dcx --help` has a `## dcx NAME` section naming each of its flags."""
    import typer

    from dcx.cli.app import build_app

    root = typer.main.get_command(build_app())
    docs = sections(DOCS / "commands.md")
    intro = docs[""]
    shared = {"--format", "--help", "--agent-id", "--observed-at", "--wait", "--no-color"}
    for flag in shared - {"--help"}:
        assert f"`{flag}" in intro, f"commands.md intro: {flag}"
    for flag in _options(root):
        assert flag in intro, f"commands.md intro: global {flag}"
    missing = []
    for name, command in sorted(root.commands.items()):
        section = docs.get(f"dcx {name}")
        if section is None:
            missing.append(f"## dcx {name}")
            continue
        subcommands = getattr(command, "commands", {})
        for sub_name, sub in sorted(subcommands.items()):
            if f"dcx {name} {sub_name}" not in section:
                missing.append(f"dcx {name} {sub_name}")
            missing += [
                f"dcx {name} {sub_name} {f}"
                for f in _options(sub)
                if f not in shared and f not in section
            ]
        missing += [
            f"dcx {name} {f}" for f in _options(command) if f not in shared and f not in section
        ]
    assert not missing, f"undocumented in docs/commands.md: {missing}"
