"""CLI assembly and ``main()``.

``dcx --version``, ``dcx status`` and the read-only commands are answered
before typer is imported (SPEC §3.6 start-up budget; ``dcx.cli._fast``);
everything else goes through the typer app, whose commands live one per module.

A fast answer is a short-lived process, so (issue 18) it runs without the
cyclic garbage collector (its passes over the imported modules cost more
than the command; reference counting still frees everything acyclic) and,
as the installed script, ends with ``os._exit`` once stdout and stderr are
flushed: the interpreter's teardown (a last collection, every module
cleared) changes nothing a caller can see. Anything the fast path does not
answer, and ``dcx scan``, run with the collector on and exit normally.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    import gc  # here, not at the top: the package's own `dcx.cli.gc` (the command) would shadow it

    args = list(sys.argv[1:] if argv is None else argv)
    from dcx.cli import _fast

    gc.disable()
    try:
        code = _fast.try_fast(args)
    finally:
        gc.enable()
    if code is not None:
        if argv is None:
            _exit_now(code)
        sys.exit(code)
    from dcx.cli.app import build_app

    app = build_app()
    app(args=args, prog_name="dcx")


def _exit_now(code: int) -> None:
    """Flush stdout and stderr and leave without the interpreter's teardown (see above)."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:  # a closed pipe or the like: let the normal exit report it as it would
        return
    import os

    os._exit(code)
