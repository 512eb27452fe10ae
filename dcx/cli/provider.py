from __future__ import annotations

from dcx.cli._declare import Argument, Group, Option
from dcx.cli._globals import Globals
from dcx.cli._options import FORMAT, WAIT
from dcx.core.result import Result

group = Group(
    help="Choose the advisory recall provider ([context_provider] in profile.toml).\n\n"
    "Example: dcx provider set bm25 --max-results 4"
)


def render(page, result: Result) -> None:
    data = result.data
    line = f"recall provider: {data['provider']}"
    if data["config_keys_set"]:
        line += f" · config set: {', '.join(data['config_keys_set'])}"
    if data["config_keys_dropped"]:
        line += f" · config dropped: {', '.join(data['config_keys_dropped'])}"
    page.line(line)


@group.command(
    "set",
    render=render,
    provider=Argument(metavar="PROVIDER", help="bm25, openviking, extension or none."),
    max_results=Option("--max-results", type=int, metavar="N", help="Results per recall, 1..8."),
    timeout=Option("--timeout", type=float, metavar="SECONDS", help="Recall deadline, 1..120 s."),
    config=Option(
        "--config",
        multiple=True,
        metavar="KEY=VALUE",
        help="A provider config key (repeatable); VALUE is TOML or text.",
    ),
    wait=WAIT,
    fmt=FORMAT,
)
def set_(
    g: Globals,
    *,
    provider: str,
    max_results: int | None,
    timeout: float | None,
    config: list[str] | None,
    wait: float,
    fmt: str,
) -> Result:
    """Set the recall provider and its limits; checked before it is written.

    Changing the provider drops the previous provider's config table (its
    keys mean nothing to another provider); the output names the keys dropped.

    Example: dcx provider set openviking --config url=http://127.0.0.1:1933 --timeout 5
    """
    from dcx.ops.config import provider_set

    return provider_set(
        ws=g.ws(),
        provider=provider,
        max_results=max_results,
        timeout=timeout,
        config=config or [],
        wait=wait,
    )
