"""Commit and review act only on the acting agent's own chain, and replay only what moved its cursors here
(SPEC §16 v4).

- ``check_own_chain``: an assembly another agent stored is ``chain_of_other_agent``, naming that agent;
- ``check_replay``: a stored receipt of the chain is "replayed" only when this agent's cursors here are at
  the receipt's state (or moved on from it by that agent's later receipts); otherwise — a receipt pulled
  from another host, or another agent's — ``committed_elsewhere``, naming the receipt and its agent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dcx.core.errors import Refused
from dcx.core.workspace import Workspace
from dcx.names import same_actor
from dcx.state.cursors import agent_cursors
from dcx.state.keys import load_key
from dcx.state.refmap import RefMinter
from dcx.state.store import Store


def _refuse(code: str, message: str, hint: str | None = None) -> Refused:
    return Refused(f"commit refused ({code}): {message}", code=code, hint=hint)


def check_own_chain(asm: dict[str, Any], agent_id: str | None) -> None:
    """Commit and review act only on the acting agent's own chain (SPEC §16 v4)."""
    owner = asm.get("agent_id")
    if agent_id is None or not isinstance(owner, str) or not owner or same_actor(owner, agent_id):
        return
    decision_id = asm["decision_id"]
    raise _refuse(
        "chain_of_other_agent",
        f"this chain of decision {decision_id} (assembly {asm['assembly_ref']}) is agent {owner}'s, "
        f"not {agent_id}'s",
        hint=f"{owner} commits its own chain; to absorb the change as {agent_id}, "
        f"`dcx prepare --decision-id {decision_id}` as {agent_id} and run your own cycle",
    )


def _at_receipt_state(
    ws: Workspace, store: Store, receipt: dict[str, Any], cursors: dict[str, str]
) -> bool:
    """Whether these cursors are at the receipt's state, or moved on from it only by later receipts of
    the same agent (each later receipt's ``cursor_before_ref`` is an earlier one's ``cursor_after_ref``)."""
    from dcx.core.errors import DcxError

    try:
        key = load_key(ws, create=False)
    except DcxError:
        return False
    if receipt.get("key_id") != key.key_id:
        return False  # refs minted with another key are not comparable (SPEC §3.3)
    minter = RefMinter(ws, key, record=False)
    agent = receipt.get("agent_id")
    edges: dict[tuple[str, str], set[str]] = {}
    for stored in store.iter_packets("commit"):
        later = stored.packet
        if later.get("key_id") != key.key_id or not same_actor(later.get("agent_id"), agent):
            continue
        for row in later.get("sources", ()):
            if row.get("cursor_before_ref") != row.get("cursor_after_ref"):
                edges.setdefault((row["source_id"], row["cursor_before_ref"]), set()).add(
                    row["cursor_after_ref"]
                )
    for row in receipt["sources"]:
        sid = row["source_id"]
        if sid not in cursors:
            return False
        want, frontier, seen = (
            minter.cursor_ref(sid, cursors[sid]),
            [row["cursor_after_ref"]],
            set(),
        )
        while want not in frontier:
            frontier = [n for r in frontier if r not in seen for n in edges.get((sid, r), ())]
            seen.update(frontier)
            if not frontier:
                return False
    return True


def check_replay(
    ws: Workspace,
    store: Store,
    receipt: dict[str, Any],
    agent_id: str | None,
    agents: Sequence[str],
) -> None:
    """ "replayed" only when this agent's cursors are at the receipt's state (SPEC §16 v4): a receipt
    another host (or agent) wrote, which never moved the cursors here, is ``committed_elsewhere``."""
    if agent_id is None:
        return
    owner = receipt.get("agent_id")
    if isinstance(owner, str) and owner and not same_actor(owner, agent_id):
        at_state = False
    else:
        at_state = _at_receipt_state(ws, store, receipt, agent_cursors(ws, agent_id, agents))
    if not at_state:
        who = f"agent {owner}" if isinstance(owner, str) and owner else "an agent"
        raise _refuse(
            "committed_elsewhere",
            f"receipt {receipt['receipt_ref']} ({who}) already committed this chain, but {agent_id}'s "
            "cursors here are not at its state: it was committed on another host",
            hint=f"nothing to replay here; to absorb the change on this host, "
            f"`dcx prepare --decision-id {receipt['decision_id']}` and run a new cycle",
        )
