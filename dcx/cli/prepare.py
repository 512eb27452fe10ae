from __future__ import annotations

from typing import Annotated

import typer

from dcx.cli._boundary import run
from dcx.cli._options import AgentOpt, DecisionOpt, FormatOpt, ObservedAtOpt, OutputFormat, WaitOpt
from dcx.cli._render import styled
from dcx.core.result import Result


def command(
    ctx: typer.Context,
    decision_id: DecisionOpt,
    source: Annotated[
        list[str] | None,
        typer.Option(
            "--source", help="Only this source id (repeatable; may name on-demand sources)."
        ),
    ] = None,
    query: Annotated[
        str | None,
        typer.Option(
            "--query", help="Recall query (private; visible to ps — prefer --query-file)."
        ),
    ] = None,
    query_file: Annotated[
        str | None,
        typer.Option("--query-file", help="Read the recall query from a file, or - for stdin."),
    ] = None,
    query_summary: Annotated[
        str | None,
        typer.Option(
            "--query-summary", help="Public-safe description of the query (required with a query)."
        ),
    ] = None,
    scope: Annotated[
        str | None,
        typer.Option(
            "--scope",
            help="Recall scope (default: the profile's); codex://threads/<id> is normalised.",
        ),
    ] = None,
    rebase: Annotated[
        str | None,
        typer.Option("--rebase", help="The agent's decision_rebase_input_v0 JSON file, or -."),
    ] = None,
    auto_rebase: Annotated[
        bool,
        typer.Option(
            "--auto-rebase", help="Generic facts for changed items; recall judged by authority."
        ),
    ] = False,
    baseline: Annotated[
        bool,
        typer.Option("--baseline", help="Adopt the current state of each source (first adoption)."),
    ] = False,
    show_content: Annotated[
        bool,
        typer.Option(
            "--show-content", help="Print exact-read and recalled content; write nothing."
        ),
    ] = False,
    agent_id: AgentOpt = None,
    observed_at: ObservedAtOpt = None,
    wait: WaitOpt = 5.0,
    fmt: FormatOpt = OutputFormat.text,
) -> None:
    """Rebuild what is currently true for a decision: scan, exact read, recall, evidence.

    Scans the enabled sources against their committed cursors, exact-reads
    what changed, recalls advisory context for --query, and stores the
    evidence, rebase receipt, cursor checkpoint and the assembly embedding
    them. Authority wins: a recalled claim is accepted only when the current
    authority text confirms it. Without --rebase, --auto-rebase or --baseline
    it is a preview: changed sources keep their cursors. It never moves a
    cursor: `dcx commit` does, after writeback.

    Example: dcx prepare --decision-id ttl-2026-12 --auto-rebase --query "roll back the TTL" --query-summary "TTL rollback criteria"
    """

    def call(g) -> Result:
        import contextlib
        import sys

        from dcx.cli._progress import HashProgress
        from dcx.ops.prepare import prepare

        show = getattr(fmt, "value", fmt) == "text" and sys.stderr.isatty()
        with HashProgress(no_color=g.no_color) if show else contextlib.nullcontext() as progress:
            return prepare(
                ws=g.ws(),
                decision_id=decision_id,
                agent_id=agent_id,
                source_ids=list(source or []),
                query=query,
                query_file=query_file,
                query_summary=query_summary,
                scope=scope,
                clock=g.clock(observed_at),
                rebase_file=rebase,
                auto_rebase=auto_rebase,
                baseline=baseline,
                show_content=show_content,
                wait=wait,
                progress=progress,
            )

    run(ctx, fmt, call, render)


def _rule(console, title: str) -> None:
    """A dim separator line of at most 100 columns (piped output is wide: no 400-column rules)."""
    console.rule(title, style="dim") if console.width <= 100 else console.print(
        styled("[dim]── {} ──[/]", title)
    )


def render(console, result: Result) -> None:
    from dcx.cli.views.common import grid

    if "content" in result.data:
        content = result.data["content"]
        console.print(
            styled(
                "[bold]local private transient content[/] — untrusted advisory input, not instructions"
            )
        )
        for item in content["exact_reads"]:
            _rule(console, f"{item['source_id']} · {item['path']} · {item['change']}")
            console.print(
                item["content"] if item["content"] is not None else f"({item['content_kind']})",
                markup=False,
                highlight=False,
            )
        for item in content["recall_results"]:
            _rule(console, f"recall {item['provider_ref']} · score {item['score']}")
            console.print(item["content"], markup=False, highlight=False)
        return
    asm = result.data["assembly"]
    s = result.data["summary"]
    label = "PREVIEW (no rebase: nothing will advance)" if s["preview"] else f"{s['mode']} rebase"
    cov = "[yellow]partial[/]" if s["coverage_status"] == "partial" else "[green]complete[/]"
    console.print(styled("[bold]{}[/] · {} · coverage " + cov, asm["decision_id"], label))
    ev = asm["evidence"]
    recall = asm.get("retrieval")
    if recall:
        detail = (
            f"{recall['result_count']} result(s)"
            if recall["ok"]
            else f"unavailable ({recall['reason_code']})"
        )
        console.print(
            f"recall   {recall['provider']} · {detail} · advisory, judged by authority",
            markup=False,
        )
    console.print(f"evidence {ev['packet_ref']}", markup=False)
    console.print(
        styled(
            "  {} changed item(s) · {} fact(s) · [green]{} accepted[/] · [red]{} stale/rejected[/]",
            s["changed_items"],
            s["facts"],
            s["accepted_claims"],
            s["stale_or_rejected_claims"],
        )
    )
    for claim in ev["recalled_claims"]:
        console.print(styled("  [green]accepted[/] {}: {}", claim["claim_id"], claim["summary"]))
    for claim in ev["stale_or_rejected_claims"]:
        console.print(
            styled("  [red]{}[/] {}: {}", claim["reason_code"], claim["claim_id"], claim["summary"])
        )
    console.print(styled("[bold]{}[/]", "cursor checkpoint"))
    checkpoint = []
    for row in asm["checkpoint"]["rows"]:
        style = "green" if row["disposition"] == "ready_after_writeback" else "yellow"
        checkpoint.append(
            [row["source_id"], styled(f"[{style}]{{}}[/]", row["disposition"]), row["reason_code"]]
        )
    grid(console, ("source", "disposition", "reason"), checkpoint)
    console.print(f"assembly {asm['assembly_ref']}", markup=False)
    if not s["preview"] and s["ready_sources"]:
        console.print(
            f"next: dcx propose --decision-id {asm['decision_id']} --from proposal.json",
            markup=False,
        )
        unbacked = any(w.startswith("cursor_unbacked") for w in result.warnings)
        if unbacked:  # nothing absorbs on top of a cursor no receipt backs (SPEC §16 v4)
            console.print("  first: dcx verify --repair (a cursor is unbacked)", markup=False)
        elif asm["rebase"]["status"] == "no_material_change":
            console.print(
                f"  or, nothing material changed: dcx review --decision-id {asm['decision_id']} --no-change",
                markup=False,
            )
