"""View of the public retrieval receipt: results with scores, never content."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dcx.cli._views import view
from dcx.cli.views.common import banner, facts, header, never_captured, short, table, yes

if TYPE_CHECKING:
    from dcx.cli._layout import Page

FLAGS = {
    "raw_content_captured": "content",
    "raw_provider_payload_captured": "provider payload",
    "credentials_captured": "credentials",
}


def score(value: Any) -> str:
    return "-" if value is None else f"{value:.4g}"


@view("retrieval")
def retrieval(page: Page, packet: dict[str, Any]) -> None:
    header(page, "Advisory recall receipt", packet, "retrieval_ref")
    verdict = f"{packet['provider']} · {packet['status']}"
    if packet.get("reason_code"):
        verdict += f" ({packet['reason_code']}; failed open)"
    verdict += f" · {packet['result_count']} of at most {packet['requested_limit']} result(s)"
    verdict += f" · for “{packet['query_summary']}”"
    banner(page, verdict, "" if packet["ok"] else "yellow")
    telemetry = packet["telemetry"]
    facts(
        page,
        [
            ("namespace", packet["namespace"]),
            ("provider version", packet.get("provider_version") or "-"),
            (
                "performed",
                f"search {yes(packet['search_performed'])} · read {yes(packet['read_performed'])} · "
                f"external writes {yes(packet['external_writes_performed'])}",
            ),
            (
                "telemetry",
                f"{telemetry['latency_ms']} ms · cap applied {yes(telemetry['result_cap_applied'])} · "
                f"{telemetry['items_dropped']} item(s) dropped by the adapter",
            ),
        ],
    )
    rows = [
        (r["rank"], score(r["score"]), r["summary"], short(r["provider_ref"]))
        for r in sorted(packet["results"], key=lambda r: r["rank"])
    ]
    table(
        page,
        "Results (scores are provider-native: never compared across providers)",
        ("rank", "score", "summary", "provider ref"),
        rows,
    )
    never_captured(
        page,
        {**packet, "query_captured": False, "scope_captured": False},
        {"query_captured": "query", "scope_captured": "scope", **FLAGS},
    )
