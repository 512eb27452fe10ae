"""The docs list what the code has: every MCP tool with its arguments, as the server declares them.

The oracle is the server's own tool table (`dcx.mcp.tools.TOOLS`, which
tests/mcp/test_mcp_tools.py proves equal to what a real `dcx mcp` lists over the SDK), read
against the tables and lists a person reads in docs/mcp.md and docs/commands.md.
"""

from __future__ import annotations

import re

import pytest

from tests.support.workspace import REPO

pytest.importorskip("mcp")

DOCS = REPO / "docs"


def _tools() -> dict[str, list[tuple[str, bool]]]:
    from dcx.mcp.tools import TOOLS

    out = {}
    for tool in TOOLS:
        schema = tool.input_schema()
        required = set(schema.get("required", []))
        out[tool.name] = [(name, name in required) for name in schema["properties"]]
    return out


def _mcp_table() -> dict[str, list[tuple[str, bool]]]:
    text = (DOCS / "mcp.md").read_text()
    section = text[text.index("## Tools") :]
    rows = {}
    for line in section.splitlines():
        match = re.match(r"\| `([a-z_]+)` \| (.*?) \| ", line)
        if not match:
            continue
        cell = match.group(2)
        args = [] if cell.strip() == "—" else [a.strip() for a in cell.split(",")]
        rows[match.group(1)] = [(a.strip("*`"), a.startswith("**")) for a in args]
    return rows


def test_the_mcp_tool_table_is_the_servers() -> None:
    assert _mcp_table() == _tools()


def test_commands_md_names_every_tool() -> None:
    text = (DOCS / "commands.md").read_text()
    paragraph = text[text.index("## dcx mcp") :].split("\n\n")[1]
    named = set(re.findall(r"`([a-z]+)`", paragraph.split("and the resources")[0]))
    assert named == set(_tools())
    assert f"the {len(_tools())} tools the server" in (DOCS / "mcp.md").read_text()
