"""Who signed what: every statement checked against the signers in the tree (SPEC §18).

A statement (one line of ``statements.jsonl``) is *signed* when it is well
formed, belongs to this goal, names a key that a signer file of the same
agent holds, its Ed25519 signature verifies over the RFC 8785 bytes of the
statement without ``signature``, and no revocation withdraws it. Otherwise
it is ``bad_signature``, ``unknown_signer`` or ``revoked_signer``; a line
that is not a statement at all, one of another goal or one from the future
is a problem of its own and speaks for nothing.

A packet or event is then:

- ``signed`` (by agent, key) — a signed statement names it as a product and
  its own ``agent_id`` (when it has one) is that statement's agent;
- ``signer_mismatch`` — signed statements name it, but none by its agent;
- ``bad_signature`` / ``unknown_signer`` / ``revoked_signer`` — only failed
  statements name it;
- ``unsigned`` — no statement names it (written before signed statements,
  or by hand).

A redaction stub counts only the statement of the ``redact`` that wrote it.

Checking costs a signature verification per statement, so the passes are
remembered in a private cache (``private/cache/statements-verified.txt``),
keyed by the statement's bytes and the bytes of its signer file and of that
key's revocation: an edited line, a replaced signer file or a new revocation
makes another key and is checked again. `dcx log` reads only that cache (it
never imports the crypto library): a statement not in it is ``unchecked``
until `dcx verify` runs; the writing commands add their own statements.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dcx.core.canonical import canonical_bytes
from dcx.core.fsutil import read_lines
from dcx.core.public import TOKEN_RE
from dcx.core.workspace import Workspace
from dcx.packets.signatures import STATEMENT, STATEMENT_SCHEMA

if TYPE_CHECKING:
    from dcx.state.signers import LocalSigner, Tree

SIGNED = "signed"
UNSIGNED = "unsigned"
UNCHECKED = "unchecked"  # `dcx log` only: not verified on this host yet
FAILURES = ("bad_signature", "unknown_signer", "revoked_signer", "signer_mismatch")
FUTURE_SKEW_SECONDS = 300  # hosts' clocks differ; a statement later than this after now is refused


class Line:
    """One distinct line of ``statements.jsonl``."""

    __slots__ = ("number", "problem", "raw", "statement", "verdict")

    def __init__(self, number: int, raw: str) -> None:
        self.number = number
        self.raw = raw
        self.statement: dict[str, Any] | None = None
        self.problem: tuple[str, str] | None = None  # (code, message): the line speaks for nothing
        self.verdict: str | None = None


def _shape(value: Any) -> str | None:
    """Why ``value`` is not a ``dcx_statement_v0`` exactly as it was signed, or None."""
    from dcx.core.errors import DcxError

    try:
        checked = STATEMENT.check(value)
    except DcxError as exc:
        return exc.message
    if checked != value:
        return "not in its canonical form (lists sorted and unique, times normalised)"
    return None


class Cache:
    """The statements that verified on this host (see the module docstring); optional, private."""

    NAME = "statements-verified.txt"

    def __init__(self, ws: Workspace) -> None:
        from blake3 import blake3

        from dcx import __version__

        self.ws = ws
        self.blake3 = blake3
        self.path = ws.cache / self.NAME
        self.enabled = ws.private.is_dir()
        self.salt = f"{__version__}\0{ws.goal_id}\0".encode()
        self._known: set[str] | None = None  # read on first use: a writer only appends
        self.new: set[str] = set()

    @property
    def known(self) -> set[str]:
        if self._known is None:
            self._known = set()
            if self.enabled:
                with contextlib.suppress(OSError, UnicodeDecodeError):
                    self._known = set(self.path.read_text(encoding="ascii").split())
        return self._known

    def key(self, raw: bytes, signer_file: bytes, revocation: bytes) -> str:
        hasher = self.blake3(self.salt)
        for part in (raw, signer_file, revocation):
            hasher.update(len(part).to_bytes(8, "big"))
            hasher.update(part)
        return hasher.hexdigest(16)

    def passed(self, key: str) -> bool:
        return key in self.known or key in self.new

    def add(self, key: str) -> None:
        if self.enabled and key not in self.known:
            self.new.add(key)

    def save(self) -> None:
        """Rewrite the cache with what this run verified (the last writer wins; a lost entry costs a re-check)."""
        if not self.new:
            return
        from dcx.core.fsutil import atomic_write

        try:
            self.path.parent.mkdir(mode=0o700, exist_ok=True)
            atomic_write(
                self.path, "\n".join(sorted(self.known | self.new)).encode() + b"\n", mode=0o600
            )
        except OSError:
            pass  # a cache that cannot be written is simply not kept

    def remember_own(self, line: bytes, signer: LocalSigner) -> None:
        """A statement this host just signed: appended to the cache (no fsync: it is only a cache),
        unless its signer file is not exactly the one this key makes, or the key is revoked."""
        from dcx.core.canonical import pretty_bytes
        from dcx.state.signers import public_path, revocation_path, signer_document

        if not self.enabled:
            return
        pub = public_path(self.ws, signer.agent_id, signer.key_id)
        try:
            data = pub.read_bytes()
        except OSError:
            return
        if revocation_path(self.ws, signer.agent_id, signer.key_id).exists():
            return
        try:  # Ed25519 is deterministic: the valid file is the one this key writes again
            expected = pretty_bytes(
                signer_document(self.ws, signer, json.loads(data)["created_at"])
            )
        except (ValueError, KeyError, TypeError):
            return
        if expected != data:
            return
        try:
            self.path.parent.mkdir(mode=0o700, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, (self.key(line, data, b"") + "\n").encode())
            finally:
                os.close(fd)
        except OSError:
            pass


class Book:
    """The statements of one workspace, indexed by product, judged all at once on first use.

    ``check=False`` (`dcx log`): nothing is verified, the cache answers or the verdict is
    ``unchecked``; the crypto library is never imported. With ``check``, a line the cache
    does not know is checked whole — shape, goal, time, signer, signature, revocation —
    and the signatures are verified on two threads when there are many (the library
    releases the GIL while it verifies).
    """

    PARALLEL_FROM = 64  # statements to verify: below this a second thread costs more than it saves

    def __init__(self, ws: Workspace, *, check: bool = True, now: str | None = None) -> None:
        self.ws = ws
        self.check = check
        self.limit = _limit(now) if now is not None else None
        self.lines: list[Line] = []
        self.torn = False
        self.by_product: dict[str, list[Line]] = {}
        self.cache = Cache(ws)
        self._tree: Tree | None = None
        self._judged = False
        self._files: dict[tuple[str, str], tuple[bytes, bytes] | None] = {}
        raw_lines, self.torn = read_lines(ws.statements)
        seen: set[str] = set()
        for number, raw in enumerate(raw_lines, start=1):
            if raw in seen:
                continue  # an identical duplicate (a union merge brought it twice) counts once
            seen.add(raw)
            line = Line(number, raw)
            self.lines.append(line)
            try:
                value = json.loads(raw)
            except ValueError:
                line.problem = ("statement_malformed", "not JSON (a truncated or edited line?)")
                continue
            if not isinstance(value, dict):
                line.problem = ("statement_malformed", f"not a {STATEMENT_SCHEMA}: not an object")
                continue
            line.statement = value  # checked whole by judge() unless the cache knows it
            products = value.get("products")
            for ref in products if isinstance(products, list) else ():
                if isinstance(ref, str):
                    self.by_product.setdefault(ref, []).append(line)

    @property
    def tree(self) -> Tree:
        if self._tree is None:
            from dcx.state.signers import read_tree

            self._tree = read_tree(self.ws, self.cache)
        return self._tree

    def _signer_files(self, agent: Any, key: Any) -> tuple[bytes, bytes] | None:
        """(signer file bytes, revocation bytes or b"") of ``key``, if a signer file of ``agent`` holds it."""
        if not (isinstance(agent, str) and isinstance(key, str)):
            return None
        if (agent, key) not in self._files:
            found: tuple[bytes, bytes] | None = None
            if self.check:
                signer = self.tree.signers.get(key)
                if signer is not None and signer.agent_id == agent:
                    revoked = self.tree.revoked(key)
                    found = (signer.data, revoked.data if revoked else b"")
            elif TOKEN_RE.fullmatch(agent) and TOKEN_RE.fullmatch(key):
                from dcx.state.signers import public_path, revocation_path

                data = _bytes(public_path(self.ws, agent, key))
                if data:
                    found = (data, _bytes(revocation_path(self.ws, agent, key)))
            self._files[(agent, key)] = found
        return self._files[(agent, key)]

    def judge(self) -> None:
        """Every line's verdict (or problem)."""
        if self._judged:
            return
        self._judged = True
        pending: list[tuple[Line, str]] = []
        for line in self.lines:
            st = line.statement
            if st is None:
                continue
            files = self._signer_files(st.get("agent_id"), st.get("key_id"))
            cache_key = self.cache.key(line.raw.encode(), *files) if files else ""
            if cache_key and self.cache.passed(cache_key):
                line.verdict = SIGNED  # this very line passed every check here before
            elif not self.check:
                line.verdict = UNCHECKED
            elif self._problem(line, st) is None:
                if files is None:
                    line.verdict = "unknown_signer"
                else:
                    pending.append((line, cache_key))
        self._verify(pending)

    def _problem(self, line: Line, st: dict[str, Any]) -> tuple[str, str] | None:
        why = _shape(st)
        if why is not None:
            line.problem = ("statement_malformed", f"not a {STATEMENT_SCHEMA}: {why}")
        elif st["goal_id"] != self.ws.goal_id:
            line.problem = ("statement_other_goal", f"a statement of goal {st['goal_id']}")
        elif self.limit is not None and _parse(st["observed_at"]) > self.limit:
            line.problem = (
                "statement_from_future",
                f"observed_at {st['observed_at']} is after now",
            )
        return line.problem

    def _verify(self, pending: list[tuple[Line, str]]) -> None:
        if not pending:
            return
        from dcx.core import signing

        checks = {}  # key id -> its verifier, the public key parsed once
        for line, _ in pending:
            key_id = (line.statement or {})["key_id"]
            if key_id not in checks:
                checks[key_id] = signing.verifier(self.tree.signers[key_id].public)

        def run(part: list[tuple[Line, str]]) -> list[bool]:
            results = []
            for line, _ in part:
                st = line.statement or {}
                body = canonical_bytes({k: v for k, v in st.items() if k != "signature"})
                results.append(checks[st["key_id"]](st["signature"], body))
            return results

        if len(pending) >= self.PARALLEL_FROM and (os.cpu_count() or 1) > 1:
            # the library releases the GIL while it verifies: half on a second thread, as one
            # task (a task per signature would cost a third of a verification each)
            from concurrent.futures import ThreadPoolExecutor

            half = len(pending) // 2
            with ThreadPoolExecutor(max_workers=1) as pool:
                later = pool.submit(run, pending[half:])
                results = run(pending[:half]) + later.result()
        else:
            results = run(pending)
        for (line, cache_key), ok in zip(pending, results, strict=True):
            st = line.statement or {}
            revoked = self.tree.revoked(st["key_id"])
            if not ok:
                line.verdict = "bad_signature"
            elif revoked is not None and revoked.withdraws(st["observed_at"]):
                line.verdict = "revoked_signer"
            else:
                line.verdict = SIGNED
                self.cache.add(cache_key)

    def statement_verdict(self, line: Line) -> str:
        """``signed``, a failure code, or (without ``check``) ``unchecked``."""
        self.judge()
        return line.verdict or UNCHECKED

    def verdict(self, ref: str, agent_id: str | None, *, redacted: bool = False) -> dict[str, Any]:
        """The verdict on one packet or event: ``{verdict, signer_agent_id?, key_id?}``."""
        self.judge()
        naming = [ln for ln in self.by_product.get(ref, []) if ln.problem is None]
        if redacted:
            naming = [ln for ln in naming if (ln.statement or {}).get("command") == "redact"]
        if not naming:
            return {"verdict": UNSIGNED}
        judged = [(ln, ln.verdict or UNCHECKED) for ln in naming]
        good = [ln for ln, v in judged if v == SIGNED]
        for ln in good:
            st = ln.statement or {}
            if agent_id is None or st.get("agent_id") == agent_id:
                return {
                    "verdict": SIGNED,
                    "signer_agent_id": st["agent_id"],
                    "key_id": st["key_id"],
                }
        if good:
            st = good[0].statement or {}
            return {
                "verdict": "signer_mismatch",
                "signer_agent_id": st["agent_id"],
                "key_id": st["key_id"],
            }
        verdicts = {v for _, v in judged}
        for code in (UNCHECKED, "revoked_signer", "bad_signature", "unknown_signer"):
            if code in verdicts:
                st = next(ln for ln, v in judged if v == code).statement or {}
                return {
                    "verdict": code,
                    "signer_agent_id": st.get("agent_id"),
                    "key_id": st.get("key_id"),
                }
        return {"verdict": UNSIGNED}  # not reached


