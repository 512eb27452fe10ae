from __future__ import annotations

from dcx.cli._declare import declare
from dcx.cli._globals import Globals
from dcx.cli._options import FORMAT
from dcx.cli._render import styled
from dcx.core.result import Result


def render(page, result: Result) -> None:
    data = result.data
    for finding in data["findings"]:
        page.line(styled("[red]leak[/] {}", finding["file"]))
        page.line(f"    {finding['field']}: {finding['problem']}")
    files = f"{data['files_scanned']} public file(s)"
    if not data["findings"]:
        page.line(styled("[green]clean[/]  {}: nothing found", files))
        page.line(
            f"       checked for {data['private_values_known']} private value(s), runs of source text, "
            "paths, URLs, e-mails and credentials"
        )
    else:
        page.line(
            f"{len(data['findings'])} finding(s) in {files} (values are never printed: open the file "
            "at the field named)"
        )


@declare(
    render=render,
    fmt=FORMAT,
)
def command(g: Globals, *, fmt: str) -> Result:
    """Scan every public file for this workspace's private values; exit 1 on any.

    Looks for locators, the goal root's path, cursor values, the key, the
    private values behind opaque refs, provider config values, runs of 12 or
    more words of source text, and the public-safety patterns (paths, URLs,
    e-mail addresses, credentials). Findings name the file and field, never
    the value.

    Example: dcx audit
    """
    from dcx.ops.audit import audit

    return audit(ws=g.ws())
