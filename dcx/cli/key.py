from __future__ import annotations

import sys

from dcx.cli._declare import Argument, Group, Option
from dcx.cli._globals import Globals
from dcx.cli._options import FORMAT
from dcx.core.result import Result

group = Group(
    help="Share one workspace key between the hosts of one goal.\n\nExample: dcx key export > goal.key"
)


def render_export(page, result: Result) -> None:
    sys.stdout.write(result.data["key"] + "\n")  # the bare key, for `> goal.key`


@group.command("export", render=render_export, fmt=FORMAT)
def export(g: Globals, *, fmt: str) -> Result:
    """Print the workspace key as 64 hex digits (keep it private).

    Example: dcx key export > goal.key
    """
    from dcx.state.keys import export_hex, load_key

    return Result("key export", {"key": export_hex(load_key(g.ws(), create=False))})


def render_import(page, result: Result) -> None:
    page.line(f"key {result.data['key_id']} installed")


@group.command(
    "import",
    render=render_import,
    source=Argument(help="A file holding the hex key, or - for stdin."),
    force=Option("--force", type=bool, help="Replace a different existing key."),
    fmt=FORMAT,
)
def import_(g: Globals, *, source: str, force: bool, fmt: str) -> Result:
    """Install a key exported from another host of the same goal.

    Example: dcx key import goal.key
    """
    from pathlib import Path

    from dcx.core.errors import InvalidInput
    from dcx.state.keys import import_hex

    ws = g.ws()
    try:
        data = sys.stdin.buffer.read() if source == "-" else Path(source).read_bytes()
    except OSError:
        raise InvalidInput("key import: cannot read the key file", field="FILE") from None
    key = import_hex(ws, data, force=force)
    return Result("key import", {"key_id": key.key_id})