SIGNATURE_COUNTS = ("signed", "unsigned", "failed")


def signature_counts(ws: Workspace, items: list[tuple[str, Any]]) -> dict[str, int]:
    """How many of ``items`` ((ref, agent_id) of packets read) are signed, unsigned or failed
    (`dcx report`; the statements' passes are cached as `dcx verify` caches them)."""
    counts = dict.fromkeys(SIGNATURE_COUNTS, 0)
    if not items:
        return counts
    book = Book(ws, check=True)
    for ref, agent in items:
        verdict = book.verdict(ref, agent if isinstance(agent, str) else None)["verdict"]
        counts[
            "signed" if verdict == SIGNED else "unsigned" if verdict == UNSIGNED else "failed"
        ] += 1
    book.cache.save()
    return counts


def _bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


def _parse(ts: str) -> Any:
    from dcx.core.clock import parse_ts

    return parse_ts(ts)


def _limit(now: str) -> Any:
    """The latest time a statement may carry: the later of ``now`` (the command's clock) and the
    system clock, plus the skew hosts' clocks may have. A statement cannot be made after now."""
    from datetime import UTC, datetime, timedelta

    return max(_parse(now), datetime.now(UTC)) + timedelta(seconds=FUTURE_SKEW_SECONDS)


def required(ws: Workspace) -> bool:
    """``require_signatures = true`` in ``workspace.toml`` (public: every host and reviewer sees it)."""
    from dcx.core.errors import DcxError

    try:
        value = ws.settings.get("require_signatures")
    except (DcxError, OSError):
        return False  # a damaged workspace.toml is Workspace.goal_id's to report
    if value is not None and not isinstance(value, bool):
        from dcx.core.errors import InvalidInput

        raise InvalidInput(
            "workspace.toml: require_signatures must be true or false",
            field="require_signatures",
            code="workspace_invalid",
        )
    return value is True


