from __future__ import annotations

import typer

from dcx.cli._boundary import run
from dcx.cli._options import FormatOpt, OutputFormat
from dcx.cli._render import styled
from dcx.core.result import Result


def command(ctx: typer.Context, fmt: FormatOpt = OutputFormat.text) -> None:
    """Scan every public file for this workspace's private values; exit 1 on any.

    Looks for locators, the goal root's path, cursor values, the key, the
    private values behind opaque refs, provider config values, runs of 12 or
    more words of source text, and the public-safety patterns (paths, URLs,
    e-mail addresses, credentials). Findings name the file and field, never
    the value.

    Example: dcx audit
    """

    def call(g) -> Result:
        from dcx.ops.audit import audit

        return audit(ws=g.ws())

    run(ctx, fmt, call, render)


def render(console, result: Result) -> None:
    data = result.data
    for finding in data["findings"]:
        console.print(styled("[red]leak[/] {}", finding["file"]))
        console.print(
            f"    {finding['field']}: {finding['problem']}", markup=False, highlight=False
        )
    files = f"{data['files_scanned']} public file(s)"
    if not data["findings"]:
        console.print(styled("[green]clean[/]  {}: nothing found", files))
        console.print(
            f"       checked for {data['private_values_known']} private value(s), runs of source text, "
            "paths, URLs, e-mails and credentials",
            markup=False,
            highlight=False,
        )
    else:
        console.print(
            f"{len(data['findings'])} finding(s) in {files} (values are never printed: open the file "
            "at the field named)",
            markup=False,
            highlight=False,
        )
