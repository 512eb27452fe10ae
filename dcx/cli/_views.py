"""Packet views for people.

Kind-specific views live in ``dcx/cli/views/`` (one module per family) and
register in ``VIEWS`` with ``@view(kind)``; they are imported on first use so
`dcx --help` stays fast. A kind without a view gets the generic one: a header,
the scalar fields, one table per record list.
"""

from __future__ import annotations

from collections.abc import Callable

TYPE_CHECKING = False  # typing stays unimported at run time (~16 M instructions; issue 18)
if TYPE_CHECKING:
    from typing import Any

if TYPE_CHECKING:
    from rich.console import Console

View = Callable[["Console", "dict[str, Any]"], None]
VIEWS: dict[str, View] = {}
FAMILIES = ("sources", "recall", "decision", "cycle")
ENVELOPE = ("schema_version", "goal_id", "key_id", "decision_id")


def _cell(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return "-"
    if isinstance(value, list):
        return (
            ", ".join(_cell(v) for v in value)
            if all(not isinstance(v, dict | list) for v in value)
            else f"[{len(value)}]"
        )
    if isinstance(value, dict):
        return ", ".join(f"{k}={_cell(v)}" for k, v in value.items())
    return str(value)


def render_header(console: Console, kind: str, packet: dict[str, Any], ref_field: str) -> None:
    from dcx.cli._render import styled

    console.print(
        styled("[bold]{}[/]  {}", packet.get("schema_version", kind), packet.get(ref_field, ""))
    )
    ident = f"goal {packet.get('goal_id', '-')}"
    if packet.get("decision_id"):
        ident += f" · decision {packet['decision_id']}"
    ident += f" · key {packet.get('key_id', '-')}"
    console.print(ident, style="dim", markup=False)


def render_generic(console: Console, kind: str, packet: dict[str, Any]) -> None:
    from dcx.cli._plain import NeedRich, plain_mode

    if plain_mode.get():
        raise NeedRich  # titled tables: rich's layout
    from rich.table import Table

    from dcx.packets import KINDS

    ref_field = KINDS[kind].ref_field if kind in KINDS else ""
    render_header(console, kind, packet, ref_field)
    scalars = Table.grid(padding=(0, 2))
    scalars.add_column(style="bold")
    scalars.add_column()
    nested: list[tuple[str, Any]] = []
    for key in sorted(packet):
        if key in ENVELOPE or key == ref_field:
            continue
        value = packet[key]
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            nested.append((key, value))
        elif isinstance(value, dict) and any(isinstance(v, dict | list) for v in value.values()):
            nested.append((key, [value]))
        else:
            scalars.add_row(key, _cell(value))
    console.print(scalars)
    for key, rows in nested:
        columns: list[str] = []
        for row in rows:
            for column in row:
                if column not in columns:
                    columns.append(column)
        table = Table(title=key, title_justify="left", show_edge=False, pad_edge=False)
        for column in columns:
            table.add_column(column, overflow="fold")
        for row in rows:
            table.add_row(*(_cell(row.get(c)) for c in columns))
        console.print(table)


def view(kind: str) -> Callable[[View], View]:
    def register(func: View) -> View:
        VIEWS[kind] = func
        return func

    return register


def load_views() -> dict[str, View]:
    from importlib import import_module

    for family in FAMILIES:
        import_module(f"dcx.cli.views.{family}")
    return VIEWS


def render_packet(console: Console, kind: str, packet: dict[str, Any]) -> None:
    load_views().get(kind, lambda c, p: render_generic(c, kind, p))(console, packet)
