"""Signed statements: one per writing command, in ``statements.jsonl`` (SPEC §18).

in-toto's link idea, made small: a command states what it read (materials:
packet refs and event ids) and what it wrote (products), signs that once
with the acting agent's key on this host, and appends one line — one
signature per command, not per packet.

One mechanism for every writing command, CLI and MCP alike: the op is
wrapped in ``@signed("<command>")``, which opens a recorder for the call; the
writers register into it as they go — ``Store.put_built`` a product,
``Store.get`` a material, ``events.append_event`` the event it appended (or
read), ``events.find_event`` the event it read, the agent resolvers the
acting agent — and when the op returns, the recorder is closed once: the
statement is built, signed and appended under the log's lock. A nested op
(review runs the commit) joins the outer command's statement. A command that
wrote nothing (a replay, a dry run, a refusal before any write) states
nothing. A statement that cannot be written (a busy lock, a torn log) is a
warning on the command's result: its work is done, its products stay
unsigned, and `dcx verify` says so.
"""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from dcx.core.errors import DcxError, Refused
from dcx.core.fsutil import locked_append, set_aside_torn_tail
from dcx.core.workspace import Workspace
from dcx.packets.signatures import STATEMENT_SCHEMA

if TYPE_CHECKING:
    from dcx.core.clock import Clock
    from dcx.core.result import Result

SCHEMA = STATEMENT_SCHEMA
COMMANDS = (
    "prepare",
    "propose",
    "outcome",
    "writeback",
    "commit",
    "gate",
    "review",
    "feedback",
    "abandon",
    "redact",
    # the two goal-level writers beyond SPEC §18's list: scan receipts and the source manifest
    "scan",
    "sources",
)


class Recorder:
    """What one command read and wrote, and as whom."""

    __slots__ = ("agent_id", "command", "materials", "products")

    def __init__(self, command: str) -> None:
        self.command = command
        self.agent_id: str | None = None
        self.materials: set[str] = set()
        self.products: set[str] = set()


_current: ContextVar[Recorder | None] = ContextVar("dcx_statement_recorder", default=None)


def read(ref: str) -> None:
    """A packet or event this command read (a material)."""
    rec = _current.get()
    if rec is not None:
        rec.materials.add(ref)


def wrote(ref: str) -> None:
    """A packet or event this command wrote (a product)."""
    rec = _current.get()
    if rec is not None:
        rec.products.add(ref)


def acting(agent_id: str) -> None:
    """The agent this command acts as: its key signs the statement."""
    rec = _current.get()
    if rec is not None and rec.agent_id is None:
        rec.agent_id = agent_id


def signed(command: str) -> Callable[[Callable[..., Result]], Callable[..., Result]]:
    """Wrap an op (called with keywords ``ws``, ``clock``, ``wait`` and maybe ``agent_id``) so that
    what it wrote is signed once, at its end."""

    def decorate(op: Callable[..., Result]) -> Callable[..., Result]:
        @functools.wraps(op)
        def run(**kwargs: Any) -> Result:
            if _current.get() is not None:
                return op(**kwargs)  # nested: the outer command states it all
            rec = Recorder(command)
            token = _current.set(rec)
            try:
                result = op(**kwargs)
            except Exception:
                _current.reset(token)
                with contextlib.suppress(Exception):  # the op's own error is the one to report
                    _close(rec, kwargs)  # what it wrote before failing is still its own
                raise
            except BaseException:
                _current.reset(token)
                raise
            _current.reset(token)
            try:
                _close(rec, kwargs)
            except DcxError as exc:
                result.warnings.append(
                    f"statement not written ({exc.code}: {exc.message}); what this command wrote "
                    "is unsigned until it runs again"
                )
            return result

        return run

    return decorate


def _close(rec: Recorder, kwargs: dict[str, Any]) -> None:
    if not rec.products:
        return
    ws: Workspace = kwargs["ws"]
    agent = rec.agent_id or _fallback_agent(ws, kwargs.get("agent_id"))
    if agent is None:
        return  # no agent to sign for: the products stay unsigned
    clock: Clock | None = kwargs.get("clock")
    if clock is None:
        from dcx.core.clock import clock_from_env

        clock = clock_from_env(None)
    append(ws, rec, agent, clock.now(), wait=kwargs.get("wait", 5.0))


def _fallback_agent(ws: Workspace, explicit: str | None) -> str | None:
    """The agent of a command that names none itself (redact): --agent-id, else the only enabled one."""
    from dcx.core.public import TOKEN_RE
    from dcx.state.profile import load_profile, resolve_agent

    try:
        profile = load_profile(ws)
    except DcxError:
        profile = None
    agent = resolve_agent(profile, explicit)
    return agent if agent is not None and TOKEN_RE.fullmatch(agent) else None


def build(
    ws: Workspace,
    signer: Any,
    command: str,
    observed_at: str,
    materials: set[str],
    products: set[str],
) -> dict[str, Any]:
    statement: dict[str, Any] = {
        "schema_version": SCHEMA,
        "agent_id": signer.agent_id,
        "key_id": signer.key_id,
        "command": command,
        "observed_at": observed_at,
        "goal_id": ws.goal_id,
        "materials": sorted(materials - products),
        "products": sorted(products),
    }
    statement["signature"] = signer.sign(statement)
    return statement


def line_of(statement: dict[str, Any]) -> bytes:
    return json.dumps(statement, sort_keys=True, ensure_ascii=False).encode()


def append(
    ws: Workspace, rec: Recorder, agent_id: str, now: str, *, wait: float = 5.0
) -> dict[str, Any]:
    from dcx.state.signatures import Cache
    from dcx.state.signers import ensure_signer

    signer, _ = ensure_signer(ws, agent_id, now=now, wait=wait)
    statement = build(ws, signer, rec.command, now, rec.materials, rec.products)
    line = line_of(statement)
    display = ws.rel(ws.statements)
    try:
        locked_append(
            ws.statements, lambda _lines: line, wait=wait, display=display, tail_only=True
        )
    except Refused as exc:
        if exc.code != "torn_log":
            raise
        # a command killed while it appended its own statement: that statement is lost
        # with it (its products are unsigned until they are written again), and the
        # fragment goes where `verify --repair` puts it, so this one is not lost too
        set_aside_torn_tail(ws.statements, ws.log_dir, wait=wait, display=display)
        locked_append(
            ws.statements, lambda _lines: line, wait=wait, display=display, tail_only=True
        )
    Cache(ws).remember_own(line, signer)  # `dcx log` shows it signed without verifying it again
    return statement


def stated(ws: Workspace, ref: str) -> bool:
    """Whether a whole line of the statement log names ``ref`` among its products (signed or not:
    verify judges the signature). A command that finishes what an interrupted one wrote (a replayed
    commit) states those products again when the interrupted command's statement was lost."""
    from dcx.core.fsutil import read_lines

    needle = json.dumps(ref)
    for line in read_lines(ws.statements)[0]:
        if needle not in line:
            continue
        try:
            products = json.loads(line).get("products")
        except (ValueError, AttributeError):
            continue
        if isinstance(products, list) and ref in products:
            return True
    return False


@contextlib.contextmanager
def recording(command: str) -> Iterator[Recorder]:
    """A recorder for code that closes it itself (tests, `dcx key revoke`)."""
    rec = Recorder(command)
    token = _current.set(rec)
    try:
        yield rec
    finally:
        _current.reset(token)