def require_chain(ws: Workspace, chain: dict[str, Any], enabled_agents: Any) -> None:
    """With ``require_signatures``, refuse (exit 1, ``chain_unsigned``) a chain whose stored packets
    (evidence, proposal, outcome, review) are not each signed by an agent the profile enables:
    `dcx commit` and `dcx review` call it before anything is written (SPEC §18)."""
    if not required(ws):
        return
    from dcx.core.errors import Refused

    book: Book | None = None
    for kind in ("evidence", "proposal", "outcome", "review"):
        packet = chain.get(kind)
        if not packet:
            continue
        ref = packet["packet_ref"]
        if not (ws.packets / kind / f"{ref}.json").exists():
            continue  # being written by this very command (the review of `dcx review`)
        book = book or Book(ws, check=True)
        verdict = book.verdict(ref, packet.get("agent_id"))
        signer = verdict.get("signer_agent_id")
        why = None
        if verdict["verdict"] != SIGNED:
            why = verdict["verdict"]
        elif signer not in enabled_agents:
            why = f"signed by {signer}, whom the profile does not enable"
        if why is not None:
            raise Refused(
                f"require_signatures: the chain's {kind} {ref} is not signed by an enabled agent ({why})",
                code="chain_unsigned",
                hint="`dcx verify --require-signatures` lists what is unsigned; an enabled agent "
                "prepares, proposes or records it again",
            )
    if book is not None:
        book.cache.save()
