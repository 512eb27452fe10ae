"""``dcx key create|signers|revoke``: the agents' signing keys (SPEC §18).

(`dcx key export|import` share the workspace key, ``dcx.state.keys``; these
are the per-agent, per-host Ed25519 keys of ``dcx.state.signers``.)
"""

from __future__ import annotations

from typing import Any

from dcx.core.clock import Clock
from dcx.core.errors import InvalidInput, Refused
from dcx.core.public import REASON_MAX, check_token
from dcx.core.result import Result
from dcx.core.workspace import Workspace
from dcx.ops._common import require_agent
from dcx.state import signers


def create(*, ws: Workspace, agent_id: str | None, clock: Clock, wait: float) -> Result:
    """This host's signing key of the acting agent: made when missing, its public file written."""
    agent = require_agent(ws, agent_id)
    signer, wrote = signers.ensure_signer(ws, agent, now=clock.now(), wait=wait)
    return Result(
        "key create",
        {
            "agent_id": agent,
            "key_id": signer.key_id,
            "created": wrote,
            "file": ws.rel(signers.public_path(ws, agent, signer.key_id)),
        },
    )


def list_signers(*, ws: Workspace) -> Result:
    tree = signers.read_tree(ws)
    mine = signers.local_agents(ws)
    rows: list[dict[str, Any]] = []
    for key_id, signer in sorted(tree.signers.items(), key=lambda kv: (kv[1].agent_id, kv[0])):
        row: dict[str, Any] = {
            "agent_id": signer.agent_id,
            "key_id": key_id,
            "created_at": signer.created_at,
            "file": ws.rel(signer.path),
            "status": "active",
            "this_host": key_id in mine,
        }
        revoked = tree.revoked(key_id)
        if revoked is not None:
            row["status"] = "revoked"
            row["revocation"] = {
                "reason_code": revoked.reason_code,
                "revoked_at": revoked.revoked_at,
                "revoked_by_agent_id": revoked.by_agent_id,
                "revoked_by_key_id": revoked.by_key_id,
            }
        rows.append(row)
    problems = [
        {"file": ws.rel(path), "code": code, "problem": message}
        for path, code, message in tree.problems
    ]
    return Result(
        "key signers",
        {"signers": rows, "problems": problems},
        status="partial" if problems else "ok",
        warnings=[f"{p['file']}: {p['code']}: {p['problem']}" for p in problems],
    )


def _target(tree: signers.Tree, text: str) -> signers.Signer:
    from dcx.state.store import unique_prefix

    if text in tree.signers:
        return tree.signers[text]
    try:
        return tree.signers[
            unique_prefix(text, tree.signers, "signer key", hint="`dcx key signers` lists them")
        ]
    except InvalidInput as exc:
        raise InvalidInput(exc.message, code=exc.code, field="KEY_ID", hint=exc.hint) from None


def revoke(
    *,
    ws: Workspace,
    key_id: str,
    reason_code: str,
    agent_id: str | None,
    clock: Clock,
    wait: float,
) -> Result:
    """Record a signed revocation of ``key_id``: signed by that key itself (on the host holding it)
    or by the acting agent's key, another signer of the goal."""
    check_token(reason_code, field="--reason", limit=REASON_MAX)
    now = clock.now()
    target = _target(signers.read_tree(ws), key_id)
    mine = signers.local_signer(ws, target.agent_id)
    if mine is not None and mine.key_id == target.key_id:
        by = mine  # the key revokes itself
    else:
        by, _ = signers.ensure_signer(ws, require_agent(ws, agent_id), now=now, wait=wait)
    tree = signers.read_tree(ws)  # with the signer file ensure_signer may just have written
    if by.key_id not in tree.signers:
        raise Refused(
            f"this host's key {by.key_id} of {by.agent_id} has no valid signer file",
            code="signer_invalid",
            hint="run `dcx verify` to see what is wrong with signers/",
        )
    own = tree.revoked(by.key_id)
    if own is not None and by.key_id != target.key_id and own.withdraws(now):
        raise Refused(
            f"this host's key {by.key_id} of {by.agent_id} is revoked: it cannot revoke another",
            code="revoked_signer",
            hint="`dcx key create` makes a new key once the revoked one is retired",
        )
    doc, written = signers.revoke(ws, by, target, reason_code, now)
    retired = False
    if mine is not None and mine.key_id == target.key_id:
        signers.retire(ws, target.agent_id)  # the next signing command makes a new key
        retired = True
    return Result(
        "key revoke",
        {
            "revocation": doc,
            "written": written,
            "file": ws.rel(signers.revocation_path(ws, target.agent_id, target.key_id)),
            "retired_local_key": retired,
        },
    )
