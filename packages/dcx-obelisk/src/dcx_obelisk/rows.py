"""From Obelisk search hits to advisory items: keep only visible turns of one session.

A hit is kept only when (fixtures/obelisk/README.md, "What a provider must keep"):
its ``session.id`` is exactly ``codex:<thread-id>``; the message and session
source are ``codex``; the session is not the one invoking the CLI
(``is_invoking``); ``content_type`` is ``text``; ``role`` is ``user`` or
``assistant``; ``is_meta`` is not true; ``visibility``, when present, is
``visible``. Anything malformed is dropped, never guessed at.

Items carry ``resource_ref`` ``obelisk:<session>:<message-uuid>``, a generic
summary (never the text or title: summaries are public), the text as
content, and a score from Obelisk's FTS5 rank, where lower is better: score =
-rank, so a higher score is better; a degraded ``like-scan`` hit (rank null)
has no score.
"""

from __future__ import annotations

import math
from typing import Any

RESOURCE_REF_MAX = 512
CONTENT_MAX = 16_000
SUMMARIES = {
    "user": "Codex user turn in the selected session",
    "assistant": "Codex assistant turn in the selected session",
}


def _keep(hit: Any, session_id: str) -> bool:
    if not isinstance(hit, dict):
        return False
    message, session = hit.get("message"), hit.get("session")
    if not isinstance(message, dict) or not isinstance(session, dict):
        return False
    return (
        session.get("id") == session_id
        and session.get("source", "codex") == "codex"
        and message.get("source") == "codex"
        and session.get("is_invoking") is not True
        and message.get("content_type") == "text"
        and message.get("role") in SUMMARIES
        and message.get("is_meta") is not True
        and message.get("visibility", "visible") == "visible"
        and isinstance(message.get("uuid"), str)
        and bool(message["uuid"])
        and isinstance(message.get("text"), str)
        and bool(message["text"].strip())
    )


def _score(rank: Any) -> float | None:
    if isinstance(rank, bool) or not isinstance(rank, int | float) or not math.isfinite(rank):
        return None
    return float(-rank)


def to_items(
    hits: list[Any], session_id: str, max_results: int
) -> tuple[list[dict[str, Any]], int]:
    """(items best first, count of hits dropped)."""
    kept: list[tuple[float, int, dict[str, Any]]] = []
    seen: set[str] = set()
    for order, hit in enumerate(hits):
        if not _keep(hit, session_id):
            continue
        message = hit["message"]
        ref = f"obelisk:{session_id}:{message['uuid']}"
        if ref in seen or len(ref) > RESOURCE_REF_MAX or len(message["text"]) > CONTENT_MAX:
            continue
        seen.add(ref)
        score = _score(hit.get("rank"))
        item = {
            "resource_ref": ref,
            "summary": SUMMARIES[message["role"]],
            "content": message["text"],
            "score": score,
        }
        # best first: higher score, unscored last, Obelisk's own order breaks ties
        kept.append((-score if score is not None else math.inf, order, item))
    kept.sort(key=lambda entry: (entry[0], entry[1]))
    items = [item for _, _, item in kept[:max_results]]
    return items, len(hits) - len(items)
