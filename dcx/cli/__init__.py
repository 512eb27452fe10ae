"""CLI assembly and ``main()``.

``dcx --version`` and ``dcx status --format json`` are answered before typer
is imported (SPEC §3.6 start-up budget); everything else goes through the
typer app, whose commands live one per module.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    from dcx.cli import _fast

    code = _fast.try_fast(args)
    if code is not None:
        sys.exit(code)
    from dcx.cli.app import build_app

    app = build_app()
    app(args=args, prog_name="dcx")
