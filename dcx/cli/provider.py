from __future__ import annotations

from typing import Annotated

import typer

from dcx.cli._boundary import run
from dcx.cli._options import FormatOpt, OutputFormat, WaitOpt
from dcx.core.result import Result

app = typer.Typer(
    help="Choose the advisory recall provider ([context_provider] in profile.toml).\n\n"
    "Example: dcx provider set bm25 --max-results 4",
    no_args_is_help=True,
)


@app.command("set")
def set_(
    ctx: typer.Context,
    provider: Annotated[
        str, typer.Argument(metavar="PROVIDER", help="bm25, openviking, extension or none.")
    ],
    max_results: Annotated[
        int | None, typer.Option("--max-results", metavar="N", help="Results per recall, 1..8.")
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option("--timeout", metavar="SECONDS", help="Recall deadline, 1..120 s."),
    ] = None,
    config: Annotated[
        list[str] | None,
        typer.Option(
            "--config",
            metavar="KEY=VALUE",
            help="A provider config key (repeatable); VALUE is TOML or text.",
        ),
    ] = None,
    wait: WaitOpt = 5.0,
    fmt: FormatOpt = OutputFormat.text,
) -> None:
    """Set the recall provider and its limits; checked before it is written.

    Changing the provider drops the previous provider's config table (its
    keys mean nothing to another provider); the output names the keys dropped.

    Example: dcx provider set openviking --config url=http://127.0.0.1:1933 --timeout 5
    """

    def call(g) -> Result:
        from dcx.ops.config import provider_set

        return provider_set(
            ws=g.ws(),
            provider=provider,
            max_results=max_results,
            timeout=timeout,
            config=config or [],
            wait=wait,
        )

    def render(console, result: Result) -> None:
        data = result.data
        line = f"recall provider: {data['provider']}"
        if data["config_keys_set"]:
            line += f" · config set: {', '.join(data['config_keys_set'])}"
        if data["config_keys_dropped"]:
            line += f" · config dropped: {', '.join(data['config_keys_dropped'])}"
        console.print(line, markup=False)

    run(ctx, fmt, call, render)
