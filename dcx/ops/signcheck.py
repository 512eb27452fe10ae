"""`dcx verify`'s signature checks: every statement and signer file, then every packet and event (SPEC §18).

Problems (exit 1), always: a signer file that is not a public key of this
goal's agent, two agents claiming one key, a revocation that does not verify,
a statement line that is not a statement (truncated, edited), one of another
goal, one from the future, one naming a packet or event that does not
exist, one whose signature fails (``bad_signature``), whose key no signer
file of its agent holds (``unknown_signer``) or whose key was revoked for it
(``revoked_signer``), and a packet or event signed only by another agent
than its own (``signer_mismatch``). ``unsigned`` packets and events are a
warning — older goals still verify — and a problem with
``--require-signatures`` or ``require_signatures = true`` in workspace.toml.
Nothing is rewritten; only the private cache of verified statements grows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from dcx.core.canonical import REF_RE
from dcx.core.workspace import Workspace
from dcx.packets import BY_PREFIX
from dcx.state import events
from dcx.state.signatures import FAILURES, SIGNED, UNSIGNED, Book
from dcx.state.store import Store


class Checker(Protocol):
    """What the signature check needs of ``dcx verify``'s checker (``dcx.ops.verify.Checker``),
    named here so that verify imports this module and not the other way round."""

    ws: Workspace
    store: Store
    packets: dict[str, dict[str, Any]]
    redacted: dict[str, dict[str, Any]]
    redacted_events: set[str]

    def problem(
        self, path: Path, message: str, *, ref: str | None = None, field: str | None = None
    ) -> None: ...

    def target(self, ref: str) -> tuple[dict[str, Any] | None, str | None]: ...


_WHY = {
    "bad_signature": "its signature does not verify over the statement's canonical bytes",
    "unknown_signer": "no signer file of its agent holds its key",
    "revoked_signer": "its key was revoked before it (or for compromise)",
}


def _is_packet_ref(ref: str) -> bool:
    match = REF_RE.fullmatch(ref)
    return bool(match and match.group("prefix") in BY_PREFIX)


def check(checker: Checker, *, required: bool) -> dict[str, Any]:
    """Add every signature problem to ``checker``; return the ``signatures`` block of verify's data."""
    from dcx.core.clock import clock_from_env

    ws: Workspace = checker.ws
    book = Book(ws, check=True, now=clock_from_env(None).now())
    for path, code, message in book.tree.problems:
        checker.problem(path, f"{code}: {message}")
    logged = {
        e["event_id"]: e
        for e in events.read_log(ws.events, ws.rel(ws.events))
        if isinstance(e.get("event_id"), str)
    }
    _statement_lines(checker, book, logged)
    items: list[dict[str, Any]] = []
    for ref, packet in sorted(checker.packets.items()):
        items.append(_item(book, "packet", ref, packet.get("agent_id")))
    for ref in sorted(checker.redacted):
        items.append(_item(book, "packet", ref, None, redacted=True))
    for ident, event in sorted(logged.items()):
        items.append(_item(book, "event", ident, event.get("agent_id")))
    for ident in sorted(checker.redacted_events - logged.keys()):
        items.append(_item(book, "event", ident, None, redacted=True))
    unsigned = 0
    for item in items:
        verdict = item["verdict"]
        if verdict == SIGNED:
            continue
        unsigned += verdict == UNSIGNED
        if verdict == UNSIGNED and not required:
            continue
        path = (
            ws.events
            if item["kind"] == "event"
            else checker.store.path_for(checker.store.kind_of(item["ref"]), item["ref"])
        )
        checker.problem(path, _item_message(item), ref=item["ref"], field="signature")
    book.cache.save()
    counts = {
        "signed": sum(1 for i in items if i["verdict"] == SIGNED),
        "unsigned": unsigned,
        "failed": sum(1 for i in items if i["verdict"] in FAILURES),
    }
    return {
        **counts,
        "required": required,
        "statements_checked": len(book.lines),
        "signers": len(book.tree.signers),
        "items": items,
    }


def _item(
    book: Book, kind: str, ref: str, agent_id: Any, *, redacted: bool = False
) -> dict[str, Any]:
    agent = agent_id if isinstance(agent_id, str) else None
    return {
        "kind": kind,
        "ref": ref,
        "agent_id": agent,
        **book.verdict(ref, agent, redacted=redacted),
    }


def _item_message(item: dict[str, Any]) -> str:
    verdict = item["verdict"]
    if verdict == UNSIGNED:
        return "unsigned: no signed statement names it (signatures are required)"
    if verdict == "signer_mismatch":
        return (
            f"signer_mismatch: it says agent {item['agent_id']}, but only {item['signer_agent_id']} "
            "signed a statement naming it"
        )
    return f"{verdict}: every statement naming it fails ({_WHY.get(verdict, verdict)})"


def _statement_lines(checker: Checker, book: Book, logged: dict[str, Any]) -> None:
    ws = checker.ws
    book.judge()
    for line in book.lines:
        where = f"line {line.number}"
        if line.problem is not None:
            code, message = line.problem
            checker.problem(ws.statements, f"{where}: {code}: {message}", field=where)
            continue
        st = line.statement or {}
        verdict = book.statement_verdict(line)
        if verdict != SIGNED:
            checker.problem(
                ws.statements,
                f"{where}: {verdict}: {st['command']} by {st['agent_id']} (key {st['key_id']}): "
                f"{_WHY.get(verdict, verdict)}",
                field=where,
            )
        for name in ("products", "materials"):
            for ref in st[name]:
                if _is_packet_ref(ref):
                    _, why = checker.target(ref)
                    missing = why is not None and why.endswith("does not exist")
                elif name == "products":
                    # an event it wrote (its own log); a material event may sit in a host log
                    missing = ref not in logged and ref not in checker.redacted_events
                else:
                    continue
                if missing:
                    checker.problem(
                        ws.statements,
                        f"{where}: statement_ref_missing: its {name} name {ref}, which does not exist",
                        ref=ref,
                        field=f"{where}.{name}",
                    )
