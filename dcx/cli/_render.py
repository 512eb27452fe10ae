"""The only printer: rich for people, JSON for machines (SPEC §3.6)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dcx.errors import DcxError
from dcx.result import Result

if TYPE_CHECKING:
    from rich.console import Console

TextRenderer = Callable[["Console", Result], None]


def dumps(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def console(*, stderr: bool = False, no_color: bool = False) -> Console:
    from rich.console import Console

    return Console(
        stderr=stderr,
        no_color=no_color or bool(os.environ.get("NO_COLOR")),
        highlight=False,
        soft_wrap=False,
    )


def emit(result: Result, fmt: str, render: TextRenderer | None, *, no_color: bool = False) -> None:
    if fmt == "json":
        if result.raw_json is not None:
            sys.stdout.buffer.write(result.raw_json)
            sys.stdout.flush()
        else:
            sys.stdout.write(dumps(result.envelope()))
        return
    out = console(no_color=no_color)
    if render is not None:
        render(out, result)
    else:
        out.print_json(json.dumps(result.data))
    if result.warnings:
        err = console(stderr=True, no_color=no_color)
        for warning in result.warnings:
            err.print(f"warning: {warning}", markup=False)


def emit_error(exc: DcxError, fmt: str) -> None:
    if fmt == "json":
        sys.stdout.write(dumps(exc.envelope()))
        return
    lines = [f"error: {exc.message}"]
    if exc.hint:
        lines.append(f"hint: {exc.hint}")
    sys.stderr.write("\n".join(lines) + "\n")
