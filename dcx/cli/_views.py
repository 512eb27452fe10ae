"""Packet views for people.

Kind-specific views live in ``dcx/cli/views/`` (one module per family) and
register in ``VIEWS`` with ``@view(kind)``; they are imported on first use so
`dcx --help` stays fast. A kind without a view gets the generic one: a header,
the scalar fields, one table per record list.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dcx.cli._layout import Page

View = Callable[["Page", "dict[str, Any]"], None]
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


def render_header(page: Page, kind: str, packet: dict[str, Any], ref_field: str) -> None:
    from dcx.cli._layout import styled

    page.line(
        styled("[bold]{}[/]  {}", packet.get("schema_version", kind), packet.get(ref_field, ""))
    )
    ident = f"goal {packet.get('goal_id', '-')}"
    if packet.get("decision_id"):
        ident += f" · decision {packet['decision_id']}"
    ident += f" · key {packet.get('key_id', '-')}"
    page.line(ident, style="dim")


def render_generic(page: Page, kind: str, packet: dict[str, Any]) -> None:
    from dcx.packets import KINDS

    ref_field = KINDS[kind].ref_field if kind in KINDS else ""
    render_header(page, kind, packet, ref_field)
    scalars: list[tuple[str, str]] = []
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
            scalars.append((key, _cell(value)))
    page.grid(scalars, styles=("bold",), gap=2)
    for key, rows in nested:
        columns: list[str] = []
        for row in rows:
            for column in row:
                if column not in columns:
                    columns.append(column)
        page.blank()
        page.line(key, style="bold")
        page.table(columns, [[_cell(row.get(c)) for c in columns] for row in rows])


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


def render_packet(page: Page, kind: str, packet: dict[str, Any]) -> None:
    load_views().get(kind, lambda c, p: render_generic(c, kind, p))(page, packet)
